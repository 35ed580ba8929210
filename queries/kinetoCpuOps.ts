import { sql } from 'kysely';
import type { ExportHandle } from './handle.js';

/**
 * The PyTorch profiler's aten ops of a converted Kineto trace (`KINETO_CPU_OPS`, optional: check
 * `hasTable`), per thread in time order (outer op first on equal starts), with their own rowid
 * and their parent's so nesting can be walked.
 */
export function selectKinetoCpuOps(handle: ExportHandle) {
  return handle.db
    .selectFrom('KINETO_CPU_OPS')
    .select([
      sql<number>`rowid`.as('rowid'),
      sql<number>`(globalTid >> 24) & 16777215`.as('pid'),
      sql<number>`globalTid & 16777215`.as('tid'),
      'start',
      'end',
      'selfNs',
      'nameId',
      'depth',
      'parentRowid',
    ])
    .orderBy('globalTid')
    .orderBy('start')
    .orderBy('end', 'desc');
}
