/**
 * Coercion of individual field values. Logs write numbers as JSON numbers, Python reprs or
 * plain text (`302.808ms`, `0.08s`, `N/A`); everything unusable becomes `null` instead of a
 * guessed value.
 */

const NUMBER_TEXT_RE = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const DURATION_RE = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*(ns|us|µs|ms|s)?$/;
/** `N/A` as the text log prints a missing value; v2 even glues the unit on (`N/Ams`). */
const NOT_AVAILABLE_RE = /^N\/A\s*(?:ns|us|µs|ms|s)?$/i;

export type DurationUnit = 'ns' | 'us' | 'ms' | 's';
const MS_PER_UNIT: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000 };

/** A finite number from a number or numeric text; null for anything else (incl. N/A, inf, nan). */
export function toNumber(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string') {
    const s = value.trim();
    if (!NUMBER_TEXT_RE.test(s)) return null;
    const n = Number(s);
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

/** Like `toNumber`, for counts: only non-negative integers pass. */
export function toCount(value: unknown): number | null {
  const n = toNumber(value);
  return n !== null && Number.isInteger(n) && n >= 0 ? n : null;
}

/**
 * A duration in ms from `302.808ms`, `302.808 ms`, `1.2s`, a bare number (read in `bareUnit`),
 * or a JSON number. `N/A` (with or without a unit) → null.
 */
export function toDurationMs(value: unknown, bareUnit: DurationUnit = 'ms'): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value * MS_PER_UNIT[bareUnit] : null;
  if (typeof value !== 'string') return null;
  const s = value.trim();
  if (NOT_AVAILABLE_RE.test(s)) return null;
  const m = DURATION_RE.exec(s);
  if (!m) return null;
  const n = Number(m[1]);
  if (!Number.isFinite(n)) return null;
  return n * MS_PER_UNIT[m[2] ?? bareUnit];
}

export function toText(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
