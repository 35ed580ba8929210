import type { ExportHandle } from './handle.js';
import { columnOrNull } from './optionalColumns.js';
import { pidOf } from './globalIds.js';
import { sql } from 'kysely';

/**
 * Processes in the captured tree (`PROCESSES`). A column the export lacks reads as NULL; `pid`,
 * when absent, is unpacked from `globalPid` (nsys packs it there).
 */
export function selectProcesses(handle: ExportHandle) {
  const has = (c: string) => handle.hasColumn('PROCESSES', c);
  const pid = has('pid') ? sql<number | null>`pid` : has('globalPid') ? pidOf('globalPid') : sql<number | null>`NULL`;
  return handle.db
    .selectFrom('PROCESSES')
    .select([columnOrNull<number>(handle, 'PROCESSES', 'globalPid').as('globalPid'), sql<number | null>`${pid}`.as('pid'), columnOrNull<string>(handle, 'PROCESSES', 'name').as('name')])
    .orderBy('pid');
}
