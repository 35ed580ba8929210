import { pidOf, tidOf } from './globalIds.js';
import type { ExportHandle } from './handle.js';
import { columnOrNull } from './optionalColumns.js';

/** Thread names (`ThreadNames`), with PID and TID unpacked from `globalTid`. */
export function selectThreads(handle: ExportHandle) {
  return handle.db
    .selectFrom('ThreadNames as t')
    .leftJoin('StringIds as s', 's.id', 't.nameId')
    .select([
      't.globalTid',
      pidOf('t.globalTid').as('pid'),
      tidOf('t.globalTid').as('tid'),
      's.value as name',
      columnOrNull<number>(handle, 'ThreadNames', 'priority', 't.priority').as('priority'),
    ]);
}
