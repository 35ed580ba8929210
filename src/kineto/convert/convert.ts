import BetterSqlite3 from 'better-sqlite3';
import {
  GPU_ACTIVITY_TABLES,
  beginWrite,
  commitWrite,
  countGpuRowsWithoutProcess,
  createNsysSchema,
  insertAnalysisDetails,
  insertSessionStart,
  prepareGpuInsert,
  prepareMetadataInsert,
  prepareThreadAndProcessInserts,
  rollbackWrite,
  linkGpuRowsByCorrelation,
  setBulkWriteMode,
} from '../../../queries/kinetoWriter.js';
import { ALL_TABLES, EventWriter, GLOBAL_ID_BASE, intOrNull, packGlobalTid, type ConvertedTables, type WrittenCounts } from './eventWriter.js';
import { readKinetoTrace, type KinetoHeader, type ReadProgress } from '../trace/readKineto.js';
import { KINETO_NOTE_PREFIX, KINETO_TABLES_READ } from '../trace/traceNotes.js';
import { KinetoTraceError } from '../../errors.js';

/** `META_DATA_EXPORT.EXPORT_PRODUCT_NAME` of a converted trace (how `isKinetoConversion` knows it). */
export const KINETO_PRODUCT_NAME = 'iterscope: PyTorch profiler (Kineto) trace conversion';

/** What a conversion read and wrote (`WrittenCounts`: rows per table). */
export interface ConversionSummary extends WrittenCounts {
  input: string;
  events: number;
  /** Absolute (Unix epoch) ns of the session start (the earliest event), as a decimal string; null when the trace has no absolute clock. */
  sessionStartUtcNs: string | null;
  durationNs: number;
  /** GPU rows whose launching process could not be found (no runtime call with their correlation). */
  gpuRowsWithoutProcess: number;
  /** Events left out or read differently, by kind (`flow`, `counter`, `cat:python_function`, ...). */
  skipped: Record<string, number>;
  /** What the conversion did with each kind of event and with the trace's clock, one sentence each. */
  notes: string[];
}

/**
 * Without baseTimeNanoseconds, ts from 1e14 µs on (1973-03-03) is Unix-epoch µs, as traces without
 * it write it (1621401187223197 in kineto's tb_plugin test data of PyTorch 1.8, 1771536568903147
 * in a 2026 ROCm trace, test/fixtures-field/kineto); ts counted from a trace's own start (a
 * profiler session lasts far less than three years) stays far below.
 */
const EPOCH_US_FROM = 1e14;

/** The session start on the Unix clock, and how it was found (null: the trace has no absolute clock). */
function sessionClock(header: KinetoHeader, earliestUs: number, earliestFracNs: number): { utcNs: bigint | null; note: string | null } {
  const earliest = BigInt(earliestUs) * 1000n + BigInt(earliestFracNs);
  if (header.hasBaseTime) return { utcNs: header.baseTimeNs + earliest, note: null };
  if (earliestUs >= EPOCH_US_FROM) {
    return { utcNs: earliest, note: 'no "baseTimeNanoseconds" (older PyTorch, and some builds since, write none): ts read as Unix-epoch µs, as those traces write it' };
  }
  return {
    utcNs: null,
    note: 'no "baseTimeNanoseconds" and ts counts from an unknown origin: the trace has no absolute clock, so iteration-log timestamps cannot be placed on it (ProfilerStep#N ranges still mark iterations)',
  };
}

/** Notes on the header: the clock, distributedInfo, displayTimeUnit. */
function headerNotes(header: KinetoHeader, clockNote: string | null): string[] {
  const notes: string[] = [];
  if (clockNote) notes.push(clockNote);
  const unit = header.extra.get('displayTimeUnit');
  if (unit !== undefined && unit !== 'ms') notes.push(`displayTimeUnit "${unit}" only sets the unit a trace viewer shows; ts and dur are read in µs, as the trace event format defines them`);
  const dist = header.distributedInfo;
  if (dist) {
    const rank = intOrNull(dist.rank);
    const world = intOrNull(dist.world_size);
    notes.push(`distributed run (distributedInfo): rank ${rank ?? '?'} of ${world ?? '?'}${typeof dist.backend === 'string' ? `, backend ${dist.backend}` : ''}; this trace is that rank's only`);
  }
  return notes;
}

/**
 * Converts a Kineto trace into an nsys-shaped SQLite database at `dbPath` (created; must not
 * exist): the real nsys DDL, one transaction, prepared statements (all in queries/kinetoWriter.ts),
 * events streamed one at a time. Any PyTorch version's trace: recognised by its events' categories
 * (not by one header key), ts in µs absolute or relative, old and new category names.
 * Times become integer ns from the earliest event; `TARGET_INFO_SESSION_START_TIME.utcEpochNs` is
 * that event's absolute time (`ts * 1000 + baseTimeNanoseconds`, or `ts * 1000` for the epoch-µs
 * ts of older traces), absent when the trace has no absolute clock.
 */
export async function convertKinetoTrace(input: string, dbPath: string, opts: ConversionOptions = {}): Promise<ConversionSummary> {
  const db = new BetterSqlite3(dbPath);
  try {
    return await convertInto(db, input, opts);
  } finally {
    db.close();
  }
}

export interface ConversionOptions {
  onProgress?: ReadProgress;
  /** Write only the rows of these tables (names as in the nsys DDL; KINETO_CPU_OPS for the aten ops); all when absent. */
  tables?: readonly string[];
}

/** Which row kinds the named tables need. */
function convertedTables(tables: readonly string[] | undefined): ConvertedTables {
  if (!tables) return ALL_TABLES;
  const has = (t: string) => tables.includes(t);
  return {
    cpuOps: has('KINETO_CPU_OPS'),
    apiCalls: has('CUPTI_ACTIVITY_KIND_RUNTIME'),
    kernels: has('CUPTI_ACTIVITY_KIND_KERNEL'),
    memory: has('CUPTI_ACTIVITY_KIND_MEMCPY') || has('CUPTI_ACTIVITY_KIND_MEMSET'),
    annotations: has('NVTX_EVENTS'),
  };
}

async function convertInto(db: BetterSqlite3.Database, input: string, opts: ConversionOptions): Promise<ConversionSummary> {
  setBulkWriteMode(db);
  createNsysSchema(db);
  const tables = convertedTables(opts.tables);
  const w = new EventWriter(db, tables);
  beginWrite(db);
  let read: { header: KinetoHeader; events: number; unparsed: number };
  try {
    read = await readKinetoTrace(input, (e) => w.onEvent(e), { onProgress: opts.onProgress, wants: w.selection() ?? undefined });
    if (w.notes.recognised === 0) {
      throw new KinetoTraceError(input, 'JSON with a "traceEvents" array, but none of its events has a PyTorch profiler category (cpu_op, kernel, cuda_runtime, gpu_memcpy, user_annotation, ...): not a PyTorch profiler (Kineto) trace');
    }
    if (w.originUs === null) throw new KinetoTraceError(input, 'a PyTorch profiler trace with no timed events (traceEvents holds no "ph": "X" event)');
  } catch (err) {
    rollbackWrite(db);
    throw err;
  }
  const { header } = read;
  const shift = w.minNs;
  const pids = new Set([...w.cpuThreads.values()].map((t) => t.pid));
  w.finish(shift, pids.size === 1 ? packGlobalTid([...pids][0], 0) : null);
  // Without the API calls (`kernels`: no table needs the process) there is nothing to link by.
  const gpuRowsWithoutProcess = pids.size === 1 || !tables.apiCalls ? 0 : linkGpuTables(db);
  const durationNs = w.maxNs - w.minNs;
  const earliestWholeUs = w.originUs + Math.floor(shift / 1000);
  const clock = sessionClock(header, earliestWholeUs, shift - Math.floor(shift / 1000) * 1000);

  writeThreadsAndProcesses(db, w.cpuThreads, w.processNames, w.threadNames, (s) => w.stringId(s));
  const notes = [...headerNotes(header, clock.note), ...w.notes.sentences(read.unparsed === 0)];
  if (gpuRowsWithoutProcess) {
    notes.push(`${gpuRowsWithoutProcess} GPU activities have no API call with their correlation id, and the trace's CPU side is not one process: they are tied to no process`);
  }
  writeTargetInfo(db, header, clock.utcNs, durationNs, input, read.events, notes, opts.tables);
  commitWrite(db);
  return {
    input,
    events: read.events,
    ...w.counts,
    sessionStartUtcNs: clock.utcNs === null ? null : clock.utcNs.toString(),
    durationNs,
    gpuRowsWithoutProcess,
    // Events a GPU-only conversion left unparsed: not read, so in no note.
    skipped: read.unparsed ? { ...w.notes.tally(), unread: read.unparsed } : w.notes.tally(),
    notes,
  };
}

/**
 * Kineto files GPU rows under the device, not the launching process. With one process on the CPU
 * side (a CPU-only or partial trace too) the rows were written with it; with several, each row
 * takes the process of the API call with its correlation id. Returns the rows left without one.
 */
function linkGpuTables(db: BetterSqlite3.Database): number {
  let left = 0;
  for (const table of GPU_ACTIVITY_TABLES) {
    linkGpuRowsByCorrelation(db, table);
    left += countGpuRowsWithoutProcess(db, table);
  }
  return left;
}

function writeThreadsAndProcesses(
  db: BetterSqlite3.Database,
  cpuThreads: Map<number, { pid: number; tid: number }>,
  processNames: Map<number, string>,
  threadNames: Map<string, string>,
  stringId: (s: string) => number,
): void {
  const insert = prepareThreadAndProcessInserts(db);
  const pids = new Set<number>();
  for (const [gtid, { pid, tid }] of cpuThreads) {
    pids.add(pid);
    insert.thread.run(stringId(threadNames.get(`${pid}:${tid}`) ?? `thread ${tid}`), gtid);
  }
  for (const pid of pids) insert.process.run(packGlobalTid(pid, 0), pid, processNames.get(pid) ?? null);
}

/** `distributedInfo`'s scalar fields as `KINETO_DISTRIBUTED_RANK`, `..._WORLD_SIZE`, `..._BACKEND`, ... */
function distributedInfoRows(info: Record<string, unknown> | null): [string, string][] {
  if (!info) return [];
  return Object.entries(info)
    .filter(([, v]) => v !== null && typeof v !== 'object')
    .map(([k, v]) => [`KINETO_DISTRIBUTED_${k.toUpperCase()}`, String(v)]);
}

function isoSeconds(utcNs: bigint): string {
  return new Date(Number(utcNs / 1_000_000n)).toISOString().slice(0, 19);
}

function writeTargetInfo(db: BetterSqlite3.Database, header: KinetoHeader, sessionStartUtcNs: bigint | null, durationNs: number, input: string, events: number, notes: string[], tablesRead: readonly string[] | undefined): void {
  if (sessionStartUtcNs !== null) {
    const iso = isoSeconds(sessionStartUtcNs);
    insertSessionStart(db, sessionStartUtcNs, iso, iso);
  }
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
    ...(tablesRead ? [[KINETO_TABLES_READ, tablesRead.join(',')] as [string, string]] : []),
    ...[...header.extra].map(([k, v]) => [`KINETO_${k.toUpperCase()}`, v] as [string, string]),
    ...distributedInfoRows(header.distributedInfo),
    ...notes.map((n, i) => [`${KINETO_NOTE_PREFIX}${i + 1}`, n] as [string, string]),
  ];
  const insMeta = prepareMetadataInsert(db);
  for (const [k, v] of meta) insMeta.run(k, v);
}
