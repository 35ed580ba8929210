import { countAllRows } from '../../queries/validRows.js';
import { loadNvtxDomains, type NvtxRangesByDomain } from './nvtxSummary.js';
import type { GpuOpColumns } from './gpuOpColumns.js';
import type { ApiCallColumns } from './apiCallColumns.js';
import { GPU_OP_SOURCES, GpuOpKind } from '../../queries/gpuOps.js';
import { requireContract } from '../export/contract.js';

const GPU_OP_TABLES = GPU_OP_SOURCES.map((s) => s.table);
import type { ExportHandle } from '../../queries/handle.js';
import { allRows } from '../../queries/run.js';
import type { Engine, IterationSourceId } from '../iterations/source.js';
import { detectEngine } from '../iterations/sources/index.js';
import { selectGpus } from '../../queries/gpus.js';
import { selectProcesses } from '../../queries/processes.js';
import { selectThreads } from '../../queries/threads.js';
import { readSessionStartEpochNs, selectAnalysisDetails, selectCaptureMetadata } from '../../queries/session.js';
import {
  selectActivitySpan,
  selectApiCallerPids,
  selectDeviceIds,
  selectGraphNodeKernel,
  selectKernelPids,
} from '../../queries/capture.js';
import { selectNvtxRangeCountsByDomain } from '../../queries/nvtxDomains.js';
import { selectNvtxRangeWithText } from '../../queries/nvtx.js';
import { cachedNvtxColumns, type NvtxColumns } from './nvtxColumns.js';

export interface GpuInfo {
  id: number;
  name: string | null;
  smCount: number | null;
  totalMemory: number | null;
  busLocation: string | null;
}

export interface ProcessInfo {
  pid: number;
  name: string | null;
  threads: { tid: number; name: string | null }[];
  /** Whether this process launched GPU work or called the CUDA API. */
  usesCuda: boolean;
}

export interface NvtxDomainInfo {
  domainId: number;
  pid: number;
  /** null for the default domain (id 0) and for domains whose creation row is missing. */
  name: string | null;
  ranges: number;
}

export type GraphTraceMode = 'node' | 'graph' | 'none';

export interface ExportInfo {
  file: string;
  productVersion: string | null;
  schemaVersion: string | null;
  metadataTable: string | null;
  /** Session start as UTC ISO time, and as ns since the Unix epoch (bigint: exceeds 2^53). */
  sessionStartUtc: string | null;
  sessionStartEpochNs: bigint | null;
  /** ANALYSIS_DETAILS.duration (for trimmed exports this is the original capture's). */
  durationNs: number | null;
  /** First and last timestamp of CUDA/NVTX activity in the export. */
  activityStartNs: number | null;
  activityEndNs: number | null;
  gpus: GpuInfo[];
  /** Device ids that ran GPU work. */
  activeDevices: number[];
  processes: ProcessInfo[];
  rowCounts: Record<string, number>;
  nvtxDomains: NvtxDomainInfo[];
  /** `--cuda-graph-trace` mode as configured (META_DATA_CAPTURE), or null where not recorded. */
  graphTraceModeConfigured: string | null;
  /** What the rows show: kernels with graphNodeId (node), whole-graph rows (graph), or neither. */
  graphTraceMode: GraphTraceMode;
  gilTraced: boolean;
  gcTraced: boolean;
  /** Capture gated by cudaProfilerStart/Stop (TLLM_PROFILE_START_STOP and friends). */
  profilerApiGated: boolean | null;
  /** The TLLM_*PROFILE_START_STOP value seen in the captured environment. */
  profileStartStop: string | null;
  /** Environment variables of interest found in the capture metadata. */
  environment: Record<string, string>;
  /** Whose iteration markers the export carries (`detectEngine`); null when none of the known ones. */
  engine: { engine: Engine; source: IterationSourceId } | null;
}

/** Environment variables worth surfacing; other values may be secrets and are not printed. */
const ENV_OF_INTEREST = ['TLLM_PROFILE_START_STOP', 'TLLM_GPTM_PROFILE_START_STOP', 'TLLM_PROFILE_RECORD_GC', 'ENABLE_PERFECT_ROUTER', 'TLLM_LLMAPI_ENABLE_NVTX', 'TLLM_NVTX_DEBUG'];

/** META_DATA_CAPTURE names that appear once per value (one row per traced API). */
const MULTI_VALUED = new Set(['CAPTURE_EVENT_TYPE']);

function captureValues(handle: ExportHandle): { values: Map<string, string>; env: Record<string, string>; multi: Map<string, string[]> } {
  const values = new Map<string, string>();
  const multi = new Map<string, string[]>();
  const env: Record<string, string> = {};
  if (!handle.hasTable('META_DATA_CAPTURE')) return { values, env, multi };
  for (const row of allRows(handle, selectCaptureMetadata(handle))) {
    const name = String(row.name);
    const value = row.value == null ? '' : String(row.value);
    if (/ENVIRONMENT_VARIABLE$/.test(name)) {
      const m = /^([A-Za-z_][A-Za-z0-9_]*)="?(.*?)"?$/.exec(value);
      if (m && ENV_OF_INTEREST.includes(m[1])) env[m[1]] = m[2];
      continue;
    }
    if (MULTI_VALUED.has(name)) multi.set(name, [...(multi.get(name) ?? []), value]);
    if (!values.has(name)) values.set(name, value);
  }
  return { values, env, multi };
}

function graphModeFromCapture(values: Map<string, string>): string | null {
  for (const [k, v] of values) if (/(^|:)CUDA_GRAPH_TRACE_OPTIONS:MODE$/.test(k)) return v;
  return null;
}



const COUNTED_TABLES = [
  'CUPTI_ACTIVITY_KIND_KERNEL',
  'CUPTI_ACTIVITY_KIND_RUNTIME',
  'CUPTI_ACTIVITY_KIND_MEMCPY',
  'CUPTI_ACTIVITY_KIND_MEMSET',
  'CUPTI_ACTIVITY_KIND_SYNCHRONIZATION',
  'CUPTI_ACTIVITY_KIND_GRAPH_TRACE',
  'CUDA_GRAPH_NODE_EVENTS',
  'CUDA_GRAPH_EVENTS',
  'NVTX_EVENTS',
  'OSRT_API',
  'GPU_METRICS',
  'CUDA_GPU_MEMORY_USAGE_EVENTS',
  'StringIds',
  'ThreadNames',
  'PROCESSES',
];

function nvtxDomains(handle: ExportHandle, counted?: NvtxRangesByDomain): NvtxDomainInfo[] {
  if (!handle.hasTable('NVTX_EVENTS')) return [];
  const names = loadNvtxDomains(handle);
  if (counted) {
    // The NVTX summary's scan counted them already (same rows: every range event type).
    return [...counted]
      .map(([key, ranges]) => ({ domainId: Math.floor(key / 16777216), pid: key % 16777216, ranges }))
      .sort((a, b) => a.pid - b.pid || a.domainId - b.domainId)
      .map((r) => ({ ...r, name: names.get(r.domainId * 16777216 + r.pid) ?? null }));
  }
  // Integer-only grouping: no per-row join or text; names are attached per group.
  const rows = allRows(handle, selectNvtxRangeCountsByDomain(handle));
  return rows.map((r) => ({ ...r, name: names.get(r.domainId * 16777216 + r.pid) ?? null }));
}

function hasNvtxText(handle: ExportHandle, text: string): boolean {
  if (!handle.hasTable('NVTX_EVENTS')) return false;
  return allRows(handle, selectNvtxRangeWithText(handle, text, handle.hasTable('StringIds'))).length > 0;
}

export function activitySpan(handle: ExportHandle, tables: readonly string[] = [...GPU_OP_TABLES, 'CUPTI_ACTIVITY_KIND_RUNTIME', 'NVTX_EVENTS']): { start: number | null; end: number | null } {
  const query = selectActivitySpan(handle, tables);
  if (query === null) return { start: null, end: null };
  const row = allRows(handle, query)[0];
  return { start: row.s, end: row.e };
}

/** `activitySpan` over NVTX_EVENTS from the shared columns: min start, max of end (or start when open). */
function nvtxSpanOf(c: NvtxColumns): { start: number | null; end: number | null } {
  if (c.count === 0) return { start: null, end: null };
  let start = Infinity;
  let end = -Infinity;
  for (let i = 0; i < c.count; i++) {
    const s = c.start[i];
    const e = c.end[i];
    if (s < start) start = s;
    const last = e === e ? e : s;
    if (last > end) end = last;
  }
  return { start, end };
}

/**
 * What nsys was asked to record (META_DATA_CAPTURE), so "not traced" and "traced, nothing
 * recorded" can be told apart. null where the export does not say (no META_DATA_CAPTURE: nsys
 * before 2023.4, converted PyTorch profiler traces).
 */
export interface CaptureTracing {
  /** `CAPTURE_EVENT_TYPE` rows (`-t`): Cuda, NvtxEvents, OSRuntime, CuDNN, CuBLAS, Graphics, ... */
  events: string[];
  cuda: boolean | null;
  nvtx: boolean | null;
  osrt: boolean | null;
  /** `--cuda-memory-usage=true` (`COLLECT_GPU_MEMORY_USAGE`, top level or per process). */
  gpuMemoryUsage: boolean | null;
  /** `--gpu-metrics-devices` (`GPU_METRICS_OPTIONS:*` keys). */
  gpuMetrics: boolean | null;
  /** `--trace-fork-before-exec=true` (`TRACE_AFTER_FORK_BEFORE_EXEC`). */
  forkBeforeExec: boolean | null;
}

/** How the capture was set up: what analyses need of `info` without its cost. */
export interface CaptureSettings {
  profilerApiGated: boolean | null;
  profileStartStop: string | null;
  environment: Record<string, string>;
  graphTraceModeConfigured: string | null;
  tracing: CaptureTracing;
  /** The command nsys launched (`PROCESS_0:COMMAND` and its arguments, secrets masked); null when not recorded. */
  command: string | null;
}

/** Arguments after these flags (or `NAME=value` with such a name) are replaced by `***` in the command shown. */
const SECRET_ARG = /(key|token|secret|passw(or)?d|credential)/i;

/** `PROCESS_0:COMMAND` with `PROCESS_0:ARGUMENT_<n>` in order, values of secret-looking options masked. */
function commandLine(values: Map<string, string>): string | null {
  const command = values.get('PROCESS_0:COMMAND');
  if (!command) return null;
  const args: [number, string][] = [];
  for (const [k, v] of values) {
    const m = /^PROCESS_0:ARGUMENT_(\d+)$/.exec(k);
    if (m) args.push([Number(m[1]), v]);
  }
  const words = [command, ...args.sort((a, b) => a[0] - b[0]).map(([, v]) => v)];
  const shown = words.map((w, i) => {
    const eq = /^(-{0,2}[\w.-]+)=(.*)$/s.exec(w);
    if (eq && SECRET_ARG.test(eq[1])) return `${eq[1]}=***`;
    return i > 0 && /^--?[\w.-]+$/.test(words[i - 1]) && SECRET_ARG.test(words[i - 1]) ? '***' : w;
  });
  return shown.map((w) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/** nsys `-t` names of the CAPTURE_EVENT_TYPE values (`NvtxEvents` is `-t nvtx`). */
const TRACE_NAMES: Record<string, string> = { Cuda: 'cuda', NvtxEvents: 'nvtx', OSRuntime: 'osrt', CuDNN: 'cudnn', CuBLAS: 'cublas', Graphics: 'opengl' };

/** What `-t` asked for, as nsys spells it on the command line (`cuda, nvtx, cudnn`). */
export function traceNames(tracing: CaptureTracing): string[] {
  // nsys stores them in no useful order: the order of TRACE_NAMES (as its docs list them), others after.
  const order = Object.keys(TRACE_NAMES);
  const rank = (e: string) => (order.includes(e) ? order.indexOf(e) : order.length);
  return [...tracing.events].sort((a, b) => rank(a) - rank(b)).map((e) => TRACE_NAMES[e] ?? e.toLowerCase());
}

function flag(values: Map<string, string>, ...names: string[]): boolean | null {
  let seen = false;
  for (const n of names) {
    const v = values.get(n);
    if (v === undefined) continue;
    seen = true;
    if (v.toLowerCase() === 'true') return true;
  }
  return seen ? false : null;
}

function tracingOf(values: Map<string, string>, multi: Map<string, string[]>): CaptureTracing {
  const events = multi.get('CAPTURE_EVENT_TYPE') ?? [];
  const known = values.size > 0;
  // CAPTURE_EVENT_TYPE is what `-t` asked for; PROCESS_0:COLLECT_*_TRACE is unreliable (false in 2026.x exports that hold kernels).
  const traced = (name: string) => (events.length ? events.includes(name) : null);
  return {
    events,
    cuda: traced('Cuda'),
    nvtx: traced('NvtxEvents'),
    osrt: traced('OSRuntime'),
    gpuMemoryUsage: flag(values, 'COLLECT_GPU_MEMORY_USAGE', 'PROCESS_0:COLLECT_GPU_MEMORY_USAGE'),
    gpuMetrics: known ? [...values.keys()].some((k) => k.startsWith('GPU_METRICS_OPTIONS:')) : null,
    forkBeforeExec: flag(values, 'TRACE_AFTER_FORK_BEFORE_EXEC'),
  };
}

export function readCaptureSettings(handle: ExportHandle): CaptureSettings {
  const { values: capture, env, multi } = captureValues(handle);
  const startStop = env.TLLM_PROFILE_START_STOP ?? env.TLLM_GPTM_PROFILE_START_STOP ?? null;
  const trigger = capture.get('START_TRIGGER') ?? null;
  const profilerApiGated = startStop != null || (trigger != null && /profiler|cuda/i.test(trigger)) ? true : capture.size > 0 ? false : null;
  return {
    profilerApiGated,
    profileStartStop: startStop,
    environment: env,
    graphTraceModeConfigured: graphModeFromCapture(capture),
    tracing: tracingOf(capture, multi),
    command: commandLine(capture),
  };
}

/**
 * What the pipeline already read, so `describeExport` need not scan those tables again: the GPU ops
 * and API calls in columns (active devices, CUDA processes, activity span) and the NVTX ranges per
 * domain counted by the NVTX summary.
 */
export interface KnownExportFacts {
  gpuOps?: GpuOpColumns;
  apiCalls?: ApiCallColumns;
  nvtxRangesByDomain?: NvtxRangesByDomain;
}

/** Devices, CUDA processes (runtime calls and kernels) and the min start / max end of the ops and calls. */
function factsFromColumns(ops: GpuOpColumns, calls: ApiCallColumns): { devices: Set<number>; cudaPids: Set<number>; start: number; end: number } {
  const devices = new Set<number>();
  const cudaPids = new Set<number>();
  let start = Infinity;
  let end = -Infinity;
  let lastDev = NaN;
  let lastPid = NaN;
  for (let i = 0; i < ops.count; i++) {
    if (ops.deviceId[i] !== lastDev) devices.add((lastDev = ops.deviceId[i]));
    if (ops.kind[i] === GpuOpKind.Kernel && ops.pid[i] !== lastPid) cudaPids.add((lastPid = ops.pid[i]));
    if (ops.start[i] < start) start = ops.start[i];
    if (ops.end[i] > end) end = ops.end[i];
  }
  lastPid = NaN;
  for (let i = 0; i < calls.count; i++) {
    if (calls.pid[i] !== lastPid) cudaPids.add((lastPid = calls.pid[i]));
    if (calls.start[i] < start) start = calls.start[i];
    if (calls.end[i] > end) end = calls.end[i];
  }
  return { devices, cudaPids, start, end };
}

/** Everything `iterscope info` prints about an export. */
export function describeExport(handle: ExportHandle, known: KnownExportFacts = {}): ExportInfo {
  requireContract(handle, 'exportInfo');
  const settings = readCaptureSettings(handle);
  let sessionStartUtc: string | null = null;
  let sessionStartEpochNs: bigint | null = null;
  // Only an integer is a UTC start (readSessionStartEpochNs: a damaged export may hold text such
  // as 'yesterday'); dates outside what Date can show (about +-2.7e5 years) are left unset as well.
  const utc = readSessionStartEpochNs(handle);
  if (utc !== null && Math.abs(Number(utc / 1000000n)) <= 8.64e15) {
    sessionStartEpochNs = utc;
    sessionStartUtc = new Date(Number(utc / 1000000n)).toISOString();
  }
  const details = handle.hasTable('ANALYSIS_DETAILS') ? allRows(handle, selectAnalysisDetails(handle), { safeIntegers: true })[0] : undefined;
  const gpus: GpuInfo[] = handle.hasTable('TARGET_INFO_GPU')
    ? allRows(handle, selectGpus(handle)).map((g) => ({ id: g.id, name: g.name, smCount: g.smCount, totalMemory: g.totalMemory, busLocation: g.busLocation }))
    : [];
  const rowCounts: Record<string, number> = {};
  // NVTX_EVENTS from the shared columns when they are read (every row is in them or counted as left out).
  const nvtxCols = cachedNvtxColumns(handle);
  for (const t of COUNTED_TABLES) {
    if (!handle.hasTable(t)) continue;
    rowCounts[t] = t === 'NVTX_EVENTS' && nvtxCols ? nvtxCols.count + nvtxCols.invalidRows : countAllRows(handle, t); // names from COUNTED_TABLES, checked with hasTable
  }

  // From the columns when the pipeline read them (the export's own rows, read once), else by SQL.
  // The runtime columns leave out 2022.x backtrace rows: exports that have some are read by SQL here.
  const fromColumns = known.gpuOps && known.apiCalls && known.apiCalls.backtraceRows === 0 ? factsFromColumns(known.gpuOps, known.apiCalls) : null;
  const devices = fromColumns?.devices ?? new Set<number>();
  if (!fromColumns) {
    for (const t of GPU_OP_TABLES) {
      if (!handle.hasTable(t)) continue;
      for (const r of allRows(handle, selectDeviceIds(handle, t))) devices.add(r.d);
    }
  }

  // Processes that used CUDA: PIDs of runtime calls and GPU rows.
  const cudaPids = fromColumns?.cudaPids ?? new Set<number>();
  if (!fromColumns && handle.hasTable('CUPTI_ACTIVITY_KIND_RUNTIME')) {
    for (const r of allRows(handle, selectApiCallerPids(handle))) cudaPids.add(r.p);
  }
  if (!fromColumns && handle.hasTable('CUPTI_ACTIVITY_KIND_KERNEL')) {
    for (const r of allRows(handle, selectKernelPids(handle))) cudaPids.add(r.p);
  }
  const threadsByPid = new Map<number, { tid: number; name: string | null }[]>();
  if (handle.hasTable('ThreadNames')) {
    for (const t of allRows(handle, selectThreads(handle))) {
      const list = threadsByPid.get(t.pid) ?? [];
      list.push({ tid: t.tid, name: t.name });
      threadsByPid.set(t.pid, list);
    }
  }
  const procNames = new Map<number, string | null>();
  if (handle.hasTable('PROCESSES')) for (const p of allRows(handle, selectProcesses(handle))) if (p.pid != null) procNames.set(Number(p.pid), p.name);
  // Only processes that used CUDA: the capture tree also lists the OS's own processes and threads.
  const pids = cudaPids.size > 0 ? cudaPids : new Set(threadsByPid.keys());
  const processes: ProcessInfo[] = [...pids]
    .sort((a, b) => a - b)
    .map((pid) => ({ pid, name: procNames.get(pid) ?? null, threads: (threadsByPid.get(pid) ?? []).sort((a, b) => a.tid - b.tid), usesCuda: cudaPids.has(pid) }));

  const domains = nvtxDomains(handle, known.nvtxRangesByDomain);
  const graphNodeKernels =
    handle.hasTable('CUPTI_ACTIVITY_KIND_KERNEL') && handle.hasColumn('CUPTI_ACTIVITY_KIND_KERNEL', 'graphNodeId')
      ? allRows(handle, selectGraphNodeKernel(handle)).length > 0
      : false;
  const graphMode: GraphTraceMode = (rowCounts.CUPTI_ACTIVITY_KIND_GRAPH_TRACE ?? 0) > 0 ? 'graph' : graphNodeKernels ? 'node' : 'none';
  // The NVTX part of the span from the shared NVTX columns when they are loaded (no scan).
  const nvtx = fromColumns ? cachedNvtxColumns(handle) : undefined;
  let span = nvtx ? nvtxSpanOf(nvtx) : activitySpan(handle, fromColumns ? ['NVTX_EVENTS'] : undefined);
  if (fromColumns) {
    const lo = (a: number | null, b: number) => (a == null ? (Number.isFinite(b) ? b : null) : Number.isFinite(b) ? Math.min(a, b) : a);
    const hi = (a: number | null, b: number) => (a == null ? (Number.isFinite(b) ? b : null) : Number.isFinite(b) ? Math.max(a, b) : a);
    span = { start: lo(span.start, fromColumns.start), end: hi(span.end, fromColumns.end) };
  }

  return {
    file: handle.path,
    productVersion: handle.metadata.productVersion,
    schemaVersion: handle.metadata.schemaVersion,
    metadataTable: handle.metadata.metadataTable,
    sessionStartUtc,
    sessionStartEpochNs,
    durationNs: details ? Number(details.duration) : null,
    activityStartNs: span.start,
    activityEndNs: span.end,
    gpus,
    activeDevices: [...devices].sort((a, b) => a - b),
    processes,
    rowCounts,
    nvtxDomains: domains,
    graphTraceModeConfigured: settings.graphTraceModeConfigured,
    graphTraceMode: graphMode,
    gilTraced: domains.some((d) => d.name === 'GIL Trace'),
    gcTraced: hasNvtxText(handle, 'Python GC'),
    profilerApiGated: settings.profilerApiGated,
    profileStartStop: settings.profileStartStop,
    environment: settings.environment,
    engine: detectEngine(handle),
  };
}
