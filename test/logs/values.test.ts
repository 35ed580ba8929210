import { describe, expect, it } from 'vitest';
import { parseLogTimestamp, toDurationMs } from '../../src/logs/index.js';

describe('parseLogTimestamp (local time)', () => {
  it('reads the three formats TensorRT-LLM writes', () => {
    expect(parseLogTimestamp('04-07-2025 20:33:17.747028')).toBeCloseTo(new Date(2025, 3, 7, 20, 33, 17, 747).getTime() + 0.028, 6);
    expect(parseLogTimestamp('12-13-2023 14:55:14')).toBe(new Date(2023, 11, 13, 14, 55, 14).getTime());
    expect(parseLogTimestamp('2026-11-20 23:07:42')).toBe(new Date(2026, 10, 20, 23, 7, 42).getTime());
    expect(parseLogTimestamp(' 2026-11-20 23:07:42.5 ')).toBe(new Date(2026, 10, 20, 23, 7, 42, 500).getTime());
  });

  it.each(['', 'N/A', '2026-13-01 00:00:00', '02-30-2026 00:00:00', '2026-11-20T23:07:42', '11/20/2026-23:07:42', '2026-11-20 24:00:00'])(
    'rejects %j',
    (text) => expect(parseLogTimestamp(text)).toBeNull(),
  );
});

describe('toDurationMs', () => {
  it.each([
    ['302.808ms', 'ms', 302.808],
    ['302.808 ms', 'ms', 302.808],
    ['1.2s', 'ms', 1200],
    ['0.0823206901550293s', 'ms', 82.3206901550293],
    ['1500us', 'ms', 1.5],
    ['2', 's', 2000],
    ['2', 'ms', 2],
    ['N/A', 'ms', null],
    ['N/Ams', 'ms', null],
    ['fast', 'ms', null],
    ['', 'ms', null],
  ] as const)('%j (bare unit %s) → %s', (text, unit, expected) => {
    const v = toDurationMs(text, unit);
    if (expected === null) expect(v).toBeNull();
    else expect(v).toBeCloseTo(expected, 9);
  });

  it('passes JSON numbers through in the bare unit and drops non-finite ones', () => {
    expect(toDurationMs(7.5)).toBe(7.5);
    expect(toDurationMs(NaN)).toBeNull();
    expect(toDurationMs(Infinity)).toBeNull();
    expect(toDurationMs(null)).toBeNull();
  });
});
