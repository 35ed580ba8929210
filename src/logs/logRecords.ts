/**
 * Record types for TensorRT-LLM, vLLM and SGLang iteration logs.
 *
 * Unrelated on-disk formats (see docs in `detect.ts` and /work/shared/research/trtllm.md §1)
 * are normalized into one `IterationLogRecord`, numbered the way the PyTorch backend numbers its
 * NVTX `[Executor] _forward_step N` ranges, so a record can be joined to an nsys iteration window
 * by `iter` alone.
 */

/** Which on-disk format a record came from. */
export type LogFormat =
  /** `gptManagerBenchmark --log_iteration_data`: `{"Iteration Counter":K,...}` with human-readable keys. */
  | 'legacy-json'
  /** C++ executor / PyTorch `IterationStats` serialized as camelCase JSON (log line or `/metrics` array). */
  | 'iteration-stats-json'
  /** `trtllm-bench --iteration_log`: the same dicts written as Python reprs. */
  | 'iteration-stats-pyrepr'
  /** PyTorch-backend `print_iter_log` text line: `iter = K, global_rank = ..., states = {...}`. */
  | 'pytorch-text'
  /**
   * Triton `tensorrtllm_backend` (`WaitForStats`): the legacy human-readable keys, but the executor's
   * `IterationStats.iter` as "Iteration Counter" (no off-by-one), plus Triton-only keys.
   */
  | 'triton-stats-json'
  /** vLLM `--enable-logging-iteration-details`: `Iteration(N): a context requests, t context tokens, ...`. */
  | 'vllm-iteration-details'
  /** SGLang's scheduler `Prefill batch ...` / `Decode batch ...` lines (`iter`: see `assignSglangLinePositions`). */
  | 'sglang-batch';

/**
 * The measurements a record may carry. Every field is `null` when the source format does not
 * have it (or wrote `N/A`), never a made-up default: a 0 in here was a 0 in the log.
 */
export interface IterationMetrics {
  /** Context (prefill) requests in the batch. */
  contextRequests: number | null;
  /** Prompt tokens processed by the context requests of the batch. */
  contextTokens: number | null;
  /**
   * Generation (decode) requests in the batch. pytorch-text has no such field; it is derived
   * there as `num_scheduled_requests - num_ctx_requests`, which stays right under speculative
   * decoding or beam search where `num_generation_tokens` counts more than one token per request.
   */
  generationRequests: number | null;
  /** Generation tokens (pytorch-text `num_generation_tokens`; static batching `numGenTokens`). */
  generationTokens: number | null;
  scheduledRequests: number | null;
  activeRequests: number | null;
  queuedRequests: number | null;
  pausedRequests: number | null;
  completedRequests: number | null;
  /** PyTorch text log (PR #16323): new requests fetched, attention-DP dummy requests, and active requests left unscheduled this iteration. */
  fetchedRequests: number | null;
  dummyRequests: number | null;
  unscheduledRequests: number | null;
  /** KV tokens already cached for the scheduled sequences (PyTorch text `cached_kv_len`, `states['cached_kv_tokens']`; PR #14734). */
  cachedKvTokens: number | null;
  kvBlocksUsed: number | null;
  kvBlocksFree: number | null;
  kvBlocksMax: number | null;
  /** `iterLatencyMS` (JSON) or `elapsed_time` (text v1), in ms. Spans ~2 loops under the overlap scheduler. */
  latencyMs: number | null;
  /** `hostStepTimeMS` / `host_step_time`: CPU wall time of the loop, in ms. */
  hostStepTimeMs: number | null;
  /** `prevDeviceStepTimeMS` / `prev_device_step_time`, in ms; lags by one loop at the source. */
  prevDeviceStepTimeMs: number | null;
  /** `gpuMemUsage` / `Runtime GPU Memory Usage`, in bytes. */
  gpuMemBytes: number | null;
  /** Rank that wrote the record (`global_rank` in text logs, `rank` in all-ranks stats dicts). */
  rank: number | null;
  /** The timestamp as written in the log. */
  timestamp: string | null;
  /** `timestamp` parsed as local time, ms since the Unix epoch (may carry a sub-ms fraction). */
  timestampMs: number | null;
}

export interface IterationLogRecord extends IterationMetrics {
  /**
   * The executor loop this record describes, in the PyTorch NVTX `_forward_step N` numbering
   * (loop counter before it is incremented). legacy-json and pytorch-text print K for loop K-1,
   * so for them `iter = sourceIter - 1`; the stats formats already use N = N.
   */
  iter: number;
  /** The iteration number exactly as written in the log. */
  sourceIter: number;
  format: LogFormat;
  file: string;
  /** 1-based line number in `file` (for a JSON array file: the line where the element starts). */
  line: number;
  /** The parsed source object; for pytorch-text the `key = value` fields (values as written, `states` parsed). */
  raw: Record<string, unknown>;
}

export interface SkippedLine {
  line: number;
  reason: string;
}

export interface ParsedIterationLog {
  file: string;
  /** Records in file order (duplicates and out-of-order iterations kept as they are). */
  records: IterationLogRecord[];
  /** Lines in the file (a trailing newline does not start another line). */
  linesRead: number;
  /** Non-empty lines that gave no record: logger noise, garbage, truncated JSON, binary bytes. */
  skippedLines: number;
  /** The first `MAX_SKIPPED_SAMPLES` skipped lines with the reason. */
  skippedSamples: SkippedLine[];
  /** Record count per format. */
  formats: Partial<Record<LogFormat, number>>;
  /** `iter` values that occur in more than one record, ascending. */
  duplicateIters: number[];
}

/** One iteration after `recordsByIter` merged what one or more logs say about it. */
export interface MergedIterationRecord extends IterationLogRecord {
  /**
   * The records that were merged, highest priority first (earlier log first). The top-level
   * `format`, `file`, `line`, `sourceIter` and `raw` are those of `sources[0]`.
   */
  sources: IterationLogRecord[];
}

export const MAX_SKIPPED_SAMPLES = 20;

/**
 * Lines longer than this are skipped unread: no record is anywhere near this size, and running
 * regexes or JSON.parse over a 100 MB garbage line would only burn time and memory.
 */
export const MAX_LINE_CHARS = 8 * 1024 * 1024;

/** All-null metrics; also the single list of metric keys (`Object.keys`) that merging walks. */
export function emptyMetrics(): IterationMetrics {
  return {
    contextRequests: null,
    contextTokens: null,
    generationRequests: null,
    generationTokens: null,
    scheduledRequests: null,
    activeRequests: null,
    queuedRequests: null,
    pausedRequests: null,
    completedRequests: null,
    fetchedRequests: null,
    dummyRequests: null,
    unscheduledRequests: null,
    cachedKvTokens: null,
    kvBlocksUsed: null,
    kvBlocksFree: null,
    kvBlocksMax: null,
    latencyMs: null,
    hostStepTimeMs: null,
    prevDeviceStepTimeMs: null,
    gpuMemBytes: null,
    rank: null,
    timestamp: null,
    timestampMs: null,
  };
}

export const METRIC_KEYS = Object.keys(emptyMetrics()) as (keyof IterationMetrics)[];

/**
 * What a format-specific normaliser makes of one parsed object: the iteration numbers and the
 * metrics, or why the object is not a record. `parse.ts` adds file, line, format and raw.
 */
export type Normalized =
  | { ok: true; iter: number; sourceIter: number; metrics: IterationMetrics }
  | { ok: false; reason: string };

/** One `--log` file as the analysis describes it. */
export interface ReportLogFile {
  file: string;
  records: number;
  skippedLines: number;
  formats: Partial<Record<LogFormat, number>>;
}
