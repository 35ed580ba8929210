import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import type { QueryOptions } from './handle.js';
import { pidOf, type IdSource } from './globalIds.js';

/**
 * Where-clauses shared by the activity queries: PID (from `id`, a globalPid or globalTid, or a value bound in its place),
 * device, and a time window that keeps rows overlapping [startNs, endNs). Values are bound.
 */
export function activityFilters(
  eb: ExpressionBuilder<any, any>,
  opts: QueryOptions,
  cols: { start: string; end: string; id: IdSource; device?: string },
): Expression<SqlBool> {
  const conds: Expression<SqlBool>[] = [];
  if (opts.pid !== undefined) conds.push(sql<SqlBool>`${pidOf(cols.id)} = ${opts.pid}`);
  if (opts.deviceId !== undefined && cols.device) conds.push(eb(cols.device, '=', opts.deviceId));
  if (opts.endNs !== undefined) conds.push(eb(cols.start, '<', opts.endNs));
  if (opts.startNs !== undefined) conds.push(eb(cols.end, '>', opts.startNs));
  return conds.length ? eb.and(conds) : sql<SqlBool>`1`;
}

/**
 * `(SELECT value FROM json_each(?))` with the values bound as one JSON array: an IN list of any
 * length, nothing spliced into the SQL.
 */
export function inJsonList(values: Iterable<number | string>) {
  return sql`(SELECT value FROM json_each(${JSON.stringify([...values])}))`;
}
