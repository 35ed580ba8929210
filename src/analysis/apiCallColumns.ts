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
  const cols = { pid: new Float64Buffer(4096), tid: new Float64Buffer(4096), corr: new Float64Buffer(4096), start: new Float64Buffer(4096), end: new Float64Buffer(4096), name: new Float64Buffer(4096) };
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
