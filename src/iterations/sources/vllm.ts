import type { LabelCounts } from '../rangeSpec.js';
import type { IterationSource } from '../source.js';
import { collectRanges } from '../windows.js';

/**
 * vLLM's `GPUWorker.annotate_profile` range around each model step (default domain, push/pop,
 * emitted while the CUDA profiler is on): `execute_context_{ctx reqs}({ctx tokens})_generation_{gen reqs}({gen tokens})`.
 */
export const VLLM_EXECUTE_STEP = /^execute_context_(\d+)\((\d+)\)_generation_(\d+)\((\d+)\)$/;
/** Older vLLM releases: `execute_new_{new reqs}_cached_{cached reqs}` (request counts only). */
export const VLLM_EXECUTE_STEP_OLD = /^execute_new_(\d+)_cached_(\d+)$/;

function isVllmStepLabel(text: string): boolean {
  return VLLM_EXECUTE_STEP.test(text) || VLLM_EXECUTE_STEP_OLD.test(text);
}

/**
 * Counts of a vLLM step label. The old form counts newly scheduled requests (their first prefill
 * chunk) and already-running ones; a running request may still be prefilling (chunked prefill),
 * so there `generationRequests` is an upper bound and tokens are unknown.
 */
export function parseVllmStepLabel(text: string): LabelCounts | null {
  const m = VLLM_EXECUTE_STEP.exec(text);
  if (m) {
    return { iter: null, contextRequests: Number(m[1]), contextTokens: Number(m[2]), generationRequests: Number(m[3]), generationTokens: Number(m[4]) };
  }
  const old = VLLM_EXECUTE_STEP_OLD.exec(text);
  if (old) return { iter: null, contextRequests: Number(old[1]), contextTokens: null, generationRequests: Number(old[2]), generationTokens: null };
  return null;
}

/**
 * vLLM steps. The ranges carry no iteration number: they are numbered by aligning their batch
 * composition with the log's `Iteration(N)` records, or by `--first-iter`.
 */
export const vllmSource: IterationSource = {
  id: 'vllm',
  engine: 'vllm',
  // `--profile-range A-B` for vLLM names the steps captured, both ends included.
  profileRangeSemantics: 'closed',
  findRanges(loaded) {
    return collectRanges(loaded, this, isVllmStepLabel);
  },
  matchesText: isVllmStepLabel,
  parseLabel: parseVllmStepLabel,
};
