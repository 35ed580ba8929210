import type { LabelCounts, PhaseTokenDetail } from '../rangeSpec.js';
import type { IterationSource } from '../source.js';
import { collectRanges } from '../windows.js';

/**
 * vLLM's `GPUWorker.annotate_profile` range around each model step (default domain, push/pop,
 * emitted while the CUDA profiler is on; a torch `user_annotation` span with the torch profiler).
 * vLLM has written four forms (vllm/v1/worker/gpu_worker.py):
 * - `execute_new_{new reqs}_cached_{cached reqs}` (commit 35d5cda1, 2025);
 * - `execute_context_{ctx reqs}({ctx tokens})_generation_{gen reqs}({gen tokens})`;
 * - the same with token fields that carry more than one number, `(888_788544)`: the first is the
 *   token count (there the second is its square, a compute proxy);
 * - with `profiler_config.detailed_trace_annotation`:
 *   `execute_{scheduled tokens}_context_{n}(sq{q}sk{kv}sqsq{qq}sqsk{qk})_generation_{m}(sq..sk..sqsq..sqsk..)`,
 *   where per phase `sq` sums the scheduled (query) tokens, `sk` the sequence (KV) lengths,
 *   `sqsq` query_len^2 and `sqsk` query_len*seq_len.
 */
export const VLLM_EXECUTE_STEP = /^execute_(?:(\d+)_)?context_(\d+)\(([^()]*)\)_generation_(\d+)\(([^()]*)\)$/;
/** Older vLLM releases: `execute_new_{new reqs}_cached_{cached reqs}` (request counts only). */
export const VLLM_EXECUTE_STEP_OLD = /^execute_new_(\d+)_cached_(\d+)$/;
/**
 * The family: any range whose text starts with `execute_` and carries a number is a vLLM step,
 * even in a form not parsed above (its batch is then unknown). `execute_model` and other bare
 * names are the runner's own sections, not steps.
 */
export const VLLM_STEP_FAMILY = /^execute_[^\s]*\d/;

/** The detailed annotation's phase field, `sq{q}sk{kv}sqsq{qq}sqsk{qk}`. */
const DETAILED_FIELD = /^sq(\d+)sk(\d+)sqsq(\d+)sqsk(\d+)$/;
/** A plain token field: one number, or several joined by `_` (the first is the token count). */
const PLAIN_FIELD = /^(\d+)(?:_\d+)*$/;

export function isVllmStepLabel(text: string): boolean {
  return VLLM_STEP_FAMILY.test(text);
}

/** One phase's token field: the detailed numbers, or the token count alone; null when neither parses. */
function phaseField(field: string): { tokens: number; detail: PhaseTokenDetail | null } | null {
  const d = DETAILED_FIELD.exec(field);
  if (d) {
    const detail = { queryTokens: Number(d[1]), kvTokens: Number(d[2]), qqCompute: Number(d[3]), qkCompute: Number(d[4]) };
    return { tokens: detail.queryTokens, detail };
  }
  const p = PLAIN_FIELD.exec(field);
  return p ? { tokens: Number(p[1]), detail: null } : null;
}

/**
 * Counts of a vLLM step label. The old form counts newly scheduled requests (their first prefill
 * chunk) and already-running ones; a running request may still be prefilling (chunked prefill),
 * so there `generationRequests` is an upper bound and tokens are unknown. A token field that does
 * not parse leaves that phase's tokens null; a text of the family in no known form gives null.
 */
export function parseVllmStepLabel(text: string): LabelCounts | null {
  const m = VLLM_EXECUTE_STEP.exec(text);
  if (m) {
    const ctx = phaseField(m[3]);
    const gen = phaseField(m[5]);
    const label: LabelCounts = { iter: null, contextRequests: Number(m[2]), contextTokens: ctx?.tokens ?? null, generationRequests: Number(m[4]), generationTokens: gen?.tokens ?? null };
    if (m[1] !== undefined || ctx?.detail || gen?.detail) {
      label.detail = { scheduledTokens: m[1] === undefined ? null : Number(m[1]), context: ctx?.detail ?? null, generation: gen?.detail ?? null };
    }
    // A field that did not parse, or one that carried more numbers than its token count.
    if (!ctx || !gen || (!ctx.detail && m[3].includes('_')) || (!gen.detail && m[5].includes('_'))) label.partial = true;
    return label;
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
  labelsExpected: true,
  findRanges(loaded) {
    return collectRanges(loaded, this, isVllmStepLabel);
  },
  matchesText: isVllmStepLabel,
  parseLabel: parseVllmStepLabel,
};
