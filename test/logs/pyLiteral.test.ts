import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { parsePyLiteral, PyLiteralError, type PyValue } from '../../src/logs/index.js';
import { DECLINED, parseByGrammar, viaJson } from '../../src/logs/pyLiteral.js';
import { fixture } from '../helpers/fixtures.js';

describe('parsePyLiteral', () => {
  it('parses the scalar forms repr() writes', () => {
    expect(parsePyLiteral('None')).toBeNull();
    expect(parsePyLiteral('True')).toBe(true);
    expect(parsePyLiteral('False')).toBe(false);
    expect(parsePyLiteral('-12')).toBe(-12);
    expect(parsePyLiteral('302.80752899999896')).toBe(302.80752899999896);
    expect(parsePyLiteral('1e-05')).toBe(1e-5);
    expect(parsePyLiteral('-1.5e+300')).toBe(-1.5e300);
    expect(parsePyLiteral('inf')).toBe(Infinity);
    expect(parsePyLiteral('-inf')).toBe(-Infinity);
    expect(parsePyLiteral('nan')).toBeNaN();
    expect(Object.is(parsePyLiteral('-0.0'), -0)).toBe(true);
  });

  it('parses strings with both quote styles and escapes', () => {
    expect(parsePyLiteral(`'it\\'s'`)).toBe("it's");
    expect(parsePyLiteral(`"it's"`)).toBe("it's");
    expect(parsePyLiteral(`'a\\nb\\t\\\\ \\x41\\u00e9\\U0001F600\\0\\101'`)).toBe('a\nb\t\\ Aé😀\0A');
    expect(parsePyLiteral(`'\\d'`)).toBe('\\d'); // unknown escapes stay verbatim, as in Python
    expect(parsePyLiteral(`'é😀'`)).toBe('é😀');
  });

  it('parses nested containers, tuples, sets and trailing commas', () => {
    expect(parsePyLiteral("{'a': [1, (2,), ()], 'b': {'c': None}, 3: {4, 5},}")).toEqual({
      a: [1, [2], []],
      b: { c: null },
      '3': [4, 5],
    });
    expect(parsePyLiteral('  {}  ')).toEqual({});
  });

  it('stores a "__proto__" key as data', () => {
    const v = parsePyLiteral("{'__proto__': {'polluted': 1}}") as Record<string, unknown>;
    expect(Object.keys(v)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each([
    ['empty input', '', 'unexpected end'],
    ['an unclosed dict', "{'a': 1", "expected ','"],
    ['a missing colon', "{'a': 1, 'b' 2}", "expected ':'"],
    ['an unterminated string', "'abc", 'unterminated'],
    ['trailing text', "{'a': 1} x", 'trailing'],
    ['a call', '__import__("os")', 'unsupported name'],
    ['a signed name', '-None', 'unsupported name'],
    ['a short \\x escape', "'\\x4'", 'bad \\x escape'],
    ['a list as dict key', '{[1]: 2}', 'unhashable'],
    ['10000 nested lists', '['.repeat(10000), 'too deep'],
  ])('rejects %s', (_label, text, message) => {
    expect(() => parsePyLiteral(text)).toThrow(PyLiteralError);
    expect(() => parsePyLiteral(text)).toThrow(message);
  });
});

// ---------------------------------------------------------------------------------------------
// Round trip: generate Python values, write them as repr() does, parse them back.

type PyNode =
  | { t: 'none' }
  | { t: 'bool'; v: boolean }
  | { t: 'int'; v: number }
  | { t: 'float'; v: number }
  | { t: 'str'; v: string }
  | { t: 'list'; items: PyNode[] }
  | { t: 'tuple'; items: PyNode[] }
  | { t: 'dict'; entries: [string, PyNode][] };

/** Any UTF-16 code unit, lone surrogates included. */
const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));
const pyString = fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: codeUnit }), fc.string());

/** Python values (nested lists, tuples and dicts) whose strings and keys come from `str`. */
function pyNodes(str: fc.Arbitrary<string>): fc.Arbitrary<PyNode> {
  return fc.letrec<{ node: PyNode }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.constant<PyNode>({ t: 'none' }),
      fc.boolean().map((v): PyNode => ({ t: 'bool', v })),
      fc.maxSafeInteger().map((v): PyNode => ({ t: 'int', v })),
      fc.double().map((v): PyNode => ({ t: 'float', v })),
      str.map((v): PyNode => ({ t: 'str', v })),
      fc.array(tie('node'), { maxLength: 4 }).map((items): PyNode => ({ t: 'list', items })),
      fc.array(tie('node'), { maxLength: 4 }).map((items): PyNode => ({ t: 'tuple', items })),
      fc
        .uniqueArray(fc.tuple(str, tie('node')), { maxLength: 4, selector: ([k]) => k })
        .map((entries): PyNode => ({ t: 'dict', entries })),
    ),
  })).node;
}

const node = pyNodes(pyString);

/** What the parser should return for a node. */
function toJs(n: PyNode): PyValue {
  switch (n.t) {
    case 'none':
      return null;
    case 'bool':
    case 'int':
    case 'float':
    case 'str':
      return n.v;
    case 'list':
    case 'tuple':
      return n.items.map(toJs);
    case 'dict': {
      const out: Record<string, PyValue> = {};
      for (const [k, v] of n.entries) Object.defineProperty(out, k, { value: toJs(v), enumerable: true, writable: true, configurable: true });
      return out;
    }
  }
}

interface Style {
  asciiOnly: boolean; // like ascii(): escape every non-ASCII character
  compact: boolean; // ',' and ':' without the spaces repr() writes
}

/** Python's float repr: exponent with a sign and at least two digits, '.0' on integral values. */
function pyFloat(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (Object.is(x, -0)) return '-0.0';
  const s = String(x);
  const m = /^(-?[\d.]+)e([+-])(\d+)$/.exec(s);
  if (m) return `${m[1]}e${m[2]}${m[3].padStart(2, '0')}`;
  return s.includes('.') ? s : `${s}.0`;
}

/** Python's str repr: single quotes unless the text has ' and no ", \x/\u/\U for non-printables. */
function pyStr(s: string, style: Style): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '\\') out += '\\\\';
    else if (ch === quote) out += '\\' + quote;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20 || (c >= 0x7f && c < 0xa0)) out += '\\x' + c.toString(16).padStart(2, '0');
    else if ((c >= 0xd800 && c <= 0xdfff) || (style.asciiOnly && c > 0x7f)) {
      out += c <= 0xff ? '\\x' + c.toString(16).padStart(2, '0') : c <= 0xffff ? '\\u' + c.toString(16).padStart(4, '0') : '\\U' + c.toString(16).padStart(8, '0');
    } else out += ch;
  }
  return out + quote;
}

function pyRepr(n: PyNode, style: Style): string {
  const comma = style.compact ? ',' : ', ';
  const colon = style.compact ? ':' : ': ';
  switch (n.t) {
    case 'none':
      return 'None';
    case 'bool':
      return n.v ? 'True' : 'False';
    case 'int':
      return String(n.v);
    case 'float':
      return pyFloat(n.v);
    case 'str':
      return pyStr(n.v, style);
    case 'list':
      return `[${n.items.map((i) => pyRepr(i, style)).join(comma)}]`;
    case 'tuple':
      return n.items.length === 1 ? `(${pyRepr(n.items[0], style)},)` : `(${n.items.map((i) => pyRepr(i, style)).join(comma)})`;
    case 'dict':
      return `{${n.entries.map(([k, v]) => pyStr(k, style) + colon + pyRepr(v, style)).join(comma)}}`;
  }
}

describe('parsePyLiteral round trip (property)', () => {
  it('parses back what a Python-repr writer wrote, for nested values', () => {
    fc.assert(
      fc.property(node, fc.boolean(), fc.boolean(), (n, asciiOnly, compact) => {
        const text = pyRepr(n, { asciiOnly, compact });
        expect(parsePyLiteral(text)).toEqual(toJs(n));
      }),
      { numRuns: 500 },
    );
  });

  it('round-trips top-level dicts like the iteration log lines', () => {
    const dictNode = fc
      .uniqueArray(fc.tuple(pyString, node), { minLength: 1, maxLength: 8, selector: ([k]) => k })
      .map((entries): PyNode => ({ t: 'dict', entries }));
    fc.assert(
      fc.property(dictNode, (n) => {
        expect(parsePyLiteral(pyRepr(n, { asciiOnly: false, compact: false }))).toEqual(toJs(n));
      }),
      { numRuns: 300 },
    );
  });

  it('never throws anything but PyLiteralError', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: codeUnit }), fc.string({ unit: fc.constantFrom(...`{}[](),:'"\\ 0123456789.eE+-xuUTrueFalseNoneinfnan`.split('')) })), (s) => {
        try {
          parsePyLiteral(s);
        } catch (err) {
          expect(err).toBeInstanceOf(PyLiteralError);
        }
      }),
      { numRuns: 2000 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// The JSON path: the common case (no double quote, no backslash) read by JSON.parse must read
// exactly what the grammar reads (values, key order, -0), or decline.

/** Equal as the grammar's values are: Object.is on numbers (-0, NaN), keys in the same order. */
function sameValue(a: PyValue, b: PyValue): boolean {
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return Object.is(a, b);
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length || ka.some((k, i) => k !== kb[i])) return false;
  return ka.every((k) => sameValue((a as Record<string, PyValue>)[k], (b as Record<string, PyValue>)[k]));
}

/** What the JSON path must do with `text`: decline, or give the grammar's value (and never read what the grammar refuses). */
function agreesWithGrammar(text: string): 'read' | 'declined' {
  const fast = viaJson(text);
  if (fast === DECLINED) return 'declined';
  let slow: PyValue;
  try {
    slow = parseByGrammar(text);
  } catch (err) {
    throw new Error(`the JSON path read ${JSON.stringify(text)}, which the grammar refuses: ${(err as Error).message}`);
  }
  if (!sameValue(fast, slow)) throw new Error(`the JSON path read ${JSON.stringify(text)} as ${JSON.stringify(fast)}, the grammar as ${JSON.stringify(slow)}`);
  return 'read';
}

describe('parsePyLiteral: the JSON path', () => {
  /** Strings the JSON path can take: no quote of either kind, no backslash; Python and JSON words, brackets, non-ASCII among them. */
  const plainString = fc.array(fc.constantFrom('a', 'Z', ' ', '_', '1', 'é', '中', '{', ']', ':', ',', 'None', 'True', 'False', 'null', 'true', 'inf', 'x-y'), { maxLength: 6 }).map((p) => p.join(''));
  const plainNode = pyNodes(plainString);

  it('reads what the grammar reads, or declines: repr() texts of values with plain strings', () => {
    const outcomes = new Set<string>();
    fc.assert(
      fc.property(plainNode, fc.boolean(), (n, compact) => {
        const text = pyRepr(n, { asciiOnly: false, compact });
        outcomes.add(agreesWithGrammar(text));
        expect(parsePyLiteral(text)).toEqual(toJs(n));
      }),
      { numRuns: 1000 },
    );
    // Both ways were taken (a word inside a string, a tuple, inf or nan declines).
    expect([...outcomes].sort()).toEqual(['declined', 'read']);
  });

  it('reads what the grammar reads, or declines: token soup (JSON words, sets, int keys, bad nesting, stray quotes)', () => {
    const token = fc.constantFrom('{', '}', '[', ']', '(', ')', "'", '"', '\\', ':', ',', ' ', '\t', '\n', '0', '7', '-', '.', 'e', '1e400', '-0', 'None', 'True', 'False', 'true', 'false', 'null', 'inf', 'nan', 'a', 'é', '__proto__', "'k'", "'v'");
    fc.assert(
      fc.property(fc.array(token, { maxLength: 24 }).map((t) => t.join('')), (text) => {
        agreesWithGrammar(text);
      }),
      { numRuns: 5000 },
    );
  });

  it('examples: a Python word in a string, a JSON word, a duplicate key, __proto__, -0, nesting past the cap', () => {
    expect(viaJson("{'a': 'None', 'b': None}")).toBe(DECLINED);
    expect(parsePyLiteral("{'a': 'None', 'b': None}")).toEqual({ a: 'None', b: null });
    // A double-quoted string holding quote-comma-quote: swapping the quotes would make it two strings.
    expect(viaJson(`["a', 'b"]`)).toBe(DECLINED);
    expect(parsePyLiteral(`["a', 'b"]`)).toEqual(["a', 'b"]);
    expect(viaJson("{'a': true}")).toBe(DECLINED);
    // A JSON word outside strings and a Python word inside one: as many words read as swapped.
    expect(viaJson("['None', true]")).toBe(DECLINED);
    expect(() => parsePyLiteral("['None', true]")).toThrow(PyLiteralError);
    // (A JSON word anywhere declines, inside a string too: the grammar reads those.)
    expect(viaJson("{'a': 'true'}")).toBe(DECLINED);
    expect(parsePyLiteral("{'a': 'true'}")).toEqual({ a: 'true' });
    expect(() => parsePyLiteral("{'a': true}")).toThrow(PyLiteralError);
    expect(agreesWithGrammar("{'k': 1, 'j': 2, 'k': 3}")).toBe('read');
    expect(Object.keys(parsePyLiteral("{'k': 1, 'j': 2, 'k': 3}") as object)).toEqual(['k', 'j']);
    expect(agreesWithGrammar("{'__proto__': [-0.0, 1e-05, True]}")).toBe('read');
    expect(Object.is((parsePyLiteral('[-0.0]') as number[])[0], -0)).toBe(true);
    const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
    expect(agreesWithGrammar(deep(257))).toBe('read');
    expect(viaJson(deep(258))).toBe(DECLINED);
    expect(() => parsePyLiteral(deep(258))).toThrow(PyLiteralError);
  });

  it('reads every record line of a real TensorRT-LLM iteration log (pytorch-dense)', () => {
    const lines = readFileSync(fixture('pytorch-dense', 'iteration_log.txt'), 'utf8').split('\n').filter((l) => l.startsWith('{'));
    expect(lines.length).toBeGreaterThan(10);
    for (const line of lines) expect(agreesWithGrammar(line), line.slice(0, 80)).toBe('read');
  });
});
