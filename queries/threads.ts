import { sql } from 'kysely';
import { pidOf, tidOf } from './globalIds.js';
import type { ExportHandle } from './handle.js';
import { columnOrNull } from './optionalColumns.js';

/**
 * Thread names (`ThreadNames`), with PID and TID unpacked from `globalTid`. Without `StringIds`
 * (an export with no kernel, API or NVTX table to need it, else contract.ts refuses it) the
 * threads are listed unnamed.
 */
export function selectThreads(handle: ExportHandle) {
  const strings = handle.hasTable('StringIds');
  return handle.db.selectFrom('ThreadNames as t').select((eb) => [
    't.globalTid',
    pidOf('t.globalTid').as('pid'),
    tidOf('t.globalTid').as('tid'),
    // StringIds.id is its primary key: the lookup is the LEFT JOIN it replaces.
    strings ? eb.selectFrom('StringIds as s').select('s.value').whereRef('s.id', '=', 't.nameId').as('name') : sql<string | null>`NULL`.as('name'),
    columnOrNull<number>(handle, 'ThreadNames', 'priority', 't.priority').as('priority'),
  ]);
}
