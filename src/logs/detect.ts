/**
 * Per-line format detection. A log file may interleave logger noise with records (and a
 * tee'd stdout may even mix formats), so every line is classified on its own, by cheap
 * substring checks that never throw and stay linear in the line length.
 *
 * What each format looks like (anything before the payload is a logger prefix and ignored):
 * - legacy-json:            `[TensorRT-LLM][INFO] {"Active Request Count":4,...,"Iteration Counter":1,...}`
 * - iteration-stats-json:   `[TensorRT-LLM][INFO] {"cpuMemUsage":0,...,"iter":0,...}` (or `[{...},{...}]`)
 * - iteration-stats-pyrepr: `{'cpuMemUsage': 0, ..., 'iter': 0, ...}`
 * - pytorch-text:           `[11/20/2026-23:07:42] [TRT-LLM] [I] iter = 1, global_rank = 0, ..., states = {...}`
 */
import { MAX_LINE_CHARS, type LogFormat } from './types.js';

/** Where in a line the record payload starts, and in which format. */
export interface RecordLocation {
  format: LogFormat;
  /** Offset of the payload: `{` / `[` for JSON and reprs, the `iter` of `iter = K` for text. */
  start: number;
}

/** `iter = K,` not preceded by a word character (so `num_iter = 3,` does not count). */
const TEXT_ITER_RE = /(?<!\w)iter = \d+\s*,/;
/** After a payload's opening `{` (or `[{`): whitespace, then the quote of the first key. */
const FIRST_KEY_QUOTE_RE = /^\[?\s*\{\s*(["'])/;

/** The format of one line, or null if it is not an iteration record. Never throws. */
export function detectLineFormat(line: string): LogFormat | null {
  return locateRecord(line)?.format ?? null;
}

export function locateRecord(line: string): RecordLocation | null {
  if (typeof line !== 'string' || line.length > MAX_LINE_CHARS) return null;
  const brace = line.indexOf('{');
  const text = TEXT_ITER_RE.exec(line);
  // A text record's `states = {...}` comes after `iter = K`; a JSON record may quote the text
  // log inside a string, but then its `{` comes first.
  if (text && (brace < 0 || text.index < brace) && isTextRecordLine(line)) {
    return { format: 'pytorch-text', start: text.index };
  }
  if (brace < 0) return null;
  const start = brace > 0 && line[brace - 1] === '[' ? brace - 1 : brace;
  const quote = FIRST_KEY_QUOTE_RE.exec(line.slice(start, start + 64))?.[1];
  if (quote === '"') {
    if (line.includes('"Iteration Counter"', start)) return { format: 'legacy-json', start };
    if (line.includes('"iter"', start)) return { format: 'iteration-stats-json', start };
  } else if (quote === "'") {
    if (line.includes("'iter'", start)) return { format: 'iteration-stats-pyrepr', start };
  }
  return null;
}

/**
 * `iter = K,` alone is too common (training loops print it); TensorRT-LLM's line always has
 * `global_rank` right after it (v1–v3) and ends with `states = {...}`.
 */
function isTextRecordLine(line: string): boolean {
  return line.includes('global_rank') || line.includes('states =');
}
