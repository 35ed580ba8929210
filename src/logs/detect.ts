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
 * - triton-stats-json:      `I1218 03:35:37.688135 20559 libtensorrtllm.cc:1205] {"Active Request Count":1,...,"Iteration Counter":0,...}`
 *                           (told from legacy-json by its keys, in parse.ts)
 * - vllm-iteration-details: `(EngineCore_DP0 pid=638) INFO 11-23 06:19:01 [core.py:349] Iteration(515): 0 context requests, ...`
 * - sglang-batch:           `[2026-11-25 14:51:36 TP0] Decode batch, #running-req: 16, #token: 5920, ...` (sglangBatchLines.ts)
 * The prefix may be any logger's (glog, `[TensorRT-LLM][INFO]`, Python logging, vLLM's engine core):
 * the payload is found by its own shape, not by the prefix.
 */
import { MAX_LINE_CHARS, type LogFormat } from './logRecords.js';
import { VLLM_ITERATION_RE } from './vllmIterationDetails.js';
import { SGLANG_BATCH_RE } from './sglangBatchLines.js';

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

/**
 * Where the record payload of a line starts. `from`: look only at braces from there on (parse.ts
 * retries past a prefix's own `{...}` that looked like a payload but did not parse).
 */
export function locateRecord(line: string, from = 0): RecordLocation | null {
  if (typeof line !== 'string' || line.length > MAX_LINE_CHARS) return null;
  const brace = line.indexOf('{', from);
  if (from > 0) return locateJson(line, brace);
  const text = TEXT_ITER_RE.exec(line);
  // A text record's `states = {...}` comes after `iter = K`; a JSON record may quote the text
  // log inside a string, but then its `{` comes first.
  if (text && (brace < 0 || text.index < brace) && isTextRecordLine(line)) {
    return { format: 'pytorch-text', start: text.index };
  }
  const vllm = line.includes('Iteration(') ? VLLM_ITERATION_RE.exec(line) : null;
  if (vllm && (brace < 0 || vllm.index < brace)) return { format: 'vllm-iteration-details', start: vllm.index };
  const sglang = line.includes(' batch') ? SGLANG_BATCH_RE.exec(line) : null;
  if (sglang && (brace < 0 || sglang.index < brace)) return { format: 'sglang-batch', start: sglang.index };
  return locateJson(line, brace);
}

/**
 * A prefix may hold braces of its own (`{rank=0}`): the payload is the first `{` that opens a
 * quoted key and is followed by a record's key, so try a few.
 */
function locateJson(line: string, brace: number): RecordLocation | null {
  for (let b = brace, tries = 0; b >= 0 && tries < MAX_BRACES_TRIED; b = line.indexOf('{', b + 1), tries++) {
    const start = b > 0 && line[b - 1] === '[' ? b - 1 : b;
    const quote = FIRST_KEY_QUOTE_RE.exec(line.slice(start, start + 64))?.[1];
    if (quote === '"') {
      if (line.includes('"Iteration Counter"', start)) return { format: 'legacy-json', start };
      if (line.includes('"iter"', start)) return { format: 'iteration-stats-json', start };
    } else if (quote === "'") {
      if (line.includes("'iter'", start)) return { format: 'iteration-stats-pyrepr', start };
    }
  }
  return null;
}

/** Braces looked at per line before giving up (keeps detection linear on garbage full of `{`). */
const MAX_BRACES_TRIED = 4;

/**
 * `iter = K,` alone is too common (training loops print it); TensorRT-LLM's line always has
 * `global_rank` right after it (v1–v3) and ends with `states = {...}`.
 */
function isTextRecordLine(line: string): boolean {
  return line.includes('global_rank') || line.includes('states =');
}
