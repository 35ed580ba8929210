import { sql } from 'kysely';
import type { ExportHandle } from './handle.js';

/** Thread names (`ThreadNames`), with PID and TID unpacked from `globalTid`. */
export function selectThreads(handle: ExportHandle) {
  return handle.db
    .selectFrom('ThreadNames as t')
    .leftJoin('StringIds as s', 's.id', 't.nameId')
    .select([
      't.globalTid',
      sql<number>`((t.globalTid >> 24) & 16777215)`.as('pid'),
      sql<number>`(t.globalTid & 16777215)`.as('tid'),
      's.value as name',
      't.priority',
    ]);
}
