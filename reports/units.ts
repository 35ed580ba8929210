/** Number formatting shared by the human-readable writers (terminal table and Markdown). */

export { formatNs } from '../src/formatNs.js';
import { formatCount } from '../src/formatNs.js';

/** One decimal place, as SQLite's `round(x, 1)` prints it in nsys's reports. */
export function formatDecimal1(x: number): string {
  const r = x.toFixed(1);
  return r === '-0.0' ? '0.0' : r;
}

/** Integer with thousands separators for people; raw digits are for CSV/JSON. */
export function formatInt(x: number | bigint): string {
  return formatCount(typeof x === 'bigint' ? x : Math.round(x));
}

/** A plain number with at most 4 decimals and no trailing zeros. */
export function formatFloat(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  return Number.isInteger(x) ? String(x) : String(Number(x.toFixed(4)));
}
