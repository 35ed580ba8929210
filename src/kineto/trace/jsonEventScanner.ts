/**
 * A streaming scanner for Chrome-trace JSON as the PyTorch profiler (Kineto) writes it:
 * `{ "schemaVersion": 1, ..., "traceEvents": [ {...}, {...} ], ... }`.
 *
 * Traces reach hundreds of MB, so the document is never parsed whole: text is fed chunk by chunk
 * and each element of `traceEvents` is handed out parsed, as are the top-level values the scanner
 * was asked to keep (as text). Memory is bounded by the chunk and the largest event, not the file.
 *
 * Two ways through the events, with the same result:
 * - fast: from the start of an element, the run of whole elements up to the last element boundary
 *   in the buffer (a `,` between `}` and `{`) is parsed by one `JSON.parse` of `[run]`. A boundary
 *   found by that text pattern may sit inside a string; then the run is not valid JSON, the parse
 *   fails and an earlier boundary (or the slow way) is tried. A run that parses started at an
 *   element and ends outside any string at depth 0: it is exactly whole elements.
 * - slow: a character scan tracking depth and string state, one `JSON.parse` per element (what is
 *   left of a buffer, and documents without boundaries the fast way recognises).
 * - selective (a sink with `wants`, e.g. a conversion that writes only the kernels): in a document
 *   that puts each element on its own lines, as every PyTorch version does (`},` newline, then the
 *   first element's indentation, then `{`), the run is split at those separators, and only the
 *   elements the sink wants are parsed (each by its own `JSON.parse`; one that fails sends the run
 *   the fast way). A separator holds a raw newline, which JSON never has inside a string, at the
 *   indentation of the top-level elements, which a pretty-printer never gives a nested one: it is a
 *   real boundary. The elements left unparsed are counted, not checked.
 */

/** Why the text is not a Kineto trace, with how far the scan got. */
export class TraceScanError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
    this.name = 'TraceScanError';
  }
}

export interface ScannerSink {
  /** One `traceEvents` element, parsed (file order). */
  event(value: unknown): void;
  /** The raw text of a kept top-level value (see `keepKeys`). */
  topLevel(key: string, text: string): void;
  /**
   * Whether the element with this text is needed (a cheap test of the text: true for every element
   * the sink reads, may be true for others). When given, elements it rejects may go unparsed.
   */
  wants?(text: string): boolean;
}

const QUOTE = 34; // "
const BACKSLASH = 92;
const LBRACE = 123;
const RBRACE = 125;
const LBRACKET = 91;
const RBRACKET = 93;
const COMMA = 44;
const COLON = 58;

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

/** Boundaries the fast way tries per buffer before it leaves the rest to the slow way. */
const FAST_TRIES = 3;

/**
 * The comma of the last `}` `,` `{` (whitespace allowed around the comma) whose `{` lies in
 * (from, before): the end of a run of whole elements, if that text is outside strings. -1: none.
 * Walks back over `{` only (an event holds few), not over every comma.
 */
function lastElementBoundary(s: string, from: number, before: number): number {
  let brace = s.lastIndexOf('{', before - 1);
  while (brace > from) {
    let a = brace - 1;
    while (isSpace(s.charCodeAt(a))) a--;
    if (s.charCodeAt(a) === COMMA) {
      let b = a - 1;
      while (isSpace(s.charCodeAt(b))) b--;
      if (s.charCodeAt(b) === RBRACE && b > from) return a;
    }
    brace = s.lastIndexOf('{', brace - 1);
  }
  return -1;
}

/** Largest event or kept value accepted: anything bigger is not a Kineto event but a broken file. */
const MAX_CAPTURE_CHARS = 64 * 1024 * 1024;

export class KinetoJsonScanner {
  private depth = 0;
  private inString = false;
  private escaped = false;
  private started = false;
  private finished = false;
  /** At depth 1: the next string is a key. */
  private expectKey = false;
  /** At depth 1: a ':' was read, the next non-space char starts the value of `currentKey`. */
  private valuePending = false;
  private currentKey: string | null = null;
  private keyStart: number | null = null;
  /** Inside the traceEvents array (its elements are at depth 2). */
  private inEvents = false;
  /** Whether `traceEvents` was met (opened and closed). */
  private sawEvents = false;
  private eventsClosed = false;
  /** Start (in `buf`) of the event or kept value being captured; -1: none. */
  private markStart: number | null = null;
  /** Key whose value is being captured at depth 1 (kept keys only). */
  private capturingKey: string | null = null;
  private buf = '';
  /** The fast way failed in this buffer: the slow way until the next `write`. */
  private fastFailed = false;
  /** The selective way failed in this buffer: the fast way until the next `write`. */
  private selectiveFailed = false;
  /**
   * Text of the previous buffers that a capture still open at the last `write` began in: positions
   * below 0 (`markStart`, `keyStart`) are in it, counted back from its end. Never the whole buffer
   * joined to the next chunk (that copy cost as much as reading the file).
   */
  private prefix = '';
  /** Characters of the document before `buf[0]`. */
  private consumed = 0;
  /** Index in `buf` of the `[` of traceEvents while its first element is not reached; -1: none. */
  private eventsOpenAt = -1;
  /** The element separator the selective way splits at (`},\n  {`); null: none (not line-separated, or no `wants`). */
  private separator: string | null = null;
  eventCount = 0;
  /** Elements the selective way left unparsed (counted in `eventCount` too). */
  unparsedCount = 0;

  constructor(
    private readonly sink: ScannerSink,
    private readonly keepKeys: ReadonlySet<string>,
  ) {}

  /** Feeds the next piece of text (any split, including inside strings and numbers). */
  write(chunk: string): void {
    const open = [this.markStart, this.keyStart].filter((v): v is number => v !== null);
    const n = this.buf.length;
    this.prefix = open.length ? this.textBetween(Math.min(...open), n) : '';
    this.consumed += n;
    if (this.markStart !== null) this.markStart -= n;
    if (this.keyStart !== null) this.keyStart -= n;
    this.buf = chunk;
    this.fastFailed = false;
    this.selectiveFailed = false;
    // The `[` of traceEvents was in the previous buffer: no separator learnt (the fast way reads it all).
    this.eventsOpenAt = -1;
    this.scan(0);
    if (this.markStart !== null && this.buf.length - this.markStart > MAX_CAPTURE_CHARS) {
      throw new TraceScanError(`an event larger than ${MAX_CAPTURE_CHARS / 1024 / 1024} MB: not a PyTorch profiler trace`, this.consumed + this.markStart);
    }
  }

  /** Call at end of input: throws when the document is incomplete or has no `traceEvents`. */
  end(): void {
    const at = this.consumed + this.buf.length;
    if (!this.started) throw new TraceScanError('empty JSON document, expected a PyTorch profiler trace ({"traceEvents": [...]})', at);
    if (!this.finished) {
      throw new TraceScanError(
        this.inEvents
          ? `truncated: the file ends inside traceEvents after ${this.eventCount} events`
          : 'truncated: the JSON document ends before its closing brace',
        at,
      );
    }
    if (!this.sawEvents || !this.eventsClosed) throw new TraceScanError('JSON without a "traceEvents" array: not a PyTorch profiler (Kineto) trace', at);
  }

  private scan(from: number): void {
    const s = this.buf;
    const n = s.length;
    let i = from;
    while (i < n) {
      if (this.inString) {
        // Jump to the next quote or backslash: strings are most of the text.
        let j = i;
        for (; j < n; j++) {
          const c = s.charCodeAt(j);
          if (this.escaped) {
            this.escaped = false;
            continue;
          }
          if (c === BACKSLASH) this.escaped = true;
          else if (c === QUOTE) break;
        }
        if (j >= n) return;
        this.inString = false;
        i = j + 1;
        if (this.keyStart !== null) {
          this.currentKey = JSON.parse(this.textBetween(this.keyStart, i)) as string;
          this.keyStart = null;
        }
        continue;
      }
      const c = s.charCodeAt(i);
      if (isSpace(c)) {
        i++;
        continue;
      }
      if (this.finished) throw new TraceScanError('unexpected text after the end of the JSON document', this.consumed + i);
      if (!this.started) {
        if (c !== LBRACE) throw new TraceScanError('not a JSON object: a PyTorch profiler trace starts with {"traceEvents": ...}', this.consumed + i);
        this.started = true;
        this.depth = 1;
        this.expectKey = true;
        i++;
        continue;
      }
      if (this.depth === 1) {
        i = this.atTopLevel(s, i, c);
        continue;
      }
      if (c === QUOTE) {
        this.inString = true;
      } else if (c === LBRACE || c === LBRACKET) {
        if (this.inEvents && this.depth === 2) {
          if (c !== LBRACE) throw new TraceScanError('traceEvents holds a non-object element', this.consumed + i);
          if (this.eventsOpenAt >= 0) this.learnSeparator(s, i);
          let after = this.selectiveRun(s, i);
          if (after === i) after = this.fastRun(s, i);
          if (after > i) {
            i = after;
            continue;
          }
          this.markStart = i;
        }
        this.depth++;
      } else if (c === RBRACE || c === RBRACKET) {
        this.depth--;
        if (this.inEvents) {
          if (this.depth === 2 && this.markStart !== null) {
            this.sink.event(this.parseElement(this.textBetween(this.markStart, i + 1)));
            this.markStart = null;
          } else if (this.depth === 1) {
            if (c !== RBRACKET) throw new TraceScanError('malformed traceEvents array', this.consumed + i);
            this.inEvents = false;
            this.eventsClosed = true;
          }
        }
      } else if (this.inEvents && this.depth === 2 && c !== COMMA) {
        throw new TraceScanError('traceEvents holds a non-object element', this.consumed + i);
      }
      i++;
    }
  }

  /** The text from `from` (below 0: in `prefix`) to `to` of the buffer. */
  private textBetween(from: number, to: number): string {
    return from >= 0 ? this.buf.slice(from, to) : this.prefix.slice(this.prefix.length + from) + this.buf.slice(0, to);
  }

  /** One element scanned the slow way: parsed here, counted. */
  private parseElement(text: string): unknown {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new TraceScanError(`malformed JSON in traceEvents element ${this.eventCount + 1}`, this.consumed);
    }
    this.eventCount++;
    return value;
  }

  /**
   * At the first element: the separator of line-separated elements, `},` newline and this
   * element's indentation `{` (`\r\n` kept when the file has it), when the sink selects.
   */
  private learnSeparator(s: string, first: number): void {
    const gap = s.slice(this.eventsOpenAt + 1, first);
    this.eventsOpenAt = -1;
    const nl = gap.lastIndexOf('\n');
    if (!this.sink.wants || nl < 0) return;
    this.separator = `},${gap[nl - 1] === '\r' ? '\r\n' : '\n'}${gap.slice(nl + 1)}{`;
  }

  /**
   * The selective way from the element starting at `start`: the elements up to the last separator
   * in the buffer, those the sink wants parsed and handed out (all parsed before any is handed
   * out: a failure hands out nothing). Returns the index of the `{` after the last separator, or
   * `start` when it did nothing.
   */
  private selectiveRun(s: string, start: number): number {
    const sep = this.separator;
    if (sep === null || this.selectiveFailed) return start;
    const last = s.lastIndexOf(sep);
    if (last < start) return start;
    const wanted: unknown[] = [];
    let pieces = 0;
    for (let from = start; from <= last; pieces++) {
      const end = s.indexOf(sep, from) + 1;
      const text = s.slice(from, end);
      from = end + sep.length - 2;
      if (!this.sink.wants!(text)) continue;
      let value: unknown = null;
      try {
        value = JSON.parse(text);
      } catch {
        // Not one element: reported by the fast or slow way, which read every element.
      }
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        this.selectiveFailed = true;
        return start;
      }
      wanted.push(value);
    }
    this.eventCount += pieces;
    this.unparsedCount += pieces - wanted.length;
    for (const value of wanted) this.sink.event(value);
    return last + sep.length - 1;
  }

  /**
   * The fast way from the element starting at `start`: parses the whole elements up to the last
   * boundary in the buffer (trying up to FAST_TRIES boundaries, latest first) and hands them out.
   * Returns the index after the boundary's comma, or `start` when nothing was parsed.
   */
  private fastRun(s: string, start: number): number {
    if (this.fastFailed) return start;
    let before = s.length;
    for (let tries = 0; tries < FAST_TRIES; tries++) {
      const comma = lastElementBoundary(s, start, before);
      if (comma < 0) break;
      let run: unknown;
      try {
        run = JSON.parse(`[${s.slice(start, comma)}]`);
      } catch {
        before = comma;
        continue;
      }
      const elements = run as unknown[];
      for (let k = 0; k < elements.length; k++) {
        if (elements[k] === null || typeof elements[k] !== 'object' || Array.isArray(elements[k])) {
          throw new TraceScanError('traceEvents holds a non-object element', this.consumed + start);
        }
        this.eventCount++;
        this.sink.event(elements[k]);
      }
      return comma + 1;
    }
    this.fastFailed = true;
    return start;
  }

  /** One significant character at depth 1 (the top-level object's keys, colons, values, commas). */
  private atTopLevel(s: string, i: number, c: number): number {
    if (this.expectKey) {
      if (c === RBRACE) return this.close(i);
      if (c !== QUOTE) throw new TraceScanError('malformed JSON: expected a key in the top-level object', this.consumed + i);
      this.keyStart = i;
      this.inString = true;
      this.expectKey = false;
      return i + 1;
    }
    if (this.currentKey !== null && !this.valuePending && this.markStart === null && this.capturingKey === null && c === COLON) {
      this.valuePending = true;
      return i + 1;
    }
    if (this.valuePending) {
      this.valuePending = false;
      const key = this.currentKey!;
      if (key === 'traceEvents') {
        if (c !== LBRACKET) throw new TraceScanError('"traceEvents" is not an array: not a PyTorch profiler trace', this.consumed + i);
        this.sawEvents = true;
        this.inEvents = true;
        this.eventsOpenAt = i;
        this.depth = 2;
        return i + 1;
      }
      if (this.keepKeys.has(key)) {
        this.capturingKey = key;
        this.markStart = i;
      }
      // Fall through: the value's first character is scanned like any other.
    }
    if (c === COMMA || c === RBRACE) {
      if (this.capturingKey !== null) {
        this.sink.topLevel(this.capturingKey, this.textBetween(this.markStart!, i).trim());
        this.capturingKey = null;
        this.markStart = null;
      }
      this.currentKey = null;
      if (c === RBRACE) return this.close(i);
      this.expectKey = true;
      return i + 1;
    }
    if (c === QUOTE) this.inString = true;
    else if (c === LBRACE || c === LBRACKET) this.depth++;
    else if (c === RBRACKET) throw new TraceScanError('malformed JSON: unbalanced ]', this.consumed + i);
    return i + 1;
  }

  private close(i: number): number {
    this.depth = 0;
    this.finished = true;
    return i + 1;
  }
}
