import type { ExportInfo } from '../src/analysis/exportInfo.js';
import { traceNames } from '../src/load/captureSettings.js';
import type { CaptureHealth } from '../src/analysis/captureHealth.js';
import { keyValueTable, type DataTable } from './table.js';

const yesNo = (v: boolean | null) => (v == null ? 'unknown' : v ? 'yes' : 'no');

/** What nsys was asked to record: `-t` and the flags that add data (null: the export does not say). */
export function tracedText(h: CaptureHealth): string {
  const t = h.tracing;
  if (!t.events.length) return 'not recorded in the export';
  const flags = [t.gpuMemoryUsage ? '--cuda-memory-usage=true' : null, t.gpuMetrics ? '--gpu-metrics-devices' : null, t.forkBeforeExec ? '--trace-fork-before-exec=true' : null].filter(Boolean);
  return `-t ${traceNames(t).join(',')}${flags.length ? ` ${flags.join(' ')}` : ''}`;
}

/** Which kinds of events the export holds, and which it lacks. */
export function recordedText(h: CaptureHealth): string {
  const r = h.recorded;
  const kinds: [string, boolean][] = [
    ['kernels', r.kernels],
    ['memcpy', r.memcpys],
    ['memset', r.memsets],
    ['whole-graph rows', r.graphRows],
    ['CUDA API calls', r.cudaCalls],
    ['NVTX', r.nvtx],
    ['OS runtime', r.osrt],
    ['CPU samples', r.cpuSamples],
    ['scheduling', r.schedEvents],
  ];
  const yes = kinds.filter(([, v]) => v).map(([k]) => k);
  const no = kinds.filter(([, v]) => !v).map(([k]) => k);
  return `${yes.length ? yes.join(', ') : 'nothing'}${no.length ? `; none of: ${no.join(', ')}` : ''}`;
}

/** The rows `info` adds from the capture's health: command, tracing, what was recorded, why there is no GPU work. */
function healthRows(h: CaptureHealth): [string, string][] {
  const rows: [string, string][] = [];
  if (h.noGpuWork) rows.push(['GPU work', `none: ${h.noGpuWork}`]);
  rows.push(['profiled command', h.command ?? 'not recorded in the export']);
  rows.push(['traced (nsys)', tracedText(h)]);
  rows.push(['recorded', recordedText(h)]);
  if (h.crash) rows.push([`pid ${h.crash.pid} exited with`, h.crash.errorLine]);
  if (h.diagnostics.length) rows.push(['nsys warnings and errors', `${h.diagnostics.reduce((a, d) => a + d.count, 0)} (table below)`]);
  return rows;
}

function diagnosticsTable(h: CaptureHealth): DataTable {
  return {
    title: 'nsys warnings and errors (DIAGNOSTIC_EVENT)',
    columns: [
      { key: 'severity', header: 'Severity', kind: 'text' },
      { key: 'count', header: 'Count', kind: 'int' },
      { key: 'firstNs', header: 'First (ns)', kind: 'int' },
      { key: 'pids', header: 'PIDs', kind: 'text' },
      { key: 'text', header: 'Message', kind: 'text' },
    ],
    rows: h.diagnostics.map((d) => ({ severity: d.severity, count: d.count, firstNs: d.firstNs, pids: d.pids.join(' '), text: d.text })),
  };
}

function outputTable(h: CaptureHealth): DataTable {
  return {
    title: 'Program output (ProcessStreams: last lines)',
    columns: [
      { key: 'pid', header: 'PID', kind: 'int' },
      { key: 'stream', header: 'Stream', kind: 'text' },
      { key: 'lines', header: 'Lines', kind: 'int' },
      { key: 'text', header: 'Text', kind: 'text' },
    ],
    rows: h.output.flatMap((o) => (o.tail.length ? o.tail : ['(empty)']).map((text) => ({ pid: o.pid, stream: o.stream, lines: o.lines, text }))),
  };
}

/** Without GPU work: the processes the capture saw active and what they did (`info` lists them instead of every thread). */
function profiledProcessesTable(h: CaptureHealth): DataTable {
  return {
    title: 'Profiled processes (no GPU work)',
    columns: [
      { key: 'pid', header: 'PID', kind: 'int' },
      { key: 'name', header: 'Process', kind: 'text' },
      { key: 'command', header: 'Command', kind: 'text' },
      { key: 'threads', header: 'Threads', kind: 'int' },
      { key: 'cpuSamples', header: 'CPU samples', kind: 'int' },
      { key: 'schedEvents', header: 'Sched events', kind: 'int' },
      { key: 'osrtCalls', header: 'OS-runtime calls', kind: 'int' },
      { key: 'cudaCalls', header: 'CUDA calls', kind: 'int' },
      { key: 'nvtxEvents', header: 'NVTX events', kind: 'int' },
    ],
    rows: h.processes as unknown as DataTable['rows'],
  };
}

/**
 * `iterscope info` as tables: overview, GPUs, processes/threads, row counts, NVTX domains; with the
 * capture's health, what was traced and recorded, nsys's warnings and the program's output too.
 */
export function exportInfoTables(info: ExportInfo, health?: CaptureHealth | null): DataTable[] {
  const overview: [string, string][] = [
    ['file', info.file],
    ...(health ? healthRows(health) : []),
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
  if (!health) return [keyValueTable('Export', overview), gpus, threads, counts, domains];
  const processes = health.processes.length ? profiledProcessesTable(health) : threads;
  const extra = [...(health.diagnostics.length ? [diagnosticsTable(health)] : []), ...(health.output.length ? [outputTable(health)] : [])];
  return [keyValueTable('Export', overview), ...extra, gpus, processes, counts, domains];
}
