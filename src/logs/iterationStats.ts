/**
 * `IterationStats` objects (camelCase keys), whether they arrived as JSON (C++ executor log
 * lines, `trtllm-serve /metrics` arrays) or as Python reprs (`trtllm-bench --iteration_log`).
 * Both go through this one normaliser once parsed. (trtllm.md §1.2, §1.3.)
 *
 * Iteration numbering:
 * - PyTorch backend: `iter` N is stamped when the batch is built and equals the NVTX label
 *   `_forward_step N`, so `iter = sourceIter`.
 * - C++ executor: `iter` N also names the batch launched in loop N (`inflightBatchingStats`),
 *   but its `iterLatencyMS` and `numCompletedRequests` were measured for loop N-1 (the first
 *   record has `iterLatencyMS: 0`). We keep `iter = sourceIter` for the batch composition and
 *   leave the lag to the caller; nothing in the object says reliably which producer wrote it.
 */
import { emptyMetrics, type Normalized } from './logRecords.js';
import { parseLogTimestamp } from './timestamps.js';
import { isPlainObject, toCount, toDurationMs, toNumber, toText } from './values.js';

/** True when the object has a top-level `iter` key (what identifies an IterationStats record). */
export function isIterationStatsObject(obj: Record<string, unknown>): boolean {
  return Object.prototype.hasOwnProperty.call(obj, 'iter');
}

export function normalizeIterationStats(obj: Record<string, unknown>): Normalized {
  const iter = toCount(obj.iter);
  if (iter === null) return { ok: false, reason: '"iter" is not a non-negative integer' };
  const ifb = isPlainObject(obj.inflightBatchingStats) ? obj.inflightBatchingStats : null;
  const stat = isPlainObject(obj.staticBatchingStats) ? obj.staticBatchingStats : null;
  const kv = isPlainObject(obj.kvCacheStats) ? obj.kvCacheStats : null;
  // Batch composition: in-flight batching stats first, then static batching, then the flat
  // ForwardPassMetrics keys that newer versions add beside them.
  const batch = ifb ?? stat;
  const timestamp = toText(obj.timestamp);
  const metrics = emptyMetrics();
  metrics.contextRequests = toCount(batch?.numContextRequests) ?? toCount(obj.scheduledNumPrefillRequests);
  metrics.contextTokens = toCount(batch?.numCtxTokens) ?? toCount(obj.scheduledSumPrefillTokens);
  metrics.generationRequests = toCount(ifb?.numGenRequests) ?? toCount(obj.scheduledNumDecodeRequests);
  metrics.generationTokens = toCount(stat?.numGenTokens);
  metrics.scheduledRequests = toCount(batch?.numScheduledRequests);
  metrics.pausedRequests = toCount(ifb?.numPausedRequests);
  metrics.activeRequests = toCount(obj.numActiveRequests);
  metrics.queuedRequests = toCount(obj.numQueuedRequests);
  metrics.completedRequests = toCount(obj.numCompletedRequests);
  metrics.kvBlocksUsed = toCount(kv?.usedNumBlocks);
  metrics.kvBlocksFree = toCount(kv?.freeNumBlocks);
  metrics.kvBlocksMax = toCount(kv?.maxNumBlocks);
  metrics.latencyMs = toDurationMs(obj.iterLatencyMS);
  metrics.hostStepTimeMs = toDurationMs(obj.hostStepTimeMS);
  metrics.prevDeviceStepTimeMs = toDurationMs(obj.prevDeviceStepTimeMS);
  metrics.gpuMemBytes = toNumber(obj.gpuMemUsage);
  // `rank` is only present with TLLM_METRICS_ALL_RANKS=1 (one dict per rank).
  metrics.rank = toCount(obj.rank);
  metrics.timestamp = timestamp;
  metrics.timestampMs = timestamp === null ? null : parseLogTimestamp(timestamp);
  return { ok: true, iter, sourceIter: iter, metrics };
}
