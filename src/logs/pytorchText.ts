/**
 * PyTorch-backend text iteration log (`print_iter_log: true`, `PyExecutor._profiler`):
 *
 *   v1: iter = 5, global_rank = 0, rank = 0, currank_total_requests = 0/0, elapsed_time = 0.08s,
 *       timestamp = 2025-08-07 02:28:51, num_scheduled_requests: 1, states = {...}
 *   v2: iter = K, global_rank = .., rank = .., currank_total_requests = a/b, host_step_time = Xms,
 *       prev_device_step_time = (Y|N/A)ms, timestamp = .., num_scheduled_requests: N, states = {...}
 *   v3: iter = K, global_rank = .., rank = .., num_scheduled_requests = N, [adp_dummy_* = ..,]
 *       kv_cache_util = (0.250|N/A), currank_total_requests = a/b, host_step_time = Xms,
 *       prev_device_step_time = (Yms|N/A), timestamp = .., states = {...}
 *
 * The line is printed at the START of loop K and reports the loop that just ended, so
 * `iter = K` describes NVTX loop K-1 (trtllm.md §0.4, §1.4); an `iter = 0` is kept (as loop -1)
 * and the join finds the offset the log really has (`alignLogCounters`). Parsing is by
 * `key = value` (or `key: value`) pairs split on top-level commas, so new or reordered fields do
 * not break it. Fields added since:
 *   PR #16323 (2026-07): `..., states = {...}, num_active = 14, num_fetched = 3, num_dummy = 1, num_unscheduled = 5`
 *   PR #14734 (2026-05): `iter = 1 ... cached_kv_len = 0   states = {..., 'num_ctx_tokens': 12, ...}`
 *     (its description shows no comma before `states`: a field also ends where whitespace is
 *     followed by `name =`), and `'cached_kv_tokens'` inside `states`.
 */
import { parsePyLiteral, PyLiteralError } from './pyLiteral.js';
import { parseLogTimestamp } from './timestamps.js';
import { emptyMetrics, type Normalized } from './logRecords.js';
import { isPlainObject, toCount, toDurationMs } from './values.js';

export type TextFieldsResult = { ok: true; fields: Record<string, unknown> } | { ok: false; reason: string };

const FIELD_RE = /^([A-Za-z_]\w*)\s*[=:]\s*([\s\S]*)$/;

/**
 * Split `iter = 1, ..., states = {...}` into fields. Values stay text as written, except
 * `states`, which is parsed as a Python dict when it is one (left as text when it is not).
 * Unbalanced brackets mean the line was cut off: that is a failure, not a record.
 */
export function parseTextFields(payload: string): TextFieldsResult {
  const parts = splitTopLevel(payload);
  if (parts === null) return { ok: false, reason: 'truncated text record (unbalanced brackets or quotes)' };
  const fields: Record<string, unknown> = {};
  for (const part of parts) {
    const m = FIELD_RE.exec(part.trim());
    if (!m) continue; // free text between fields carries nothing we use
    const key = m[1];
    if (key === '__proto__') continue; // never a real field; assigning it would touch the prototype
    const value = m[2].trim();
    fields[key] = key === 'states' ? parseStates(value) : value;
  }
  return { ok: true, fields };
}

export function normalizePytorchText(fields: Record<string, unknown>): Normalized {
  const printed = toCount(fields.iter);
  if (printed === null) return { ok: false, reason: '"iter" is not a non-negative integer' };
  // Every version ends the line with `states = {...}`; without it the line was cut off, and
  // the last field read before the cut may itself be cut short (`= 1` of `= 16`).
  if (fields.states === undefined || fields.states === '') return { ok: false, reason: 'truncated text record (no states field)' };
  const states = isPlainObject(fields.states) ? fields.states : null;
  const timestamp = typeof fields.timestamp === 'string' ? fields.timestamp : null;
  const metrics = emptyMetrics();
  metrics.scheduledRequests = toCount(fields.num_scheduled_requests);
  metrics.contextRequests = toCount(states?.num_ctx_requests);
  metrics.contextTokens = toCount(states?.num_ctx_tokens);
  metrics.generationTokens = toCount(states?.num_generation_tokens);
  // No gen-request count is printed; scheduled = ctx + gen holds for every decoding mode,
  // whereas num_generation_tokens equals the request count only for greedy decoding.
  if (metrics.scheduledRequests !== null && metrics.contextRequests !== null) {
    const gen = metrics.scheduledRequests - metrics.contextRequests;
    metrics.generationRequests = gen >= 0 ? gen : null;
  }
  // Since 2026: `num_active = .., num_fetched = .., num_dummy = .., num_unscheduled = ..` (PR #16323), `cached_kv_len = N` (PR #14734).
  metrics.activeRequests = toCount(fields.num_active);
  metrics.fetchedRequests = toCount(fields.num_fetched);
  metrics.dummyRequests = toCount(fields.num_dummy);
  metrics.unscheduledRequests = toCount(fields.num_unscheduled);
  metrics.cachedKvTokens = toCount(fields.cached_kv_len) ?? toCount(states?.cached_kv_tokens);
  metrics.latencyMs = toDurationMs(fields.elapsed_time, 's'); // v1 only; printed in seconds
  metrics.hostStepTimeMs = toDurationMs(fields.host_step_time, 'ms');
  metrics.prevDeviceStepTimeMs = toDurationMs(fields.prev_device_step_time, 'ms');
  metrics.rank = toCount(fields.global_rank);
  metrics.timestamp = timestamp;
  metrics.timestampMs = timestamp === null ? null : parseLogTimestamp(timestamp);
  return { ok: true, iter: printed - 1, sourceIter: printed, metrics };
}

function parseStates(value: string): unknown {
  if (!value.startsWith('{')) return value;
  try {
    return parsePyLiteral(value);
  } catch (err) {
    if (err instanceof PyLiteralError) return value;
    throw err;
  }
}

const COMMA = 0x2c;
const BACKSLASH = 0x5c;
const SINGLE_QUOTE = 0x27;
const DOUBLE_QUOTE = 0x22;

/** Closing character code for an opening bracket code (`(`, `[`, `{`), else 0. */
function closerOf(c: number): number {
  switch (c) {
    case 0x28:
      return 0x29;
    case 0x5b:
      return 0x5d;
    case 0x7b:
      return 0x7d;
    default:
      return 0;
  }
}

/** At a top-level space: whitespace, then the next field's `name =` (a field not ended by a comma). */
const NEXT_FIELD_RE = /\s+[A-Za-z_]\w*\s*=(?!=)/y;

/** Whether a field ends at `i` (whitespace at the top level) because `name =` follows and this part already has its value. */
function fieldEndsAt(s: string, i: number, partStart: number): boolean {
  if (!isSpace(s.charCodeAt(i)) || isSpace(s.charCodeAt(i - 1))) return false;
  NEXT_FIELD_RE.lastIndex = i;
  if (!NEXT_FIELD_RE.test(s)) return false;
  const part = s.slice(partStart, i);
  return part.includes('=') || part.includes(':');
}

const isSpace = (c: number) => c === 0x20 || c === 0x09;

/**
 * Split on commas outside brackets, and where whitespace is followed by the next `name =`
 * (`fieldEndsAt`). Quotes are only tracked inside brackets: at the top level an apostrophe is
 * just text. Returns null when brackets or quotes are left open.
 */
function splitTopLevel(s: string): string[] | null {
  const parts: string[] = [];
  const closers: number[] = [];
  let quote = 0;
  let partStart = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (quote !== 0) {
      if (c === BACKSLASH) i++;
      else if (c === quote) quote = 0;
      continue;
    }
    const closer = closerOf(c);
    if (closer !== 0) {
      closers.push(closer);
    } else if (closers.length === 0) {
      if (c === COMMA || fieldEndsAt(s, i, partStart)) {
        parts.push(s.slice(partStart, i));
        partStart = i + 1;
      }
    } else if (c === closers[closers.length - 1]) {
      closers.pop();
    } else if (c === SINGLE_QUOTE || c === DOUBLE_QUOTE) {
      quote = c;
    }
  }
  if (closers.length > 0 || quote !== 0) return null;
  parts.push(s.slice(partStart));
  return parts;
}
