/**
 * SQL tests for rows whose times an analysis can use (see src/export/rowChecks.ts for why):
 * numeric `start`/`end`, `end >= start`, within +-(2^53 - 1) ns. Written by us, never from input.
 *
 * Comparisons only, no typeof(): SQLite orders NULL < numbers < TEXT < BLOB, and a time column
 * has INTEGER affinity (a TEXT-declared one fails the contract first), so a NULL fails every
 * comparison, a TEXT or BLOB `end` fails `end <= MAX`, and a TEXT or BLOB `start` fails
 * `end >= start`. That costs ~5% of a bare scan where typeof() tests cost ~100%.
 */
export const MAX_SAFE_NS = Number.MAX_SAFE_INTEGER;

/** `start`/`end` of a GPU op or API call (qualified by `alias` when given). */
export function validIntervalSql(alias?: string): string {
  const s = alias ? `${alias}."start"` : '"start"';
  const e = alias ? `${alias}."end"` : '"end"';
  return `(${s} >= -${MAX_SAFE_NS} AND ${e} <= ${MAX_SAFE_NS} AND ${e} >= ${s})`;
}

/** NVTX: `end` may be NULL (marks, ranges never closed). */
export function validNvtxSql(alias?: string): string {
  const s = alias ? `${alias}."start"` : '"start"';
  const e = alias ? `${alias}."end"` : '"end"';
  return `(${s} BETWEEN -${MAX_SAFE_NS} AND ${MAX_SAFE_NS} AND (${e} IS NULL OR (${e} <= ${MAX_SAFE_NS} AND ${e} >= ${s})))`;
}
