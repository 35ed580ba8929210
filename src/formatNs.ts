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

/**
 * An integer count with comma thousands separators, exactly as `toLocaleString('en-US')` writes it
 * (`1234567` -> `1,234,567`, bigints too), without ICU: the first locale-aware formatting in a
 * thread loads ICU's number formatter, ~12 ms of a `report`'s main thread on the bench machine.
 * What this does not group itself (a fraction, -0, NaN, infinities, 1e21 and up) goes to
 * `toLocaleString`, so the text is the same for every value.
 */
export function formatCount(n: number | bigint): string {
  if (typeof n === 'number' && !(Number.isInteger(n) && Math.abs(n) < 1e21 && !Object.is(n, -0))) return n.toLocaleString('en-US');
  const s = String(n);
  const sign = s.startsWith('-') ? '-' : '';
  const digits = sign ? s.slice(1) : s;
  let out = digits.slice(0, ((digits.length - 1) % 3) + 1);
  for (let i = out.length; i < digits.length; i += 3) out += `,${digits.slice(i, i + 3)}`;
  return sign + out;
}
