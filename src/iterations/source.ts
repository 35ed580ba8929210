import type { ExportHandle } from '../../queries/handle.js';
import type { LabelCounts } from './rangeSpec.js';
import type { FoundIterationRanges } from './windows.js';

/** The serving engine whose markers an export carries. */
export type Engine = 'tensorrt-llm' | 'vllm' | 'unknown';

export type IterationSourceId = 'trtllm-pytorch' | 'trtllm-cpp' | 'vllm' | 'nvtx-range' | 'log-timestamps';

/**
 * One way an engine marks its iterations in an export: which NVTX ranges, what their text says,
 * and how a profile range `A-B` maps to captured iterations. `findIterationRanges` (sources/index.ts)
 * tries the default sources in order; `--iteration-range` builds an `nvtxRangeSource`.
 */
export interface IterationSource {
  readonly id: IterationSourceId;
  readonly engine: Engine;
  /** PyTorch executors capture A..B-1 of TLLM_PROFILE_START_STOP=A-B, the C++ one A..B. */
  readonly profileRangeSemantics: 'half-open' | 'closed';
  /** The ranges that mark iterations in this export (per process, executor thread); empty when none. */
  findRanges(handle: ExportHandle): FoundIterationRanges;
  /** Batch composition carried by a range's text (log alignment; phases without a log). */
  parseLabel(text: string): LabelCounts | null;
  /** Whether an NVTX text is one of this source's markers: a cheap existence probe for `detectEngine`. */
  matchesText?(text: string): boolean;
}
