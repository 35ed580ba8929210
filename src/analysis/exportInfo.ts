import { callEnd, type ApiCallColumns } from '../load/apiCallColumns.js';
import { captureSettings } from '../load/captureSettings.js';
import { GpuOpKind, type GpuOpColumns } from '../load/gpuOpColumns.js';
import {
  activeDevices,
  activitySpan,
  analysisDetails,
  cudaProcesses,
  GPU_OP_TABLES,
  gpuRows,
  hasGraphNodeKernel,
  hasNvtxRangeWithText,
  nvtxInfoFacts,
  nvtxRangeCountsByDomain,
  processRows,
  rowCount,
  sessionStartEpochNs as readSessionStart,
  threadRows,
  type NvtxInfoFacts,
} from '../load/infoReads.js';
import type { LoadedExport } from '../load/loadedExport.js';
import { domainKey, domainKeyParts } from '../load/domainKeys.js';
import { nvtxDomains as nvtxDomainNames } from '../load/nvtxReads.js';
import type { Engine, IterationSourceId } from '../iterations/source.js';
import { detectEngine } from '../iterations/sources/index.js';
import type { NvtxRangesByDomain } from './nvtxSummary.js';

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

/**
 * NVTX ranges per (domain, process) with the domain names: from the NVTX summary's counts when
 * given, else from `info`'s scan of the table (`facts`), else by query.
 */
function nvtxDomainInfo(loaded: LoadedExport, counted: NvtxRangesByDomain | null | undefined, facts: NvtxInfoFacts | null): NvtxDomainInfo[] {
  if (!loaded.hasTable('NVTX_EVENTS')) return [];
  const names = nvtxDomainNames(loaded);
  // The NVTX summary's scan counted them already (same rows: every range event type), or `info`'s did.
  const counts = counted ?? facts?.rangesByDomain;
  if (counts) {
    return [...counts]
      .map(([key, ranges]) => ({ ...domainKeyParts(key), ranges }))
      .sort((a, b) => a.pid - b.pid || a.domainId - b.domainId)
      .map((r) => ({ ...r, name: names.get(domainKey(r.domainId, r.pid)) ?? null }));
  }
  // Integer-only grouping: no per-row join or text; names are attached per group.
  return nvtxRangeCountsByDomain(loaded).map((r) => ({ ...r, name: names.get(domainKey(r.domainId, r.pid)) ?? null }));
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
    const callEndNs = callEnd(calls, i);
    if (callEndNs > end) end = callEndNs;
  }
  return { devices, cudaPids, start, end };
}

/** The session start as UTC text and ns: only an integer that Date can show (about +-2.7e5 years). */
function sessionStartOf(loaded: LoadedExport): { sessionStartUtc: string | null; sessionStartEpochNs: bigint | null } {
  // (A damaged export may hold text such as 'yesterday' there: no start then.)
  const utc = readSessionStart(loaded);
  if (utc === null || Math.abs(Number(utc / 1000000n)) > 8.64e15) return { sessionStartUtc: null, sessionStartEpochNs: null };
  return { sessionStartUtc: new Date(Number(utc / 1000000n)).toISOString(), sessionStartEpochNs: utc };
}

/**
 * Rows of the tables `info` counts; NVTX_EVENTS from the columns when they are read (every row is
 * in them or counted as left out), else from `info`'s scan of it when there is one.
 */
function rowCountsOf(loaded: LoadedExport, nvtxFacts: NvtxInfoFacts | null): Record<string, number> {
  const rowCounts: Record<string, number> = {};
  const nvtxCols = loaded.sharedNvtx();
  for (const t of COUNTED_TABLES) {
    if (!loaded.hasTable(t)) continue;
    if (t === 'NVTX_EVENTS' && nvtxCols) rowCounts[t] = nvtxCols.count + nvtxCols.invalidRows;
    else rowCounts[t] = t === 'NVTX_EVENTS' && nvtxFacts ? nvtxFacts.rows : rowCount(loaded, t);
  }
  return rowCounts;
}

/** Only the processes that used CUDA (the capture tree also lists the OS's own), with their threads. */
function processesOf(loaded: LoadedExport, cudaPids: ReadonlySet<number>): ProcessInfo[] {
  const threadsByPid = new Map<number, { tid: number; name: string | null }[]>();
  for (const t of threadRows(loaded)) {
    const list = threadsByPid.get(t.pid) ?? [];
    list.push({ tid: t.tid, name: t.name });
    threadsByPid.set(t.pid, list);
  }
  const procNames = new Map<number, string | null>();
  for (const p of processRows(loaded)) if (p.pid != null) procNames.set(Number(p.pid), p.name);
  const pids = cudaPids.size > 0 ? cudaPids : new Set(threadsByPid.keys());
  return [...pids]
    .sort((a, b) => a - b)
    .map((pid) => ({ pid, name: procNames.get(pid) ?? null, threads: (threadsByPid.get(pid) ?? []).sort((a, b) => a.tid - b.tid), usesCuda: cudaPids.has(pid) }));
}

/**
 * First and last activity: the columns' when read (NVTX from its columns when read too, else from
 * `info`'s scan of it), else by query over every activity table.
 */
function spanOf(loaded: LoadedExport, fromColumns: { start: number; end: number } | null, nvtxFacts: NvtxInfoFacts | null): { start: number | null; end: number | null } {
  const gpuAndCalls = [...GPU_OP_TABLES, 'CUPTI_ACTIVITY_KIND_RUNTIME'];
  const nvtx = (fromColumns ? loaded.nvtxSpan() : undefined) ?? (nvtxFacts ? { start: nvtxFacts.start, end: nvtxFacts.end } : undefined);
  if (!fromColumns) return nvtx ? widerSpan(activitySpan(loaded, gpuAndCalls), nvtx) : activitySpan(loaded, [...gpuAndCalls, 'NVTX_EVENTS']);
  // The columns' bounds are +-Infinity without rows: no bound.
  const finite = (x: number) => (Number.isFinite(x) ? x : null);
  return widerSpan(nvtx ?? activitySpan(loaded, ['NVTX_EVENTS']), { start: finite(fromColumns.start), end: finite(fromColumns.end) });
}

/** The span over both (a null bound is no bound: as SQL's min and max over a union). */
function widerSpan(a: { start: number | null; end: number | null }, b: { start: number | null; end: number | null }) {
  const bound = (x: number | null, y: number | null, pick: (p: number, q: number) => number) => (x === null ? y : y === null ? x : pick(x, y));
  return { start: bound(a.start, b.start, Math.min), end: bound(a.end, b.end, Math.max) };
}

/**
 * Everything `iterscope info` prints about an export. From the GPU-op and API-call columns when
 * they are read (active devices, CUDA processes, activity span), and the NVTX ranges per domain
 * the NVTX summary counted when given (`nvtxRangesByDomain`; null when it could not: by query);
 * else from one scan of the table (`nvtxInfoFacts`), or by query.
 */
export function describeExport(loaded: LoadedExport, known: { nvtxRangesByDomain?: NvtxRangesByDomain | null } = {}): ExportInfo {
  loaded.requireContract('exportInfo');
  const settings = captureSettings(loaded);
  const session = sessionStartOf(loaded);
  const details = analysisDetails(loaded);
  const gpus: GpuInfo[] = gpuRows(loaded).map((g) => ({ id: g.id, name: g.name, smCount: g.smCount, totalMemory: g.totalMemory, busLocation: g.busLocation }));
  // One scan of NVTX_EVENTS for its ranges per domain, rows and span when no NVTX summary counted the ranges.
  // (null: the summary ran, and left the ranges to the query.)
  const nvtxFacts = known.nvtxRangesByDomain === undefined ? nvtxInfoFacts(loaded) : null;
  const rowCounts = rowCountsOf(loaded, nvtxFacts);
  // The runtime columns leave out 2022.x backtrace rows: exports that have some are read by SQL here.
  const ops = loaded.loadedGpuOps();
  const calls = loaded.loadedApiCalls();
  const fromColumns = ops && calls && calls.backtraceRows === 0 ? factsFromColumns(ops, calls) : null;
  const devices = fromColumns?.devices ?? activeDevices(loaded);
  const cudaPids = fromColumns?.cudaPids ?? cudaProcesses(loaded);
  const processes = processesOf(loaded, cudaPids);
  const domains = nvtxDomainInfo(loaded, known.nvtxRangesByDomain, nvtxFacts);
  const graphNodeKernels = hasGraphNodeKernel(loaded);
  const graphMode: GraphTraceMode = (rowCounts.CUPTI_ACTIVITY_KIND_GRAPH_TRACE ?? 0) > 0 ? 'graph' : graphNodeKernels ? 'node' : 'none';
  const span = spanOf(loaded, fromColumns, nvtxFacts);
  return {
    file: loaded.path,
    productVersion: loaded.metadata.productVersion,
    schemaVersion: loaded.metadata.schemaVersion,
    metadataTable: loaded.metadata.metadataTable,
    ...session,
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
    gcTraced: hasNvtxRangeWithText(loaded, 'Python GC'),
    profilerApiGated: settings.profilerApiGated,
    profileStartStop: settings.profileStartStop,
    environment: settings.environment,
    engine: detectEngine(loaded),
  };
}
