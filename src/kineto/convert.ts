import BetterSqlite3 from 'better-sqlite3';
import {
  GPU_ACTIVITY_TABLES,
  beginWrite,
  commitWrite,
  countCpuOps,
  countGpuRowsWithoutProcess,
  cpuOpsInNestingOrder,
  createNsysSchema,
  indexCpuOpsByThread,
  indexRuntimeByCorrelation,
  insertAnalysisDetails,
  insertSessionStart,
  prepareCpuOpNestingUpdate,
  prepareEventInserts,
  prepareGpuInsert,
  prepareMetadataInsert,
  prepareThreadAndProcessInserts,
  rollbackWrite,
  setBulkWriteMode,
  setGpuRowProcessFromRuntime,
  setGpuRowProcessWhereMissing,
  shiftTimes,
} from '../../queries/kinetoWriter.js';
import { kernelShortName, memcpyKinds, memsetKind } from './activityNames.js';
import { readKinetoTrace, type KinetoEvent, type KinetoHeader, type ReadProgress } from './readKineto.js';
import { KinetoTraceError } from '../errors.js';

/** `META_DATA_EXPORT.EXPORT_PRODUCT_NAME` of a converted trace (how `isKinetoConversion` knows it). */
export const KINETO_PRODUCT_NAME = 'iterscope: PyTorch profiler (Kineto) trace conversion';

/** The upper bits nsys sets in every globalPid/globalTid of a local capture (fixture README). */
const GLOBAL_ID_BASE = 0x1000000000000;
const ID_MASK = 0xffffff;

/** nsys's packing: `(pid << 24) | tid` above the capture's base bits. Fits in a double (< 2^53). */
export function packGlobalTid(pid: number, tid: number): number {
  return GLOBAL_ID_BASE + (pid & ID_MASK) * 0x1000000 + (tid & ID_MASK);
}

export interface ConversionSummary {
  input: string;
  events: number;
  cpuOps: number;
  runtimeCalls: number;
  kernels: number;
  memcpys: number;
  memsets: number;
  /** `user_annotation` / `ProfilerStep#N` ranges written as NVTX push/pop ranges. */
  annotations: number;
  /** Absolute (Unix epoch) ns of the session start (the earliest event), as a decimal string. */
  sessionStartUtcNs: string;
  durationNs: number;
  /** GPU rows whose launching process could not be found (no runtime call with their correlation). */
  gpuRowsWithoutProcess: number;
  /** Events of kinds not converted, by `cat` (flows, instants, python functions, ...). */
  skipped: Record<string, number>;
}

/**
 * Exact integer ns of a Kineto time in µs. The shortest decimal form of the double is the text
 * Kineto wrote (3 decimals; ns spacing below 2^43 µs), so the digits are read, not multiplied:
 * `ts * 1000` in doubles can be 1 ns off at today's magnitudes.
 */
export function microsToNs(us: number): { whole: number; fracNs: number } {
  const neg = us < 0;
  const s = String(Math.abs(us));
  let whole: number;
  let fracNs: number;
  if (/e/i.test(s)) {
    whole = Math.floor(Math.abs(us));
    fracNs = Math.round((Math.abs(us) - whole) * 1000);
  } else {
    const dot = s.indexOf('.');
    whole = dot < 0 ? Number(s) : Number(s.slice(0, dot));
    fracNs = dot < 0 ? 0 : Math.round(Number(`0.${s.slice(dot + 1)}`) * 1000);
  }
  if (fracNs === 1000) {
    whole += 1;
    fracNs = 0;
  }
  return neg ? { whole: -whole, fracNs: -fracNs } : { whole, fracNs };
}

function num(v: unknown, fallback = 0): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : fallback;
}
function intOrNull(v: unknown): number | null {
  return typeof v === 'number' && Number.isInteger(v) ? v : null;
}
function dim(v: unknown, i: number): number {
  return Array.isArray(v) && typeof v[i] === 'number' ? v[i] : 1;
}

const PROFILER_STEP = /^ProfilerStep#\d+$/;

/**
 * Converts a Kineto trace into an nsys-shaped SQLite database at `dbPath` (created; must not
 * exist): the real nsys DDL, one transaction, prepared statements (all in queries/kinetoWriter.ts),
 * events streamed one at a time.
 * Times become integer ns from the earliest event; `TARGET_INFO_SESSION_START_TIME.utcEpochNs` is
 * that event's absolute time (`ts * 1000 + baseTimeNanoseconds`).
 */
export async function convertKinetoTrace(input: string, dbPath: string, opts: { onProgress?: ReadProgress } = {}): Promise<ConversionSummary> {
  const db = new BetterSqlite3(dbPath);
  try {
    return await convertInto(db, input, opts);
  } finally {
    db.close();
  }
}

async function convertInto(db: BetterSqlite3.Database, input: string, opts: { onProgress?: ReadProgress }): Promise<ConversionSummary> {
  setBulkWriteMode(db);
  createNsysSchema(db);

  const insert = prepareEventInserts(db);
  const strings = new Map<string, number>();
  const stringId = (s: string): number => {
    let id = strings.get(s);
    if (id === undefined) {
      id = strings.size;
      strings.set(s, id);
      insert.string.run(id, s);
    }
    return id;
  };

  // Times are first stored relative to the first event's whole µs (exact in doubles whatever the
  // epoch), then shifted so the earliest event is 0.
  const clock = { originUs: null as number | null, minNs: Infinity, maxNs: -Infinity };
  const skipped: Record<string, number> = {};
  const counts = { cpuOps: 0, runtimeCalls: 0, kernels: 0, memcpys: 0, memsets: 0, annotations: 0 };
  const processNames = new Map<number, string>();
  const threadNames = new Map<string, string>();
  const cpuThreads = new Map<string, { pid: number; tid: number }>();
  // Kernel names repeat: derive each short name once.
  const shortNameIds = new Map<number, number>();
  const skip = (what: string) => {
    skipped[what] = (skipped[what] ?? 0) + 1;
  };

  const onEvent = (e: KinetoEvent, _header: KinetoHeader) => {
    if (e.ph === 'M') {
      if (typeof e.pid !== 'number') return;
      const name = e.args && typeof e.args.name === 'string' ? e.args.name : null;
      if (e.name === 'process_name' && name) processNames.set(e.pid, name);
      else if (e.name === 'thread_name' && name && typeof e.tid === 'number') threadNames.set(`${e.pid}:${e.tid}`, name);
      return;
    }
    if (e.ph !== 'X' || typeof e.ts !== 'number') {
      skip(e.ph === 'f' || e.ph === 's' ? 'flow' : `ph:${e.ph ?? '?'}`);
      return;
    }
    const t = microsToNs(e.ts);
    clock.originUs ??= t.whole;
    const start = (t.whole - clock.originUs) * 1000 + t.fracNs;
    const d = microsToNs(Math.max(0, num(e.dur)));
    const end = start + d.whole * 1000 + d.fracNs;
    if (start < clock.minNs) clock.minNs = start;
    if (end > clock.maxNs) clock.maxNs = end;
    const cat = e.cat ?? '';
    const args = e.args ?? {};
    const name = e.name ?? '';
    const cpuSide = typeof e.pid === 'number' && typeof e.tid === 'number';
    const gtid = cpuSide ? packGlobalTid(e.pid as number, e.tid as number) : null;
    const noteThread = () => {
      const k = `${e.pid}:${e.tid}`;
      if (!cpuThreads.has(k)) cpuThreads.set(k, { pid: e.pid as number, tid: e.tid as number });
    };
    switch (cat) {
      case 'cpu_op':
      case 'user_annotation':
        if (!cpuSide) return skip(cat);
        noteThread();
        if (cat === 'user_annotation' || PROFILER_STEP.test(name)) {
          insert.nvtxRange.run(start, end, name, gtid);
          counts.annotations++;
        } else {
          insert.cpuOp.run(start, end, gtid, stringId(name), intOrNull(args['External id']));
          counts.cpuOps++;
        }
        return;
      case 'cuda_runtime':
      case 'cuda_driver':
        if (!cpuSide) return skip(cat);
        noteThread();
        insert.runtimeCall.run(start, end, cat === 'cuda_runtime' ? 0 : 1, gtid, intOrNull(args.correlation), stringId(name));
        counts.runtimeCalls++;
        return;
      case 'kernel': {
        const nameId = stringId(name);
        let shortId = shortNameIds.get(nameId);
        if (shortId === undefined) shortNameIds.set(nameId, (shortId = stringId(kernelShortName(name))));
        insert.kernel.run(
          start,
          end,
          num(args.device),
          num(args.context),
          num(args.stream),
          intOrNull(args.correlation),
          nameId,
          shortId,
          num(args['registers per thread']),
          dim(args.grid, 0),
          dim(args.grid, 1),
          dim(args.grid, 2),
          dim(args.block, 0),
          dim(args.block, 1),
          dim(args.block, 2),
          num(args['shared memory']),
          counts.kernels,
        );
        counts.kernels++;
        return;
      }
      case 'gpu_memcpy': {
        const k = memcpyKinds(name);
        insert.memcpy.run(start, end, num(args.device), num(args.context), num(args.stream), intOrNull(args.correlation), num(args.bytes), k.copyKind, k.srcKind, k.dstKind);
        counts.memcpys++;
        return;
      }
      case 'gpu_memset':
        insert.memset.run(start, end, num(args.device), num(args.context), num(args.stream), intOrNull(args.correlation), num(args.bytes), memsetKind(name));
        counts.memsets++;
        return;
      default:
        skip(cat || 'uncategorized');
    }
  };

  beginWrite(db);
  let read: { header: KinetoHeader; events: number };
  try {
    read = await readKinetoTrace(input, onEvent, opts);
  } catch (err) {
    rollbackWrite(db);
    throw err;
  }
  const { header } = read;
  const { originUs, minNs, maxNs } = clock;
  if (originUs === null) throw new KinetoTraceError(input, 'a PyTorch profiler trace with no timed events (traceEvents holds no "ph": "X" event)');
  if (!header.hasBaseTime) throw new KinetoTraceError(input, 'no "baseTimeNanoseconds": not a PyTorch profiler (Kineto) trace, or one too old to place on a clock');

  const shift = minNs;
  shiftTimes(db, shift);
  const durationNs = maxNs - minNs;
  const sessionStartUtcNs = header.baseTimeNs + BigInt(originUs) * 1000n + BigInt(shift);

  const gpuRowsWithoutProcess = linkGpuRowsToProcesses(db, cpuThreads);
  nestCpuOps(db);
  writeThreadsAndProcesses(db, cpuThreads, processNames, threadNames, stringId);
  writeTargetInfo(db, header, sessionStartUtcNs, durationNs, input, read.events);
  indexCpuOpsByThread(db);
  commitWrite(db);
  return {
    input,
    events: read.events,
    ...counts,
    sessionStartUtcNs: sessionStartUtcNs.toString(),
    durationNs,
    gpuRowsWithoutProcess,
    skipped,
  };
}

/**
 * Kineto files GPU rows under the device, not the launching process: set `globalPid` from the
 * runtime call with the same correlation id (correlation ids are unique per process, and a
 * Kineto trace is one process's). Returns the rows left without a process.
 */
function linkGpuRowsToProcesses(db: BetterSqlite3.Database, cpuThreads: Map<string, { pid: number; tid: number }>): number {
  indexRuntimeByCorrelation(db);
  const pids = new Set([...cpuThreads.values()].map((t) => t.pid));
  let left = 0;
  for (const table of GPU_ACTIVITY_TABLES) {
    setGpuRowProcessFromRuntime(db, table);
    if (pids.size === 1) {
      // A CPU-only or partial trace: the one profiled process launched everything.
      setGpuRowProcessWhereMissing(db, table, packGlobalTid([...pids][0], 0));
    }
    left += countGpuRowsWithoutProcess(db, table);
  }
  return left;
}

/**
 * Depth, parent and self time of every aten op: per thread, ops sorted by start (longest first on
 * ties) nest as a stack. Read into typed arrays first: SQLite cannot update a table while a scan
 * of it is open on the same connection.
 */
function nestCpuOps(db: BetterSqlite3.Database): void {
  const n = countCpuOps(db);
  if (n === 0) return;
  const rowid = new Float64Array(n);
  const tid = new Float64Array(n);
  const start = new Float64Array(n);
  const end = new Float64Array(n);
  let i = 0;
  for (const r of cpuOpsInNestingOrder(db)) {
    rowid[i] = r[0];
    tid[i] = r[1];
    start[i] = r[2];
    end[i] = r[3];
    i++;
  }
  const childNs = new Float64Array(n);
  const depth = new Int32Array(n);
  const parent = new Int32Array(n).fill(-1);
  const stack: number[] = [];
  for (let k = 0; k < n; k++) {
    while (stack.length && (tid[stack[stack.length - 1]] !== tid[k] || end[stack[stack.length - 1]] <= start[k])) stack.pop();
    // A partial overlap (not nested) is treated as a sibling: pop until the top contains it.
    while (stack.length && end[k] > end[stack[stack.length - 1]]) stack.pop();
    if (stack.length) {
      const p = stack[stack.length - 1];
      parent[k] = p;
      depth[k] = depth[p] + 1;
      childNs[p] += end[k] - start[k];
    }
    stack.push(k);
  }
  const upd = prepareCpuOpNestingUpdate(db);
  for (let k = 0; k < n; k++) upd.run(depth[k], parent[k] >= 0 ? rowid[parent[k]] : null, end[k] - start[k] - childNs[k], rowid[k]);
}

function writeThreadsAndProcesses(
  db: BetterSqlite3.Database,
  cpuThreads: Map<string, { pid: number; tid: number }>,
  processNames: Map<number, string>,
  threadNames: Map<string, string>,
  stringId: (s: string) => number,
): void {
  const insert = prepareThreadAndProcessInserts(db);
  const pids = new Set<number>();
  for (const [k, { pid, tid }] of cpuThreads) {
    pids.add(pid);
    insert.thread.run(stringId(threadNames.get(k) ?? `thread ${tid}`), packGlobalTid(pid, tid));
  }
  for (const pid of pids) insert.process.run(packGlobalTid(pid, 0), pid, processNames.get(pid) ?? null);
}

function isoSeconds(utcNs: bigint): string {
  return new Date(Number(utcNs / 1_000_000n)).toISOString().slice(0, 19);
}

function writeTargetInfo(db: BetterSqlite3.Database, header: KinetoHeader, sessionStartUtcNs: bigint, durationNs: number, input: string, events: number): void {
  const iso = isoSeconds(sessionStartUtcNs);
  insertSessionStart(db, sessionStartUtcNs, iso, iso);
  insertAnalysisDetails(db, GLOBAL_ID_BASE, durationNs);
  const insGpu = prepareGpuInsert(db);
  for (const d of header.deviceProperties) {
    const id = intOrNull(d.id);
    if (id === null) continue;
    const n = (k: string) => intOrNull(d[k]);
    insGpu.run(GLOBAL_ID_BASE, id, typeof d.name === 'string' ? d.name : null, n('totalGlobalMem'), n('numSms'), id, n('computeMajor'), n('computeMinor'), n('warpSize'),
      n('maxThreadsPerBlock'), n('regsPerBlock'), n('sharedMemPerBlock'), n('sharedMemPerBlockOptin'), n('sharedMemPerMultiprocessor'), n('regsPerMultiprocessor'));
  }
  const meta: [string, string | null][] = [
    ['EXPORT_PRODUCT_NAME', KINETO_PRODUCT_NAME],
    ['EXPORT_PRODUCT_VERSION', `Kineto trace (schemaVersion ${header.schemaVersion ?? 'unknown'})`],
    // The DDL above is nsys 2025.3.2's, schema 3.20.3.
    ['EXPORT_SCHEMA_VERSION', '3.20.3'],
    ['EXPORT_PARAM_INPUT_PATH', input],
    ['KINETO_SCHEMA_VERSION', header.schemaVersion === null ? null : String(header.schemaVersion)],
    ['KINETO_BASE_TIME_NS', header.baseTimeNs.toString()],
    ['KINETO_TRACE_ID', header.traceId],
    ['KINETO_EVENTS', String(events)],
    ...[...header.extra].map(([k, v]) => [`KINETO_${k.toUpperCase()}`, v] as [string, string]),
  ];
  const insMeta = prepareMetadataInsert(db);
  for (const [k, v] of meta) insMeta.run(k, v);
}
