import { sql } from 'kysely';
import type { ExportHandle } from './handle.js';
import { pidOf } from './globalIds.js';

// What a capture says about itself beyond its events: nsys's own diagnostics, the profiled
// program's output streams, and which processes were active (capture health).

/**
 * nsys's own messages (`DIAGNOSTIC_EVENT`, nsys 2024.5+), in time order: `severity` with its label
 * from `ENUM_DIAGNOSTIC_SEVERITY_LEVEL` when the export has that table, the text, and the pid of
 * the process the message is about (0 for nsys's daemon and session messages).
 */
export function selectDiagnostics(handle: ExportHandle) {
  const base = handle.db
    .selectFrom('DIAGNOSTIC_EVENT as d')
    .select(['d.timestamp', 'd.severity', 'd.text', pidOf('d.globalPid').as('pid')])
    .orderBy('d.timestamp');
  return handle.hasColumn('ENUM_DIAGNOSTIC_SEVERITY_LEVEL', 'id') && handle.hasColumn('ENUM_DIAGNOSTIC_SEVERITY_LEVEL', 'label')
    ? base.leftJoin('ENUM_DIAGNOSTIC_SEVERITY_LEVEL as e', 'e.id', 'd.severity').select('e.label as severityLabel')
    : base.select(sql<string | null>`NULL`.as('severityLabel'));
}

/**
 * The profiled program's stdout/stderr (`ProcessStreams`, every nsys version seen): the stream
 * file's path and its whole text, both in `StringIds`.
 */
export function selectProcessStreams(handle: ExportHandle) {
  return handle.db
    .selectFrom('ProcessStreams as p')
    .innerJoin('StringIds as f', 'f.id', 'p.filenameId')
    .leftJoin('StringIds as c', 'c.id', 'p.contentId')
    .select([pidOf('p.globalPid').as('pid'), 'f.value as file', 'c.value as content']);
}

/**
 * The same streams from `ANALYSIS_FILE` (exports without `ProcessStreams`): the text inline in
 * `content` (nsys 2024.5) or in `StringIds` via `contentId` (later versions).
 */
export function selectAnalysisFiles(handle: ExportHandle) {
  const base = handle.db.selectFrom('ANALYSIS_FILE as a').select([pidOf('a.globalPid').as('pid'), 'a.filename as file']);
  if (handle.hasColumn('ANALYSIS_FILE', 'contentId')) return base.leftJoin('StringIds as c', 'c.id', 'a.contentId').select('c.value as content');
  if (handle.hasColumn('ANALYSIS_FILE', 'content')) return base.select('a.content as content');
  return base.select(sql<string | null>`NULL`.as('content'));
}

/** Tables with a `globalTid` whose rows say a process was active. */
export type ProcessActivityTable = 'SCHED_EVENTS' | 'COMPOSITE_EVENTS' | 'OSRT_API' | 'CUPTI_ACTIVITY_KIND_RUNTIME' | 'NVTX_EVENTS';

/** Rows and distinct threads of `table` per pid (`pid`, `events`, `threads`): who was active and how much. */
export function selectActivityPerProcess(handle: ExportHandle, table: ProcessActivityTable) {
  return handle.db
    .selectFrom(table as 'SCHED_EVENTS')
    .select([pidOf('globalTid').as('pid'), sql<number>`count(*)`.as('events'), sql<number>`count(DISTINCT globalTid)`.as('threads')])
    .where('globalTid', 'is not', null)
    .groupBy(pidOf('globalTid'));
}

/**
 * nsys's note that the capture began at the program's `cudaProfilerStart` (`-c cudaProfilerApi`,
 * `--capture-range=cudaProfilerApi`): its session time, or no row. Export metadata does not say
 * so (START_TRIGGER stays `Immediate` in such captures); this message does.
 */
export function selectProfilerApiStart(handle: ExportHandle) {
  return handle.db
    .selectFrom('DIAGNOSTIC_EVENT')
    .select(['timestamp'])
    .where('text', 'like', '%due to cudaProfilerStart%')
    .orderBy('timestamp')
    .limit(1);
}
