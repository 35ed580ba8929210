/**
 * SGLang's per-batch scheduler log lines (research/sglang.md §3; `metrics_reporter.py`, earlier
 * `scheduler_metrics_mixin.py` / `scheduler.py`), behind SGLang's logger prefix:
 *
 *   [2026-11-25 14:51:35] Prefill batch, #new-seq: 4, #new-token: 1984, #cached-token: 0, token usage: 0.12,
 *     #running-req: 0, #queue-req: 60, #pending-token: 0, cuda graph: False, input throughput (token/s): 1656.54
 *   [2026-11-25 14:51:36] Decode batch, #running-req: 16, #token: 5920, token usage: 0.36, cuda graph: True,
 *     gen throughput (token/s): 9.62, #queue-req: 48
 *
 * Every historical form is one shape: `{Prefill|Decode} batch` (` [N]`: the forward-iteration
 * number, SGLANG_LOG_FORWARD_ITERS=1), then `, ` (`. ` before 2025-10) and `key: value` fields
 * joined by `, ` (inserts for speculative decoding, PD, hybrid pools, MFU suffixes; a trailing `, `
 * from 2025-07-06 to 2026-01). The prefix is `[%Y-%m-%d %H:%M:%S{.mmm}{ DPd}{ PPp}{ ATTN_CPc}{ MOE_DPm}{ TPt}{ EPe}]`,
 * under Ray behind `(SGLangEngine pid=N)`.
 *
 * A prefill line describes one EXTEND batch: `#new-seq` requests and `#new-token` uncached prompt
 * tokens; its `#running-req` requests wait (generation requests 0) unless `--enable-mixed-chunk`
 * mixes them in, which the line does not say (a torch trace's `step[MIXED ...]` does). A decode line
 * describes one decode batch of `#running-req` requests, and is printed only every
 * `--decode-log-interval` decode steps (default 40). Lines without ` [N]` carry no step number:
 * `assignSglangLinePositions` numbers them by position (see there).
 */
import { parseLogTimestamp } from './timestamps.js';
import { emptyMetrics, type IterationLogRecord, type Normalized } from './logRecords.js';

/** `Prefill batch` / `Decode batch`, an optional ` [N]`, then `, ` or `. `: where a payload starts. */
export const SGLANG_BATCH_RE = /(?<![\w.])(Prefill|Decode) batch(?: \[(\d+)\])?[,.] /;

/** `[YYYY-mm-dd HH:MM:SS{.mmm}{ rank parts}]` right before the payload. */
const PREFIX_RE = /\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d{1,6})?)((?: (?:DP|PP|ATTN_CP|MOE_DP|TP|EP)\d+)*)\]\s*$/;
/** Ray's actor prefix, `(SGLangEngine pid=35555)`. */
const RAY_PREFIX_RE = /\((\w+) pid=(\d+)\)/;

/** What a prefill or decode line says, beyond the normalized metrics (kept in the record's `raw`). */
export interface SglangBatchLine {
  batch: 'prefill' | 'decode';
  /** ` [N]`: SGLang's forward-iteration number of the step; null without SGLANG_LOG_FORWARD_ITERS=1. */
  forwardIter: number | null;
  /** `#new-seq` / `#new-token` (prefill), `#running-req` (decode). */
  newSeq: number | null;
  newToken: number | null;
  runningReq: number | null;
  /** `#token` of a decode line: KV-cache tokens in use after the step. */
  tokens: number | null;
  /** `cuda graph` (or `cpu graph` / `npu graph` / `musa graph`): whether the step replayed a graph; null when not written. */
  cudaGraph: boolean | null;
  /** `accept len` of a speculative-decoding decode line (averaged over the log interval); null otherwise. */
  acceptLen: number | null;
  /** The logger prefix's rank parts (`DP0 TP1`), '' when none, plus Ray's actor pid: one scheduler's lines. */
  scheduler: string;
  /** Every `key: value` field as written (numbers, booleans and percentages parsed). */
  fields: Record<string, number | boolean | string>;
}

const GRAPH_KEYS = ['cuda graph', 'cpu graph', 'npu graph', 'musa graph'];

/** `key: value` fields split on `, `; a piece without `: ` ends the fields (a message after them). */
function parseFields(body: string): Record<string, number | boolean | string> {
  const out: Record<string, number | boolean | string> = {};
  for (const piece of body.replace(/,\s*$/, '').split(', ')) {
    const colon = piece.indexOf(': ');
    if (colon <= 0) continue;
    const key = piece.slice(0, colon).trim();
    const text = piece.slice(colon + 2).trim();
    if (text === 'True' || text === 'False') out[key] = text === 'True';
    else if (/^-?\d+(?:\.\d+)?%$/.test(text)) out[key] = Number(text.slice(0, -1)) / 100;
    else if (/^-?\d+(?:\.\d+)?(?:e[+-]?\d+)?$/i.test(text)) out[key] = Number(text);
    else out[key] = text;
  }
  return out;
}

/**
 * An integer count, only when a `, ` follows it in the line: a count at the cut end of a truncated
 * line (`#running-req: 1` of `16`) is never read.
 */
function wholeCount(body: string, key: string, fields: Record<string, unknown>): number | null {
  const v = fields[key];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) return null;
  return body.includes(`${key}: ${v}, `) ? v : null;
}

function numberOrNull(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/** The scheduler a line came from: its rank parts and Ray actor, e.g. `DP1 TP0` or `pid 35555 TP0`. */
function schedulerOf(prefix: string): { scheduler: string; ranks: Record<string, number>; timestamp: string | null } {
  const ray = RAY_PREFIX_RE.exec(prefix);
  const p = PREFIX_RE.exec(prefix);
  const parts = p?.[2].trim() ? p[2].trim().split(' ') : [];
  const ranks: Record<string, number> = {};
  for (const part of parts) {
    const m = /^([A-Z_]+)(\d+)$/.exec(part)!;
    ranks[m[1]] = Number(m[2]);
  }
  return { scheduler: [ray ? `pid ${ray[2]}` : '', ...parts].filter(Boolean).join(' '), ranks, timestamp: p?.[1] ?? null };
}

/** A `Prefill batch ...` / `Decode batch ...` payload (from `Prefill`/`Decode`) and the line's prefix -> a record, or why not. */
export function normalizeSglangBatchLine(prefix: string, payload: string): { normalized: Normalized; raw: Record<string, unknown> } {
  const head = SGLANG_BATCH_RE.exec(payload);
  if (!head || head.index !== 0) return { normalized: { ok: false, reason: 'not an SGLang batch line' }, raw: {} };
  const body = payload.slice(head[0].length);
  const fields = parseFields(body);
  const { scheduler, ranks, timestamp } = schedulerOf(prefix);
  const graphKey = GRAPH_KEYS.find((k) => typeof fields[k] === 'boolean');
  const line: SglangBatchLine = {
    batch: head[1] === 'Prefill' ? 'prefill' : 'decode',
    forwardIter: head[2] === undefined ? null : Number(head[2]),
    newSeq: wholeCount(body, '#new-seq', fields),
    newToken: wholeCount(body, '#new-token', fields),
    runningReq: wholeCount(body, '#running-req', fields),
    tokens: wholeCount(body, '#token', fields),
    cudaGraph: graphKey ? (fields[graphKey] as boolean) : null,
    acceptLen: numberOrNull(fields['accept len']),
    scheduler,
    fields,
  };
  const raw: Record<string, unknown> = { sglang: line, ...(Object.keys(ranks).length ? { ranks } : {}) };
  const metrics = emptyMetrics();
  if (line.batch === 'prefill') {
    if (line.newSeq === null || line.newToken === null) return { normalized: { ok: false, reason: 'SGLang prefill line without whole #new-seq and #new-token counts (truncated?)' }, raw };
    metrics.contextRequests = line.newSeq;
    metrics.contextTokens = line.newToken;
    // An EXTEND batch: the running requests wait (see the module comment for --enable-mixed-chunk).
    metrics.generationRequests = 0;
  } else {
    if (line.runningReq === null) return { normalized: { ok: false, reason: 'SGLang decode line without a whole #running-req count (truncated?)' }, raw };
    metrics.contextRequests = 0;
    metrics.contextTokens = 0;
    metrics.generationRequests = line.runningReq;
  }
  metrics.queuedRequests = numberOrNull(fields['#queue-req']);
  metrics.rank = ranks.DP ?? null;
  if (timestamp) {
    metrics.timestamp = timestamp;
    metrics.timestampMs = parseLogTimestamp(timestamp);
  }
  // Without ` [N]` the number is the line's position, set for the whole log by `assignSglangLinePositions`.
  const iter = line.forwardIter ?? 0;
  return { normalized: { ok: true, iter, sourceIter: iter, metrics }, raw };
}

/** The SGLang fields of a record parsed from a batch line; null for any other record. */
export function sglangLineOf(record: Pick<IterationLogRecord, 'format' | 'raw'>): SglangBatchLine | null {
  return record.format === 'sglang-batch' ? (record.raw.sglang as SglangBatchLine) : null;
}

/**
 * SGLang lines without ` [N]` get, as `iter`, their position among the lines of their scheduler in
 * this log (0, 1, 2, ...): the step number only when the log holds a line for every step since the
 * server started (`--decode-log-interval 1`); the iteration sources align them with the capture
 * before trusting that. A line without ` [N]` in a log whose other lines of that scheduler have one
 * (two runs in one file) is left out with a reason.
 */
export function assignSglangLinePositions(records: IterationLogRecord[]): { records: IterationLogRecord[]; skipped: { line: number; reason: string }[] } {
  const numbered = new Set<string>();
  for (const r of records) {
    const l = sglangLineOf(r);
    if (l && l.forwardIter !== null) numbered.add(l.scheduler);
  }
  const next = new Map<string, number>();
  const kept: IterationLogRecord[] = [];
  const skipped: { line: number; reason: string }[] = [];
  for (const r of records) {
    const l = sglangLineOf(r);
    if (!l || l.forwardIter !== null) {
      kept.push(r);
      continue;
    }
    if (numbered.has(l.scheduler)) {
      skipped.push({ line: r.line, reason: 'SGLang batch line without a forward-iteration number in a log whose other lines have one (two runs in one file?)' });
      continue;
    }
    const position = next.get(l.scheduler) ?? 0;
    next.set(l.scheduler, position + 1);
    kept.push({ ...r, iter: position, sourceIter: position });
  }
  return { records: kept, skipped };
}
