/** Human units for the notes the analyses write (presentation has the rest in reports/units.ts). */

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
