/**
 * vLLM's iteration-details log (`--enable-logging-iteration-details`, formerly
 * `VLLM_LOG_ITERATION_DETAILS`): one line per engine step, usually behind the engine-core
 * process prefix, e.g.
 *
 *   (EngineCore_DP0 pid=638) INFO 11-23 06:19:01 [core.py:349] Iteration(515): 0 context requests,
 *   0 context tokens, 20 generation requests, 20 generation tokens, iteration elapsed time: 10.99 ms
 *
 * `Iteration(N)` counts the steps of one engine core (one per DP rank), starting at 0, in the
 * same order as the `execute_context_...` NVTX ranges of its workers: N is the step, no offset.
 * The prefix's `EngineCore_DPk` gives the DP rank; its `MM-DD HH:MM:SS` time has no year, so it
 * is kept as text only.
 */
import { emptyMetrics, type Normalized } from './logRecords.js';

/** `Iteration(N):` not preceded by a word character. */
export const VLLM_ITERATION_RE = /(?<!\w)Iteration\((\d+)\):/;

const FIELD_RES = {
  contextRequests: /(?:^|,)\s*(\d+) context requests(?=,|$)/,
  contextTokens: /(?:^|,)\s*(\d+) context tokens(?=,|$)/,
  generationRequests: /(?:^|,)\s*(\d+) generation requests(?=,|$)/,
  generationTokens: /(?:^|,)\s*(\d+) generation tokens(?=,|$)/,
} as const;
/** The last field: without it (and its unit) the line was cut off. */
const ELAPSED_RE = /(?:^|,)\s*iteration elapsed time: (\d+(?:\.\d+)?) ms\s*$/;
const PREFIX_RE = /\((?:EngineCore|EngineCoreProc)(?:_DP(\d+))?\s+pid=(\d+)\)/;
const PREFIX_TIME_RE = /\b(?:DEBUG|INFO|WARNING|ERROR)\s+(\d{2}-\d{2} \d{2}:\d{2}:\d{2})/;

/** `Iteration(N): ...` payload (from `Iteration(`) plus the line's prefix -> a record, or why not. */
export function normalizeVllmIterationLine(prefix: string, payload: string): { normalized: Normalized; raw: Record<string, unknown> } {
  const head = /^Iteration\((\d+)\):\s*/.exec(payload);
  if (!head) return { normalized: { ok: false, reason: 'not a vLLM Iteration(N) line' }, raw: {} };
  const iter = Number(head[1]);
  const body = payload.slice(head[0].length);
  const raw: Record<string, unknown> = { iteration: iter };
  const metrics = emptyMetrics();
  for (const [key, re] of Object.entries(FIELD_RES) as [keyof typeof FIELD_RES, RegExp][]) {
    const m = re.exec(body);
    if (m) {
      metrics[key] = Number(m[1]);
      raw[key] = Number(m[1]);
    }
  }
  const elapsed = ELAPSED_RE.exec(body);
  if (!elapsed) return { normalized: { ok: false, reason: 'truncated vLLM iteration line (no "iteration elapsed time: X ms" at the end)' }, raw };
  const missing = (Object.keys(FIELD_RES) as (keyof typeof FIELD_RES)[]).filter((k) => metrics[k] === null);
  if (missing.length) return { normalized: { ok: false, reason: `vLLM iteration line without ${missing.join(', ')}` }, raw };
  metrics.latencyMs = Number(elapsed[1]);
  raw.elapsedMs = metrics.latencyMs;
  const p = PREFIX_RE.exec(prefix);
  if (p) {
    metrics.rank = p[1] === undefined ? null : Number(p[1]);
    raw.dpRank = metrics.rank;
    raw.pid = Number(p[2]);
  }
  const t = PREFIX_TIME_RE.exec(prefix);
  if (t) metrics.timestamp = t[1];
  return { normalized: { ok: true, iter, sourceIter: iter, metrics }, raw };
}
