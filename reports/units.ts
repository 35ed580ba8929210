/** Number formatting shared by the human-readable writers (terminal table and Markdown). */

function trimFixed(x: number, digits: number): string {
  return x.toFixed(digits);
}

/** `1234` -> `1.23 us`; `26279587` -> `26.28 ms`; `0` -> `0 ns`. Negative values keep their sign. */
export function formatNs(ns: number | bigint): string {
  const v = typeof ns === 'bigint' ? Number(ns) : ns;
  const a = Math.abs(v);
  // Pick the unit by the value as printed, so rounding never shows `1000 ns` or `1000.00 us`.
  if (Math.round(a) < 1e3) return `${Math.round(v)} ns`;
  if (Number((a / 1e3).toFixed(2)) < 1e3) return `${trimFixed(v / 1e3, 2)} us`;
  if (Number((a / 1e6).toFixed(2)) < 1e3) return `${trimFixed(v / 1e6, 2)} ms`;
  return `${trimFixed(v / 1e9, 3)} s`;
}

/** One decimal place, as SQLite's `round(x, 1)` prints it in nsys's reports. */
export function formatDecimal1(x: number): string {
  const r = x.toFixed(1);
  return r === '-0.0' ? '0.0' : r;
}

/** Integer with thousands separators for people; raw digits are for CSV/JSON. */
export function formatInt(x: number | bigint): string {
  return typeof x === 'bigint' ? x.toLocaleString('en-US') : Math.round(x).toLocaleString('en-US');
}

/** A plain number with at most 4 decimals and no trailing zeros. */
export function formatFloat(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  return Number.isInteger(x) ? String(x) : String(Number(x.toFixed(4)));
}
