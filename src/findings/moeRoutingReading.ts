/**
 * TensorRT-LLM's reading of a normal (base) vs ENABLE_PERFECT_ROUTER=1 (head) pair of runs: made
 * by compare (`readMoeRouting`, from the two runs' summaries), read by the `moe-routing` finding.
 */
export interface MoeRoutingReading {
  baseMoeNs: number;
  headMoeNs: number;
  moeChange: number | null;
  baseGpuBusyNs: number;
  headGpuBusyNs: number;
  /** (base - head) / base of GPU busy per iteration: positive = head faster. */
  speedup: number;
  significant: boolean;
  reading: string;
}
