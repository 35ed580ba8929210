/**
 * A safe parser for Python literals as `repr()` writes them (what `ast.literal_eval` reads back).
 *
 * `trtllm-bench --iteration_log` writes `f"{message}\n"` for a dict, so its lines are Python
 * reprs: single-quoted strings, `None`/`True`/`False`, `inf`/`nan`. The text log's
 * `states = {...}` is one too. Nothing is evaluated: this is a recursive-descent parser over a
 * small grammar, with a nesting cap so hostile input cannot overflow the stack.
 *
 * Mapping to JS: dict → plain object (scalar keys become strings, as in JSON), list / tuple /
 * set → array, int / float → number (ints beyond 2^53 lose precision), str → string,
 * None → null, True/False → boolean.
 */

export type PyValue = null | boolean | number | string | PyValue[] | { [key: string]: PyValue };

export class PyLiteralError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(`${message} at offset ${offset}`);
    this.name = 'PyLiteralError';
  }
}

/** Deeper nesting than this is rejected rather than risking a stack overflow. */
const MAX_DEPTH = 256;

/** Parse exactly one literal; surrounding whitespace is allowed, anything else is an error. */
export function parsePyLiteral(text: string): PyValue {
  const fast = viaJson(text);
  return fast !== DECLINED ? fast : parseByGrammar(text);
}

/** `parsePyLiteral` by the grammar alone (what the JSON path must agree with). */
export function parseByGrammar(text: string): PyValue {
  const parser = new Parser(text);
  parser.skipSpace();
  const value = parser.value(0);
  parser.skipSpace();
  if (parser.pos !== text.length) throw new PyLiteralError('unexpected trailing text', parser.pos);
  return value;
}

/** What `viaJson` returns for a text it does not read (the grammar then does). */
export const DECLINED: unique symbol = Symbol('declined');

/** JSON's words: no Python literal has them bare, and JSON.parse would read them. */
const JSON_WORDS = /\b(?:true|false|null)\b/;
const PY_WORDS = /\b(?:None|True|False)\b/g;
const JSON_OF_PY_WORD: Readonly<Record<string, string>> = { None: 'null', True: 'true', False: 'false' };

/**
 * The common case, read by the engine's JSON parser (an iteration log's lines at several times
 * the grammar's speed): with no double quote and no backslash in the text, every string is
 * single-quoted with no escape, so each `'` delimits one, and swapping the quotes and Python's
 * three words makes the text JSON. `DECLINED` for whatever the grammar could read otherwise: a
 * JSON word in the text, a Python word inside a string (it was swapped too: then fewer words than
 * swaps come back as values), anything JSON.parse refuses (inf, nan, tuples, sets, keys that are
 * not strings, trailing commas, control characters in strings...), nesting the grammar refuses.
 * JSON's numbers, strings, lists and objects (duplicate keys, `__proto__`) read as the grammar's.
 */
export function viaJson(text: string): PyValue | typeof DECLINED {
  if (text.includes('"') || text.includes('\\') || JSON_WORDS.test(text)) return DECLINED;
  let swapped = 0;
  let value: PyValue;
  try {
    value = JSON.parse(
      text.replaceAll("'", '"').replace(PY_WORDS, (w) => {
        swapped++;
        return JSON_OF_PY_WORD[w];
      }),
    ) as PyValue;
  } catch {
    return DECLINED;
  }
  return wordValues(value, 0) === swapped ? value : DECLINED;
}

/** How many null and boolean values `v` holds (the words read as values); -1 past MAX_DEPTH. */
function wordValues(v: PyValue, depth: number): number {
  if (depth > MAX_DEPTH) return -1;
  if (v === null || typeof v === 'boolean') return 1;
  if (typeof v !== 'object') return 0;
  let n = 0;
  const items = Array.isArray(v) ? v : Object.values(v);
  for (const item of items) {
    const k = wordValues(item, depth + 1);
    if (k < 0) return -1;
    n += k;
  }
  return n;
}

const NUMBER_RE = /[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/y;
const HEX_RE = /^[0-9a-fA-F]+$/;
const NAME_RE = /[A-Za-z_][A-Za-z0-9_]*/y;
const SIMPLE_ESCAPES: Record<string, string> = {
  '\\': '\\', "'": "'", '"': '"', n: '\n', r: '\r', t: '\t', a: '\x07', b: '\b', f: '\f', v: '\v',
};

class Parser {
  pos = 0;
  constructor(private readonly src: string) {}

  skipSpace(): void {
    const s = this.src;
    while (this.pos < s.length) {
      const c = s.charCodeAt(this.pos);
      if (c === 32 || c === 9 || c === 10 || c === 13) this.pos++;
      else break;
    }
  }

  private fail(message: string): never {
    throw new PyLiteralError(message, this.pos);
  }

  value(depth: number): PyValue {
    if (depth > MAX_DEPTH) this.fail('nesting too deep');
    const c = this.src[this.pos];
    switch (c) {
      case '{':
        return this.dictOrSet(depth);
      case '[':
        return this.sequence(']', depth);
      case '(':
        return this.sequence(')', depth);
      case "'":
      case '"':
        return this.string();
      case undefined:
        return this.fail('unexpected end of input');
      default:
        return this.scalar();
    }
  }

  /** int, float, inf, nan (optionally signed), None, True, False. */
  private scalar(): PyValue {
    const s = this.src;
    let sign = 1;
    let start = this.pos;
    if (s[start] === '-' || s[start] === '+') {
      sign = s[start] === '-' ? -1 : 1;
      start++;
    }
    NAME_RE.lastIndex = start;
    const name = NAME_RE.exec(s);
    if (name) {
      const word = name[0];
      const signed = start !== this.pos;
      let v: PyValue | undefined;
      if (word === 'inf') v = sign * Infinity;
      else if (word === 'nan') v = NaN;
      else if (!signed && word === 'None') v = null;
      else if (!signed && word === 'True') v = true;
      else if (!signed && word === 'False') v = false;
      if (v === undefined) this.fail(`unsupported name '${word.slice(0, 40)}'`);
      this.pos = start + word.length;
      return v;
    }
    NUMBER_RE.lastIndex = this.pos;
    const num = NUMBER_RE.exec(s);
    if (!num) this.fail(`unexpected character ${JSON.stringify(s[this.pos])}`);
    this.pos += num[0].length;
    return Number(num[0]);
  }

  /** A single- or double-quoted str with Python escapes (no prefixes, no triple quotes: repr never writes them). */
  private string(): string {
    const s = this.src;
    const quote = s[this.pos];
    let i = this.pos + 1;
    let out = '';
    let runStart = i;
    for (;;) {
      if (i >= s.length) {
        this.pos = i;
        this.fail('unterminated string');
      }
      const c = s[i];
      if (c === quote) break;
      if (c === '\n') {
        this.pos = i;
        this.fail('newline in string');
      }
      if (c !== '\\') {
        i++;
        continue;
      }
      out += s.slice(runStart, i);
      const e = s[i + 1];
      if (e === undefined) {
        this.pos = i;
        this.fail('unterminated string');
      }
      i += 2;
      if (e in SIMPLE_ESCAPES) {
        out += SIMPLE_ESCAPES[e];
      } else if (e === '\n') {
        // backslash-newline: line continuation, contributes nothing
      } else if (e === 'x' || e === 'u' || e === 'U') {
        const width = e === 'x' ? 2 : e === 'u' ? 4 : 8;
        const hex = s.slice(i, i + width);
        if (hex.length !== width || !HEX_RE.test(hex)) {
          this.pos = i;
          this.fail(`bad \\${e} escape`);
        }
        const code = parseInt(hex, 16);
        if (code > 0x10ffff) {
          this.pos = i;
          this.fail('code point out of range');
        }
        out += String.fromCodePoint(code);
        i += width;
      } else if (e >= '0' && e <= '7') {
        let j = i;
        while (j < i + 2 && s[j] >= '0' && s[j] <= '7') j++;
        out += String.fromCharCode(parseInt(s.slice(i - 1, j), 8));
        i = j;
      } else {
        // Python keeps unknown escapes (e.g. `\d`) verbatim, backslash included.
        out += '\\' + e;
      }
      runStart = i;
    }
    out += s.slice(runStart, i);
    this.pos = i + 1;
    return out;
  }

  /** `[...]` or `(...)`; a trailing comma is allowed (`(1,)`). */
  private sequence(close: ']' | ')', depth: number): PyValue[] {
    this.pos++;
    const items: PyValue[] = [];
    this.skipSpace();
    while (this.src[this.pos] !== close) {
      items.push(this.value(depth + 1));
      this.skipSpace();
      if (this.src[this.pos] === ',') {
        this.pos++;
        this.skipSpace();
      } else if (this.src[this.pos] !== close) {
        this.fail(`expected ',' or '${close}'`);
      }
    }
    this.pos++;
    return items;
  }

  /** `{k: v, ...}` (dict) or `{a, b}` (set, returned as an array). */
  private dictOrSet(depth: number): PyValue {
    this.pos++;
    this.skipSpace();
    const dict: { [key: string]: PyValue } = {};
    if (this.src[this.pos] === '}') {
      this.pos++;
      return dict;
    }
    const first = this.value(depth + 1);
    this.skipSpace();
    if (this.src[this.pos] !== ':') return this.restOfSet(first, depth);
    let key = first;
    for (;;) {
      // here: at ':' after a key
      if (key !== null && typeof key === 'object') this.fail('unhashable dict key');
      this.pos++;
      this.skipSpace();
      setOwn(dict, String(key), this.value(depth + 1));
      this.skipSpace();
      if (this.src[this.pos] === ',') {
        this.pos++;
        this.skipSpace();
      } else if (this.src[this.pos] !== '}') {
        this.fail("expected ',' or '}'");
      }
      if (this.src[this.pos] === '}') {
        this.pos++;
        return dict;
      }
      key = this.value(depth + 1);
      this.skipSpace();
      if (this.src[this.pos] !== ':') this.fail("expected ':'");
    }
  }

  private restOfSet(first: PyValue, depth: number): PyValue[] {
    const items = [first];
    for (;;) {
      if (this.src[this.pos] === ',') {
        this.pos++;
        this.skipSpace();
      } else if (this.src[this.pos] !== '}') {
        this.fail("expected ',' or '}'");
      }
      if (this.src[this.pos] === '}') {
        this.pos++;
        return items;
      }
      items.push(this.value(depth + 1));
      this.skipSpace();
    }
  }
}

/** Assign without triggering the `__proto__` setter, so a key named `__proto__` is just data. */
function setOwn(obj: { [key: string]: PyValue }, key: string, value: PyValue): void {
  if (key === '__proto__') {
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    obj[key] = value;
  }
}
