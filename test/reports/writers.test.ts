/** The writers: exact output for one small table in every format. */
import { describe, expect, it } from 'vitest';
import {
  csvField,
  formatDecimal1,
  formatInt,
  formatNs,
  mdEscape,
  render,
  tablesToCsv,
  tableToCsv,
  tableToMarkdown,
  tableToTerminal,
  toJson,
  type DataTable,
} from '../../reports/index.js';
import { parseCsv } from '../helpers/csv.js';

const table: DataTable = {
  title: 'Kernels | demo',
  columns: [
    { key: 'name', header: 'Name', kind: 'text' },
    { key: 'total', header: 'Total Time (ns)', kind: 'ns' },
    { key: 'count', header: 'Instances', kind: 'int' },
    { key: 'avg', header: 'Avg (ns)', kind: 'decimal1' },
    { key: 'pct', header: 'Time (%)', kind: 'percent' },
    { key: 'ratio', header: 'Ratio', kind: 'float' },
  ],
  rows: [
    { name: 'gemm', total: 26279587, count: 1234567, avg: 21.24, pct: 12.34, ratio: 0.123456 },
    { name: 'a,b "q"\nline2', total: 999, count: 3, avg: 2, pct: 100, ratio: 2 },
    { name: 'pipe|back\\slash', total: null, count: 1795216100040024556n, avg: -0.04, pct: 0, ratio: undefined },
  ],
  notes: ['a note | with pipe'],
};

describe('csv', () => {
  it('prints raw values and quotes commas, quotes and line breaks as RFC 4180 says', () => {
    expect(tableToCsv(table)).toBe(
      'Name,Total Time (ns),Instances,Avg (ns),Time (%),Ratio\n' +
        'gemm,26279587,1234567,21.2,12.3,0.123456\n' +
        '"a,b ""q""\nline2",999,3,2.0,100.0,2\n' +
        'pipe|back\\slash,,1795216100040024556,0.0,0.0,\n',
    );
  });

  it('round-trips through an RFC 4180 parser', () => {
    const parsed = parseCsv(tableToCsv(table));
    expect(parsed.map((r) => r[0])).toEqual(['Name', 'gemm', 'a,b "q"\nline2', 'pipe|back\\slash']);
    expect(parsed.every((r) => r.length === 6)).toBe(true);
  });

  it('(the test CSV parser reads CRLF and empty fields, and rejects broken quoting)', () => {
    expect(parseCsv('a,b\r\n"x\r\ny",\r\n')).toEqual([
      ['a', 'b'],
      ['x\r\ny', ''],
    ]);
    expect(() => parseCsv('"open')).toThrow(/unterminated/);
    expect(() => parseCsv('"a"b')).toThrow(/after closing quote/);
    expect(() => parseCsv('a"b')).toThrow(/quote inside/);
  });

  it('quotes only when needed', () => {
    expect(csvField('plain text')).toBe('plain text');
    expect(csvField('')).toBe('');
    expect(csvField('"')).toBe('""""');
    expect(csvField('cr\rhere')).toBe('"cr\rhere"');
  });

  it('several tables: a # title line before each, a blank line between', () => {
    const a: DataTable = { title: 'A', columns: [{ key: 'x', header: 'x', kind: 'int' }], rows: [{ x: 1 }] };
    const b: DataTable = { title: 'B', columns: [{ key: 'y', header: 'y', kind: 'text' }], rows: [{ y: 'v' }] };
    expect(tablesToCsv([a, b])).toBe('# A\nx\n1\n\n# B\ny\nv\n');
    expect(tablesToCsv([a])).toBe('x\n1\n');
  });
});

describe('markdown', () => {
  it('escapes |, backslashes and line breaks; right-aligns numbers in human units', () => {
    expect(tableToMarkdown(table)).toBe(
      '### Kernels \\| demo\n' +
        '\n' +
        '| Name | Total Time | Instances | Avg (ns) | Time (%) | Ratio |\n' +
        '| --- | ---: | ---: | ---: | ---: | ---: |\n' +
        '| gemm | 26.28 ms | 1,234,567 | 21.2 | 12.3% | 0.1235 |\n' +
        '| a,b "q" line2 | 999 ns | 3 | 2.0 | 100.0% | 2 |\n' +
        '| pipe\\|back\\\\slash |  | 1,795,216,100,040,024,556 | 0.0 | 0.0% |  |\n' +
        '\n' +
        '> a note \\| with pipe\n',
    );
  });

  it('mdEscape', () => {
    expect(mdEscape('a|b')).toBe('a\\|b');
    expect(mdEscape('x\r\ny')).toBe('x y');
  });
});

describe('json', () => {
  it('keeps 64-bit integers exact: big ones as strings, small bigints as numbers', () => {
    expect(toJson({ big: 1795216100040024556n, small: 42n, neg: -9007199254740993n, edge: 9007199254740991n })).toBe(
      '{\n  "big": "1795216100040024556",\n  "small": 42,\n  "neg": "-9007199254740993",\n  "edge": 9007199254740991\n}\n',
    );
  });

  it('writes Maps as objects and Sets as arrays', () => {
    expect(toJson({ m: new Map([['a', 1n]]), s: new Set([1, 2]) }, 0)).toBe('{"m":{"a":1},"s":[1,2]}\n');
  });

  it('writes Sets as arrays once vega-lite (the HTML report) has given Set.prototype a toJSON', async () => {
    await import('vega-lite');
    expect(JSON.stringify(new Set([1, 2]))).toBe('"Set(1,2)"');
    expect(toJson({ s: new Set([1, 2]), nested: [new Set(['a'])], m: new Map([['k', new Set([3n])]]) }, 0)).toBe('{"s":[1,2],"nested":[["a"]],"m":{"k":[3]}}\n');
  });

  it('render(json) prints the data, not the tables', () => {
    expect(render('json', [table], { rows: 1 })).toBe('{\n  "rows": 1\n}\n');
  });
});

describe('terminal table', () => {
  it('shows human units, thousands separators and percent signs, numbers right-aligned', () => {
    expect(tableToTerminal(table)).toBe(
      [
        'Kernels | demo',
        '┌─────────────────┬────────────┬───────────────────────────┬──────────┬──────────┬────────┐',
        '│ Name            │ Total Time │                 Instances │ Avg (ns) │ Time (%) │  Ratio │',
        '├─────────────────┼────────────┼───────────────────────────┼──────────┼──────────┼────────┤',
        '│ gemm            │   26.28 ms │                 1,234,567 │     21.2 │    12.3% │ 0.1235 │',
        '│ a,b "q"         │     999 ns │                         3 │      2.0 │   100.0% │      2 │',
        '│ line2           │            │                           │          │          │        │',
        '│ pipe|back\\slash │            │ 1,795,216,100,040,024,556 │      0.0 │     0.0% │        │',
        '└─────────────────┴────────────┴───────────────────────────┴──────────┴──────────┴────────┘',
        'note: a note | with pipe',
        '',
      ].join('\n'),
    );
  });

  it('clips long cells', () => {
    const long: DataTable = { columns: [{ key: 'n', header: 'N', kind: 'text' }], rows: [{ n: 'x'.repeat(20) }] };
    expect(tableToTerminal(long, { maxCellWidth: 8 })).toContain('│ xxxxxxx… │');
  });
});

describe('units', () => {
  it('formatNs picks the unit of the printed value', () => {
    const cases: [number | bigint, string][] = [
      [0, '0 ns'],
      [999, '999 ns'],
      [999.6, '1.00 us'],
      [1234, '1.23 us'],
      [999_999, '1.00 ms'],
      [26_279_587, '26.28 ms'],
      [999_999_999, '1.000 s'],
      [7_768_478_644, '7.768 s'],
      [-1500, '-1.50 us'],
      [26_279_587n, '26.28 ms'],
    ];
    for (const [v, s] of cases) expect(formatNs(v), String(v)).toBe(s);
  });

  it('formatDecimal1 and formatInt', () => {
    expect(formatDecimal1(46424.14)).toBe('46424.1');
    expect(formatDecimal1(-0.04)).toBe('0.0');
    expect(formatDecimal1(543)).toBe('543.0');
    expect(formatInt(1234567.4)).toBe('1,234,567');
    expect(formatInt(1795216100040024556n)).toBe('1,795,216,100,040,024,556');
  });
});

describe('Markdown escapes `<` so GitHub keeps template arguments', () => {
  it('at::native::<unnamed> survives', async () => {
    const { mdEscape } = await import('../../reports/markdown.js');
    expect(mdEscape('at::native::<unnamed>::f | x')).toBe('at::native::\\<unnamed>::f \\| x');
  });
});

describe('formatCount writes what toLocaleString("en-US") writes, without ICU', () => {
  it('integers of every length and sign, bigints, and the values it hands to toLocaleString', async () => {
    const { formatCount } = await import('../../src/formatNs.js');
    const values: (number | bigint)[] = [0, -0, 1, -1, 12, 999, 1000, -1000, 9999, 12345, 123456, 1234567, -7654321, 2 ** 31, 2 ** 53, 2 ** 53 + 2, -(2 ** 53), 1e20, 1e21, 1.5e22, 0.5, 1234.5678, -0.3, NaN, Infinity, -Infinity, 0n, 999n, 1000n, -1795216100040024556n, 123456789012345678901234567890n];
    // Every digit count from 1 to 21, each sign.
    for (let d = 1; d <= 21; d++) values.push(Number('9'.repeat(d)), -Number('1'.repeat(d)));
    for (const v of values) expect(formatCount(v), String(v)).toBe(v.toLocaleString('en-US'));
  });
});
