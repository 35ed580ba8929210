/**
 * Entry points: parse a whole iteration log (file or text) or a single line, and merge logs
 * into one record per iteration.
 *
 * A file is either
 * - a JSON array of IterationStats objects (a saved `trtllm-serve /metrics` response, possibly
 *   pretty-printed): recognised when the first non-space character is `[` and the whole text
 *   parses as a JSON array; or
 * - lines, each classified on its own (`detect.ts`). Lines that are not records are counted and
 *   sampled, never fatal: logs carry logger noise, and the last line of a live log may be cut off.
 */
import { readFileSync, statSync } from 'node:fs';
import { constants as bufferConstants } from 'node:buffer';
import { InputError } from '../errors.js';
import { locateRecord, type RecordLocation } from './detect.js';
import { isIterationStatsObject, normalizeIterationStats } from './iterationStats.js';
import { isLegacyObject, isTritonStatsObject, normalizeLegacy, normalizeTritonStats } from './legacy.js';
import { parsePyLiteral, PyLiteralError } from './pyLiteral.js';
import { normalizePytorchText, parseTextFields } from './pytorchText.js';
import {
  MAX_LINE_CHARS,
  MAX_SKIPPED_SAMPLES,
  METRIC_KEYS,
  type IterationLogRecord,
  type IterationMetrics,
  type LogFormat,
  type MergedIterationRecord,
  type Normalized,
  type ParsedIterationLog,
} from './logRecords.js';
import { isPlainObject } from './values.js';
import { normalizeVllmIterationLine } from './vllmIterationDetails.js';
import { assignSglangLinePositions, normalizeSglangBatchLine } from './sglangBatchLines.js';

/** What one line yields: records (a `[{...},{...}]` line yields several), nothing, or a skip. */
export type LineResult =
  | { kind: 'records'; records: IterationLogRecord[] }
  | { kind: 'skipped'; reason: string }
  | { kind: 'empty' };

const DEFAULT_NAME = '<text>';

// ---------------------------------------------------------------------------------------------
// One line

/** Parse one line (without its newline). Never throws; a bad line is `skipped` with the reason. */
export function parseIterationLogLine(line: string, lineNo = 1, file = DEFAULT_NAME): LineResult {
  if (line.length > MAX_LINE_CHARS) return skipped(`line longer than ${MAX_LINE_CHARS} characters`);
  if (line.trim() === '') return { kind: 'empty' };
  // U+FFFD is what a lenient UTF-8 decoder makes of invalid bytes; NUL never occurs in a text log.
  if (line.includes('\u0000') || line.includes('\uFFFD')) return skipped('binary data or invalid UTF-8');
  const result = parseLocated(line, lineNo, file);
  if (result.kind === 'skipped' && result.reason === NOT_A_RECORD) {
    const unquoted = unquotedMessage(line);
    if (unquoted !== null) return parseLocated(unquoted, lineNo, file);
  }
  return result;
}

/**
 * Triton since 24.x writes each log message as a JSON string (server issue #7649, 24.08:
 * `I0924 12:01:22.876369 1 infer_request.cc:905] "[request id: <id_unknown>] prepared: ...\noriginal inputs:\n..."`),
 * so the backend's stats record arrives as `...model_instance_state.cc:969] "{\"Active Request Count\":1,...}"`:
 * the line with that string unquoted, or null when the line ends in no such string.
 */
function unquotedMessage(line: string): string | null {
  const open = line.indexOf('"{\\"');
  const text = line.trimEnd();
  if (open < 0 || !text.endsWith('"')) return null;
  try {
    const message: unknown = JSON.parse(text.slice(open));
    return typeof message === 'string' ? line.slice(0, open) + message : null;
  } catch {
    return null;
  }
}

function parseLocated(line: string, lineNo: number, file: string): LineResult {
  let result = parseAt(line, locateRecord(line), lineNo, file);
  // A prefix's own `{...}` may have looked like the payload: try the next candidates.
  for (let tries = 0; result.retryFrom !== undefined && tries < 3; tries++) {
    const next = parseAt(line, locateRecord(line, result.retryFrom), lineNo, file);
    if (next.result.kind === 'skipped' && next.result.reason === NOT_A_RECORD) break;
    result = next;
  }
  return result.result;
}

const NOT_A_RECORD = 'not an iteration record';

/** One candidate payload; `retryFrom` when a JSON/dict payload failed to parse and a later one might. */
function parseAt(line: string, loc: RecordLocation | null, lineNo: number, file: string): { result: LineResult; retryFrom?: number } {
  if (loc === null) return { result: skipped(NOT_A_RECORD) };
  const result = parsePayload(line, loc, lineNo, file);
  // Only a payload that did not parse at all may be a prefix's braces; a parsed object that is no
  // record (e.g. counter 0) is the record, skipped for its own reason.
  const unparsable = result.kind === 'skipped' && /^invalid (JSON|Python literal)/.test(result.reason);
  return unparsable ? { result, retryFrom: loc.start + 1 } : { result };
}

function parsePayload(line: string, loc: RecordLocation, lineNo: number, file: string): LineResult {
  const payload = line.slice(loc.start).trimEnd();
  switch (loc.format) {
    case 'pytorch-text': {
      const parsed = parseTextFields(payload);
      if (!parsed.ok) return skipped(parsed.reason);
      return single(toRecord(normalizePytorchText(parsed.fields), 'pytorch-text', parsed.fields, file, lineNo));
    }
    case 'vllm-iteration-details': {
      const { normalized, raw } = normalizeVllmIterationLine(line.slice(0, loc.start), payload);
      return single(toRecord(normalized, 'vllm-iteration-details', raw, file, lineNo));
    }
    case 'sglang-batch': {
      const { normalized, raw } = normalizeSglangBatchLine(line.slice(0, loc.start), payload);
      return single(toRecord(normalized, 'sglang-batch', raw, file, lineNo));
    }
    case 'iteration-stats-pyrepr': {
      let value: unknown;
      try {
        value = parsePyLiteral(payload);
      } catch (err) {
        if (err instanceof PyLiteralError) return skipped(`invalid Python literal: ${err.message}`);
        throw err;
      }
      if (!isPlainObject(value)) return skipped('Python literal is not a dict');
      return single(objectToRecord(value, 'pyrepr', file, lineNo));
    }
    case 'legacy-json':
    case 'triton-stats-json':
    case 'iteration-stats-json': {
      let value: unknown;
      try {
        value = JSON.parse(payload);
      } catch (err) {
        return skipped(`invalid JSON (truncated?): ${(err as Error).message}`);
      }
      if (Array.isArray(value)) {
        // A `/metrics` response pasted on one line. Elements that are not records are dropped
        // silently: the line is counted once, as records or as skipped.
        const records: IterationLogRecord[] = [];
        for (const element of value) {
          if (!isPlainObject(element)) continue;
          const r = objectToRecord(element, 'json', file, lineNo);
          if (typeof r !== 'string') records.push(r);
        }
        return records.length > 0 ? { kind: 'records', records } : skipped('JSON array without iteration records');
      }
      if (!isPlainObject(value)) return skipped('JSON value is not an object');
      return single(objectToRecord(value, 'json', file, lineNo));
    }
  }
}

function skipped(reason: string): LineResult {
  return { kind: 'skipped', reason };
}

function single(result: IterationLogRecord | string): LineResult {
  return typeof result === 'string' ? skipped(result) : { kind: 'records', records: [result] };
}

/**
 * A parsed object → record, or the reason it is none. Legacy keys are only meaningful in JSON:
 * `trtllm-bench` never wrote legacy records as Python reprs.
 */
function objectToRecord(
  obj: Record<string, unknown>,
  syntax: 'json' | 'pyrepr',
  file: string,
  line: number,
): IterationLogRecord | string {
  if (syntax === 'json' && isTritonStatsObject(obj)) return toRecord(normalizeTritonStats(obj), 'triton-stats-json', obj, file, line);
  if (syntax === 'json' && isLegacyObject(obj)) return toRecord(normalizeLegacy(obj), 'legacy-json', obj, file, line);
  if (!isIterationStatsObject(obj)) return 'object has no "iter" key';
  const format: LogFormat = syntax === 'json' ? 'iteration-stats-json' : 'iteration-stats-pyrepr';
  return toRecord(normalizeIterationStats(obj), format, obj, file, line);
}

function toRecord(
  n: Normalized,
  format: LogFormat,
  raw: Record<string, unknown>,
  file: string,
  line: number,
): IterationLogRecord | string {
  if (!n.ok) return n.reason;
  return { iter: n.iter, sourceIter: n.sourceIter, format, file, line, ...n.metrics, raw };
}

// ---------------------------------------------------------------------------------------------
// Whole logs

/** Collects line results into a `ParsedIterationLog`. */
class LogBuilder {
  private readonly records: IterationLogRecord[] = [];
  private readonly samples: { line: number; reason: string }[] = [];
  private skippedLines = 0;
  linesRead = 0;

  constructor(private readonly file: string) {}

  add(lineNo: number, result: LineResult): void {
    if (result.kind === 'records') this.records.push(...result.records);
    else if (result.kind === 'skipped') this.skip(lineNo, result.reason);
  }

  skip(lineNo: number, reason: string): void {
    this.skippedLines++;
    if (this.samples.length < MAX_SKIPPED_SAMPLES) this.samples.push({ line: lineNo, reason });
  }

  /** Parse a line, turning even an unexpected exception into a skipped line. */
  addLine(lineNo: number, line: string): void {
    let result: LineResult;
    try {
      result = parseIterationLogLine(line, lineNo, this.file);
    } catch (err) {
      result = skipped(`internal parser error: ${(err as Error)?.message ?? String(err)}`);
    }
    this.add(lineNo, result);
  }

  finish(): ParsedIterationLog {
    const formats: Partial<Record<LogFormat, number>> = {};
    const { records, skipped } = assignSglangLinePositions(this.records);
    for (const s of skipped) this.skip(s.line, s.reason);
    for (const r of records) formats[r.format] = (formats[r.format] ?? 0) + 1;
    return {
      file: this.file,
      records,
      linesRead: this.linesRead,
      skippedLines: this.skippedLines,
      skippedSamples: this.samples,
      formats,
      duplicateIters: duplicateIters(records),
    };
  }
}

/** `iter` values that occur in more than one record, ascending. */
export function duplicateIters(records: readonly IterationLogRecord[]): number[] {
  const seen = new Set<number>();
  const duplicates = new Set<number>();
  for (const r of records) {
    if (seen.has(r.iter)) duplicates.add(r.iter);
    seen.add(r.iter);
  }
  return [...duplicates].sort((a, b) => a - b);
}

/** Parse log text (already decoded). Never throws. */
export function parseIterationLogText(text: string, file = DEFAULT_NAME): ParsedIterationLog {
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (looksLikeJsonArray(text)) {
    const parsed = parseJsonArrayText(text, file);
    if (parsed) return parsed;
  }
  const builder = new LogBuilder(file);
  let lineNo = 0;
  let pos = 0;
  while (pos < text.length) {
    let end = text.indexOf('\n', pos);
    if (end < 0) end = text.length;
    lineNo++;
    const lineEnd = end > pos && text.charCodeAt(end - 1) === 13 ? end - 1 : end; // CRLF
    if (lineEnd - pos > MAX_LINE_CHARS) builder.skip(lineNo, `line longer than ${MAX_LINE_CHARS} characters`);
    else builder.addLine(lineNo, text.slice(pos, lineEnd));
    pos = end + 1;
  }
  builder.linesRead = lineNo;
  return builder.finish();
}

/**
 * Parse a log file. Lines are cut from the raw bytes and decoded one by one, so an over-long
 * line is skipped without ever becoming a string and invalid UTF-8 costs only its own line.
 * Throws `InputError('E_LOG')` when the file cannot be read at all; a readable file without a
 * single record is not an error (zero records, for the caller to judge).
 */
export function parseIterationLogFile(path: string): ParsedIterationLog {
  const bytes = readLogBytes(path);
  if (bytesLookLikeJsonArray(bytes) && bytes.length <= bufferConstants.MAX_STRING_LENGTH) {
    const parsed = parseJsonArrayText(bytes.toString('utf8').replace(/^\uFEFF/, ''), path);
    if (parsed) return parsed;
  }
  const builder = new LogBuilder(path);
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let lineNo = 0;
  let pos = 0;
  while (pos < bytes.length) {
    let end = bytes.indexOf(0x0a, pos);
    if (end < 0) end = bytes.length;
    lineNo++;
    const lineEnd = end > pos && bytes[end - 1] === 0x0d ? end - 1 : end;
    if (lineEnd - pos > MAX_LINE_CHARS) {
      builder.skip(lineNo, `line longer than ${MAX_LINE_CHARS} bytes`);
    } else {
      let line: string | null = null;
      try {
        // The decoder drops a BOM at the start of each call, which only matters for line 1.
        line = decoder.decode(bytes.subarray(pos, lineEnd));
      } catch {
        builder.skip(lineNo, 'binary data or invalid UTF-8');
      }
      if (line !== null) builder.addLine(lineNo, line);
    }
    pos = end + 1;
  }
  builder.linesRead = lineNo;
  return builder.finish();
}

function readLogBytes(path: string): Buffer {
  let stats;
  try {
    stats = statSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new InputError('E_LOG', path, code === 'ENOENT' ? 'iteration log does not exist' : `cannot access iteration log (${code ?? err})`);
  }
  if (stats.isDirectory()) throw new InputError('E_LOG', path, 'iteration log is a directory, not a file');
  // Pipes (`<(cat log)`) are fine; devices such as /dev/zero would never end.
  if (!stats.isFile() && !stats.isFIFO()) throw new InputError('E_LOG', path, 'iteration log is not a regular file');
  try {
    return readFileSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new InputError('E_LOG', path, `cannot read iteration log (${code ?? (err as Error).message})`);
  }
}

// ---------------------------------------------------------------------------------------------
// JSON array files (`/metrics` responses)

/** `[` then `{` or `]` as the first two non-space characters; cheap pre-check before JSON.parse. */
function looksLikeJsonArray(text: string): boolean {
  const m = /^\s*\[\s*([{\]])/.exec(text.slice(0, 4096));
  return m !== null;
}

function bytesLookLikeJsonArray(bytes: Buffer): boolean {
  let i = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  const next = (): number => {
    while (i < bytes.length && (bytes[i] === 0x20 || bytes[i] === 0x09 || bytes[i] === 0x0a || bytes[i] === 0x0d)) i++;
    return i < bytes.length ? bytes[i++] : -1;
  };
  if (next() !== 0x5b /* [ */) return false;
  const second = next();
  return second === 0x7b /* { */ || second === 0x5d /* ] */;
}

/** Null when the text is not one JSON array (then it is read line by line instead). */
function parseJsonArrayText(text: string, file: string): ParsedIterationLog | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (!Array.isArray(value)) return null;
  const builder = new LogBuilder(file);
  const lines = elementLineNumbers(text, value.length);
  value.forEach((element, i) => {
    const line = lines[i] ?? 1;
    if (!isPlainObject(element)) {
      builder.skip(line, `array element ${i} is not an object`);
      return;
    }
    const r = objectToRecord(element, 'json', file, line);
    if (typeof r === 'string') builder.skip(line, `array element ${i}: ${r}`);
    else builder.add(line, { kind: 'records', records: [r] });
  });
  builder.linesRead = countLines(text);
  return builder.finish();
}

/** 1-based line on which each top-level element of a (valid) JSON array starts. */
function elementLineNumbers(text: string, count: number): number[] {
  const lines: number[] = [];
  let line = 1;
  let depth = 0;
  let inString = false;
  let expectElement = false;
  for (let i = 0; i < text.length && lines.length < count; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) line++;
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
      continue;
    }
    if (depth === 1 && expectElement && c !== 32 && c !== 9 && c !== 10 && c !== 13 && c !== 93) {
      lines.push(line);
      expectElement = false;
    }
    if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      depth++;
      if (depth === 1) expectElement = true;
    } else if (c === 93 || c === 125) depth--;
    else if (c === 44 && depth === 1) expectElement = true;
  }
  return lines;
}

function countLines(text: string): number {
  if (text.length === 0) return 0;
  let n = 1;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) if (i < text.length - 1) n++;
  return n;
}

// ---------------------------------------------------------------------------------------------
// Merging

/**
 * One record per iteration, ascending by `iter`. Within one log the LAST record for an
 * iteration wins (a repeated line is the newer report). Across logs, fields are merged: the
 * first log's non-null value wins and later logs fill its nulls, so an `iteration_log.txt`
 * record and the `executor.log` line for the same loop become one record with both field sets.
 * Do not merge logs of different ranks: they describe different processes.
 */
export function recordsByIter(logs: ParsedIterationLog | ParsedIterationLog[]): Map<number, MergedIterationRecord> {
  const merged = new Map<number, MergedIterationRecord>();
  for (const log of Array.isArray(logs) ? logs : [logs]) {
    const latest = new Map<number, IterationLogRecord>();
    for (const r of log.records) latest.set(r.iter, r);
    for (const [iter, r] of latest) {
      const m = merged.get(iter);
      if (m === undefined) merged.set(iter, { ...r, sources: [r] });
      else mergeInto(m, r);
    }
  }
  return new Map([...merged].sort((a, b) => a[0] - b[0]));
}

/** What two records of one iteration must agree on to describe the same iteration: its batch. */
const COMPOSITION_KEYS = ['contextRequests', 'contextTokens', 'generationRequests', 'generationTokens'] as const;

/**
 * The iterations that appear in more than one record of `log`, ascending, by how the records
 * differ (records repeated as they are differ in nothing and are left out): `batch`, in the batch
 * composition, so which one is of the captured run cannot be told (two runs appended to one file
 * is the usual cause); `values`, in other values only (latency, timestamp), where `recordsByIter`
 * keeps the last.
 */
export function repeatedIters(log: ParsedIterationLog): { batch: number[]; values: number[] } {
  if (log.duplicateIters.length === 0) return { batch: [], values: [] };
  const first = new Map<number, IterationLogRecord>();
  const batch = new Set<number>();
  const values = new Set<number>();
  for (const r of log.records) {
    const f = first.get(r.iter);
    if (!f) first.set(r.iter, r);
    else if (COMPOSITION_KEYS.some((k) => f[k] !== r[k])) batch.add(r.iter);
    else if (METRIC_KEYS.some((k) => f[k] !== r[k])) values.add(r.iter);
  }
  const ascending = (xs: number[]) => xs.sort((a, b) => a - b);
  return { batch: ascending([...batch]), values: ascending([...values].filter((i) => !batch.has(i))) };
}

/** The timestamp text and its parsed value describe one instant: take them together. */
const TIMESTAMP_KEYS: ReadonlySet<keyof IterationMetrics> = new Set<keyof IterationMetrics>(['timestamp', 'timestampMs']);

function mergeInto(target: MergedIterationRecord, extra: IterationLogRecord): void {
  const t = target as unknown as Record<keyof IterationMetrics, unknown>;
  for (const key of METRIC_KEYS) {
    if (!TIMESTAMP_KEYS.has(key) && t[key] === null && extra[key] !== null) t[key] = extra[key];
  }
  if (target.timestampMs === null && extra.timestampMs !== null) {
    target.timestamp = extra.timestamp;
    target.timestampMs = extra.timestampMs;
  } else if (target.timestamp === null) {
    target.timestamp = extra.timestamp;
  }
  target.sources.push(extra);
}
