import { UsageError } from '../errors.js';

const UNIT_NS: Record<string, number> = { ns: 1, us: 1e3, 'µs': 1e3, 'μs': 1e3, ms: 1e6, s: 1e9 };

/**
 * Parses a duration option (`--min-gap`) into integer nanoseconds: a non-negative number followed by
 * a unit, `ns`, `us` (or `µs`), `ms` or `s`: `500ns`, `100us`, `1ms`, `0.5s`, `2.5 ms`.
 *
 * A bare number is refused (except `0`): nsys's own `--gap` takes milliseconds, our output prints
 * nanoseconds, so `500` is ambiguous and guessing wrong silently changes the report a thousandfold.
 * The value is rounded to the nearest ns. Anything else throws a UsageError naming the option.
 */
export function parseDurationNs(value: string, option = '--min-gap'): number {
  const text = value.trim();
  const m = /^(\d+(?:\.\d*)?|\.\d+)(?:e([+-]?\d+))?\s*([a-zµμ]*)$/i.exec(text);
  if (!m) throw new UsageError(`${option}: expected a duration such as 100us, 1ms, 0.5s or 500ns (got '${value}')`);
  const num = Number(m[1] + (m[2] !== undefined ? `e${m[2]}` : ''));
  const unit = m[3].toLowerCase();
  if (unit === '') {
    if (num === 0) return 0;
    throw new UsageError(`${option}: '${value}' needs a unit: ns, us, ms or s (e.g. ${value}us or ${value}ms)`);
  }
  const scale = UNIT_NS[unit];
  if (scale === undefined) throw new UsageError(`${option}: unknown unit '${m[3]}' in '${value}' (use ns, us, ms or s)`);
  const ns = Math.round(num * scale);
  if (!Number.isSafeInteger(ns)) throw new UsageError(`${option}: '${value}' is too large`);
  return ns;
}
