/**
 * Legacy `gptManagerBenchmark --log_iteration_data` records (GptManager API, ~v0.5–v0.12):
 *
 *   [TensorRT-LLM][INFO] {"Active Request Count":249,"Context Requests":8,...,"Iteration Counter":90,...}
 *
 * GptManager increments its counter before it builds the stats, so `"Iteration Counter": K`
 * describes the batch launched while the counter was K-1: `iter = K - 1`.
 * (trtllm.md §1.1; `GptManager::decoupled_execution_loop`.) Not every server did: the Triton
 * backend of 2023 printed `"Iteration Counter":0` for its first batch (tensorrtllm_backend issue
 * #217). So no record is dropped for its counter: a 0 is kept as iteration -1, and the join finds
 * the log's offset (`alignLogCounters`: a counter of 0, or the batch compositions of the NVTX labels).
 */
import { emptyMetrics, type IterationMetrics, type Normalized } from './logRecords.js';
import { parseLogTimestamp } from './timestamps.js';
import { toCount, toNumber, toText } from './values.js';

export const LEGACY_COUNTER_KEY = 'Iteration Counter';

/** True when the object has the legacy counter key (the one key every legacy record carries). */
export function isLegacyObject(obj: Record<string, unknown>): boolean {
  return Object.prototype.hasOwnProperty.call(obj, LEGACY_COUNTER_KEY);
}

/**
 * The Triton `tensorrtllm_backend` prints the executor's IterationStats with the legacy keys
 * (`ModelInstanceState::WaitForStats`), adding keys gptManagerBenchmark never wrote.
 */
const TRITON_ONLY_KEYS = ['Waiting Requests', 'Request count', 'KV cache transfer time', 'Fraction used KV cache blocks'];

export function isTritonStatsObject(obj: Record<string, unknown>): boolean {
  return isLegacyObject(obj) && TRITON_ONLY_KEYS.some((k) => Object.prototype.hasOwnProperty.call(obj, k));
}

export function normalizeLegacy(obj: Record<string, unknown>): Normalized {
  const counter = toCount(obj[LEGACY_COUNTER_KEY]);
  if (counter === null) return { ok: false, reason: `"${LEGACY_COUNTER_KEY}" is not a non-negative integer` };
  return { ok: true, iter: counter - 1, sourceIter: counter, metrics: legacyMetrics(obj) };
}

/** Triton's "Iteration Counter" is the executor's `IterationStats.iter`: the loop itself, no offset. */
export function normalizeTritonStats(obj: Record<string, unknown>): Normalized {
  const counter = toCount(obj[LEGACY_COUNTER_KEY]);
  if (counter === null) return { ok: false, reason: `"${LEGACY_COUNTER_KEY}" is not a non-negative integer` };
  return { ok: true, iter: counter, sourceIter: counter, metrics: legacyMetrics(obj) };
}

function legacyMetrics(obj: Record<string, unknown>): IterationMetrics {
  const timestamp = toText(obj['Timestamp']);
  const metrics = emptyMetrics();
  // V1 (static batching) models print "Context Requests" = scheduled count and
  // "Total Generation Tokens" instead of "Generation Requests".
  metrics.contextRequests = toCount(obj['Context Requests']);
  metrics.contextTokens = toCount(obj['Total Context Tokens']);
  metrics.generationRequests = toCount(obj['Generation Requests']);
  metrics.generationTokens = toCount(obj['Total Generation Tokens']);
  metrics.scheduledRequests = toCount(obj['Scheduled Requests']);
  metrics.activeRequests = toCount(obj['Active Request Count']);
  metrics.pausedRequests = toCount(obj['Paused Requests']);
  metrics.kvBlocksUsed = toCount(obj['Used KV cache blocks']);
  metrics.kvBlocksFree = toCount(obj['Free KV cache blocks']);
  metrics.kvBlocksMax = toCount(obj['Max KV cache blocks']);
  metrics.gpuMemBytes = toNumber(obj['Runtime GPU Memory Usage']);
  metrics.timestamp = timestamp;
  metrics.timestampMs = timestamp === null ? null : parseLogTimestamp(timestamp);
  return metrics;
}
