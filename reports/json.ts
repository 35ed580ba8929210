/**
 * JSON that survives 64-bit integers: a bigint within the safe range becomes a number, one beyond
 * it (utcEpochNs, Windows globalTid) becomes a decimal string, so no value is silently rounded.
 * Maps become objects, Sets arrays, before JSON.stringify asks them for a `toJSON`: vega-lite,
 * loaded for the HTML report, gives every Set one that writes "Set(1,2)" (and throws on a bigint).
 */
export function toJson(value: unknown, indent = 2): string {
  return JSON.stringify(plainCollection(value), jsonValue, indent) + '\n';
}

function jsonValue(_key: string, v: unknown): unknown {
  if (typeof v === 'bigint') return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
  const plain = plainCollection(v);
  return plain !== null && typeof plain === 'object' && !ArrayBuffer.isView(plain) ? withPlainMembers(plain) : plain;
}

const isCollection = (m: unknown): boolean => m instanceof Map || m instanceof Set;

/** A Map as an object, a Set as an array; anything else as it is. */
function plainCollection(v: unknown): unknown {
  if (v instanceof Map) return Object.fromEntries(v);
  if (v instanceof Set) return [...v];
  return v;
}

/** `v`, or a shallow copy whose Map and Set members are plain (JSON.stringify reads members' `toJSON` before the replacer sees them). */
function withPlainMembers(v: object): object {
  if (Array.isArray(v)) return v.some(isCollection) ? v.map(plainCollection) : v;
  let copy: Record<string, unknown> | null = null;
  for (const [k, m] of Object.entries(v)) {
    if (!isCollection(m)) continue;
    copy ??= { ...(v as Record<string, unknown>) };
    copy[k] = plainCollection(m);
  }
  return copy ?? v;
}

/**
 * `toJson` with every array of plain numbers on one line: a summary's sketches (hundreds of
 * numbers) stay a few lines each, so a baseline in git stays small and its diffs readable.
 */
export function toJsonNumberRows(value: unknown): string {
  return toJson(value).replace(/\[\s*(-?\d[\d.eE+-]*(?:,\s*-?\d[\d.eE+-]*)*)\s*\]/g, (_m, body: string) => `[${body.split(/,\s*/).join(',')}]`);
}
