import { sql, type RawBuilder } from 'kysely';

// nsys serializes ids into one 64-bit integer: the TID in bits 0-23, the PID in bits 24-47, higher
// ids above (a globalPid is the same with TID 0). These expressions unpack them in SQL, in one place.

/** SQL for the PID packed in a serialized global id (globalTid or globalPid): `(id >> 24) & 0xFFFFFF`. */
export function pidOf(column: string): RawBuilder<number> {
  return sql<number>`((${sql.ref(column)} >> 24) & 16777215)`;
}

/** SQL for the TID packed in a serialized globalTid: `id & 0xFFFFFF`. */
export function tidOf(column: string): RawBuilder<number> {
  return sql<number>`(${sql.ref(column)} & 16777215)`;
}

/** SQL for pid and tid in one number, `pid * 2^24 + tid` (as `threadKey` computes it in JS). */
export function threadKeyOf(column: string): RawBuilder<number> {
  return sql<number>`(${pidOf(column)} * 16777216 + ${tidOf(column)})`;
}

/**
 * SQL for the process half of a globalTid, `id >> 24` (hardware, VM and PID bits): nsys joins a
 * GPU op to its API call on `op.globalPid = call.globalTid & ~0xFFFFFF`, i.e. on equal halves.
 */
export function processPartOf(column: string): RawBuilder<number | null> {
  return sql<number | null>`(${sql.ref(column)} >> 24)`;
}

/** `processPartOf` for a globalPid, NULL when its thread field is not 0 (such a row joins no call). */
export function processPartOfGlobalPid(column: string): RawBuilder<number | null> {
  return sql<number | null>`CASE WHEN ${tidOf(column)} = 0 THEN ${sql.ref(column)} >> 24 END`;
}
