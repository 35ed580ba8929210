import { sql } from 'kysely';
import type { ExportHandle } from '../../queries/handle.js';
import { forEachRow } from '../../queries/run.js';
import { Float64Buffer } from './durationStats.js';

/**
 * CUDA runtime/driver API calls in column arrays, read in one pass and shared by the analyses
 * that need them (iteration attribution, gap causes). 2022.x exports repeat calls as
 * CUDA-backtrace rows (eventClass 67) with the same correlationId: left out. Null correlation or
 * name ids are NaN.
 */
export interface ApiCallColumns {
  count: number;
  pid: Float64Array;
  tid: Float64Array;
  correlationId: Float64Array;
  start: Float64Array;
  end: Float64Array;
  nameId: Float64Array;
  /** Latest end of any call (0 when there are none). */
  maxEndNs: number;
}

export function loadApiCallColumns(handle: ExportHandle): ApiCallColumns {
  // Sized up front from max(rowid) (a b-tree lookup): no doubling slack on millions of calls.
  const cap = handle.hasTable('CUPTI_ACTIVITY_KIND_RUNTIME')
    ? Math.max(16, Number((handle.sqlite.prepare('SELECT coalesce(max(rowid), 0) AS n FROM CUPTI_ACTIVITY_KIND_RUNTIME').get() as { n: number }).n))
    : 16;
  const cols = { pid: new Float64Buffer(cap), tid: new Float64Buffer(cap), corr: new Float64Buffer(cap), start: new Float64Buffer(cap), end: new Float64Buffer(cap), name: new Float64Buffer(cap) };
  let maxEnd = 0;
  if (handle.hasTable('CUPTI_ACTIVITY_KIND_RUNTIME')) {
    let q = handle.db
      .selectFrom('CUPTI_ACTIVITY_KIND_RUNTIME')
      .select([sql<number>`(globalTid >> 24) & 16777215`.as('pid'), sql<number>`globalTid & 16777215`.as('tid'), 'correlationId', 'start', 'end', 'nameId']);
    if (handle.hasColumn('CUPTI_ACTIVITY_KIND_RUNTIME', 'eventClass')) q = q.where('eventClass', '!=', 67);
    forEachRow(handle, q, (pid: number, tid: number, corr: number | null, start: number, end: number, nameId: number | null) => {
      cols.pid.push(pid);
      cols.tid.push(tid);
      cols.corr.push(corr ?? NaN);
      cols.start.push(start);
      cols.end.push(end);
      cols.name.push(nameId ?? NaN);
      if (end > maxEnd) maxEnd = end;
    });
  }
  return {
    count: cols.pid.length,
    pid: cols.pid.view(),
    tid: cols.tid.view(),
    correlationId: cols.corr.view(),
    start: cols.start.view(),
    end: cols.end.view(),
    nameId: cols.name.view(),
    maxEndNs: maxEnd,
  };
}
