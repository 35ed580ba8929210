import type { ExportInfo } from '../src/analysis/exportInfo.js';
import { keyValueTable, type DataTable } from './table.js';

const yesNo = (v: boolean | null) => (v == null ? 'unknown' : v ? 'yes' : 'no');

/** `iterscope info` as tables: overview, GPUs, processes/threads, row counts, NVTX domains. */
export function exportInfoTables(info: ExportInfo): DataTable[] {
  const overview: [string, string][] = [
    ['file', info.file],
    ['nsys version', info.productVersion ?? 'unknown (no export metadata table)'],
    ['export schema', info.schemaVersion ?? 'unknown'],
    ['session start (UTC)', info.sessionStartUtc ?? 'unknown'],
    ['session duration', info.durationNs == null ? 'unknown' : `${info.durationNs} ns`],
    ['activity span', info.activityStartNs == null ? 'none' : `${info.activityStartNs} .. ${info.activityEndNs} ns`],
    ['devices with GPU work', info.activeDevices.length ? info.activeDevices.map((d) => `device ${d}`).join(', ') : 'none'],
    ['CUDA graph trace', `${info.graphTraceMode}${info.graphTraceModeConfigured ? ` (configured: ${info.graphTraceModeConfigured})` : ''}`],
    ['GIL traced (GIL Trace domain)', yesNo(info.gilTraced)],
    ['GC traced (Python GC ranges)', yesNo(info.gcTraced)],
    ['engine', info.engine?.engine ?? 'none'],
    ['iteration markers', info.engine?.source ?? 'none (no known iteration ranges)'],
    ['cudaProfilerApi-gated capture', `${yesNo(info.profilerApiGated)}${info.profileStartStop ? ` (profile range ${info.profileStartStop})` : ''}`],
  ];
  for (const [k, v] of Object.entries(info.environment)) overview.push([`env ${k}`, v]);
  const gpus: DataTable = {
    title: 'GPUs',
    columns: [
      { key: 'id', header: 'Id', kind: 'int' },
      { key: 'name', header: 'Name', kind: 'text' },
      { key: 'smCount', header: 'SMs', kind: 'int' },
      { key: 'totalMemory', header: 'Memory (B)', kind: 'int' },
      { key: 'busLocation', header: 'Bus', kind: 'text' },
    ],
    rows: info.gpus as unknown as DataTable['rows'],
    notes: info.gpus.length ? [] : ['the export lists no GPUs (TARGET_INFO_GPU absent or empty)'],
  };
  const threads: DataTable = {
    title: 'Processes and threads',
    columns: [
      { key: 'pid', header: 'PID', kind: 'int' },
      { key: 'process', header: 'Process', kind: 'text' },
      { key: 'cuda', header: 'CUDA', kind: 'text' },
      { key: 'tid', header: 'TID', kind: 'int' },
      { key: 'thread', header: 'Thread', kind: 'text' },
    ],
    rows: info.processes.flatMap((p) =>
      (p.threads.length ? p.threads : [{ tid: null, name: null }]).map((t) => ({ pid: p.pid, process: p.name, cuda: p.usesCuda ? 'yes' : 'no', tid: t.tid, thread: t.name })),
    ),
  };
  const counts: DataTable = {
    title: 'Rows per table',
    columns: [
      { key: 'table', header: 'Table', kind: 'text' },
      { key: 'rows', header: 'Rows', kind: 'int' },
    ],
    rows: Object.entries(info.rowCounts).map(([table, rows]) => ({ table, rows })),
  };
  const domains: DataTable = {
    title: 'NVTX domains',
    columns: [
      { key: 'pid', header: 'PID', kind: 'int' },
      { key: 'domainId', header: 'Domain id', kind: 'int' },
      { key: 'name', header: 'Domain', kind: 'text' },
      { key: 'ranges', header: 'Ranges', kind: 'int' },
    ],
    rows: info.nvtxDomains.map((d) => ({ ...d, name: d.name ?? (d.domainId === 0 ? '(default)' : '(unnamed: no DomainCreate row)') })),
  };
  return [keyValueTable('Export', overview), gpus, threads, counts, domains];
}
