import { describe, expect, it } from 'vitest';
import { logTimestampToUtcNs, logTimestampWindows, resolveLogTimeZone } from '../../src/iterations/logTimestampWindows.js';
import { UsageError } from '../../src/errors.js';

const T0 = 1795414728243147361n; // pytorch-torch-only's session start (UTC ns)

describe('logTimestampToUtcNs', () => {
  it('reads %m-%d-%Y %H:%M:%S.%f as UTC, every fraction digit kept', () => {
    expect(logTimestampToUtcNs('11-23-2026 06:18:48.244471', 'UTC')).toBe(BigInt(Date.UTC(2026, 10, 23, 6, 18, 48)) * 1_000_000n + 244_471_000n);
  });

  it('applies a zone, including across a DST change, and fixed offsets', () => {
    const utc = logTimestampToUtcNs('07-01-2026 12:00:00.5', 'UTC')!;
    expect(logTimestampToUtcNs('07-01-2026 14:00:00.5', 'Europe/Paris')).toBe(utc); // CEST, +02:00
    expect(logTimestampToUtcNs('01-01-2026 13:00:00.5', 'Europe/Paris')).toBe(logTimestampToUtcNs('01-01-2026 12:00:00.5', 'UTC')); // CET, +01:00
    expect(logTimestampToUtcNs('07-01-2026 07:00:00.5', '-05:00')).toBe(utc);
  });

  it('gives null for whole seconds (too coarse to delimit iterations) and for non-timestamps', () => {
    expect(logTimestampToUtcNs('2026-11-23 06:18:40', 'UTC')).toBeNull();
    expect(logTimestampToUtcNs('02-30-2026 00:00:00.1', 'UTC')).toBeNull();
    expect(logTimestampToUtcNs('yesterday', 'UTC')).toBeNull();
  });

  it('rejects an unknown zone as a usage error', () => {
    expect(() => resolveLogTimeZone('Mars/Base')).toThrow(UsageError);
    expect(resolveLogTimeZone(undefined)).toBe('UTC');
    expect(resolveLogTimeZone('utc')).toBe('UTC');
  });
});

describe('logTimestampWindows', () => {
  const at = (msAfter: number) => {
    const ns = T0 + BigInt(Math.round(msAfter * 1e6));
    const d = new Date(Number(ns / 1_000_000n));
    const p = (n: number, w = 2) => String(n).padStart(w, '0');
    const frac = String(ns % 1_000_000_000n).padStart(9, '0');
    return `${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())}-${d.getUTCFullYear()} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}.${frac}`;
  };
  const thread = { pid: 571, tid: 571 };

  it('makes [timestamp(N), timestamp(N+1)) windows for the iterations in the capture, numbered by the record', () => {
    const records = [
      { iter: 29, timestamp: at(-7000) },
      { iter: 30, timestamp: at(1.3) },
      { iter: 31, timestamp: at(36) },
      { iter: 32, timestamp: at(160) },
      { iter: 33, timestamp: at(600) },
    ];
    const w = logTimestampWindows(records, T0, 'UTC', thread, { sessionEndNs: 166_750_000 });
    expect(w.map((r) => r.number)).toEqual([30, 31, 32]);
    expect(w.map((r) => [r.startNs, r.rangeEndNs])).toEqual([
      [1_300_000, 36_000_000],
      [36_000_000, 160_000_000],
      // The last one ends with the capture, not at the next record 440 ms later.
      [160_000_000, 166_750_000],
    ]);
    expect(w.every((r) => r.pid === 571 && r.tid === 571 && r.label === null)).toBe(true);
  });

  it('keeps an iteration that began just before the first event (clock skew), clamped to 0', () => {
    const w = logTimestampWindows([{ iter: 30, timestamp: at(-0.3) }, { iter: 31, timestamp: at(34) }], T0, 'UTC', thread, { sessionEndNs: 100_000_000 });
    expect(w.map((r) => [r.number, r.startNs])).toEqual([
      [30, 0],
      [31, 34_000_000],
    ]);
  });
});
