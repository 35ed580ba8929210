/**
 * JSON that survives 64-bit integers: a bigint within the safe range becomes a number, one beyond
 * it (utcEpochNs, Windows globalTid) becomes a decimal string, so no value is silently rounded.
 */
export function toJson(value: unknown, indent = 2): string {
  return (
    JSON.stringify(
      value,
      (_key, v) => {
        if (typeof v === 'bigint') return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
        if (v instanceof Map) return Object.fromEntries(v);
        if (v instanceof Set) return [...v];
        return v;
      },
      indent,
    ) + '\n'
  );
}
