import type BetterSqlite3 from 'better-sqlite3';
import { flushEventInserts, prepareEventInserts, type EventInserts, type KernelValues, type MemcpyValues, type MemsetValues, type RuntimeCallValues } from '../../../queries/kinetoWriter.js';
import { RowBuffer } from './rowBuffer.js';
import { kernelShortName, memcpyKinds, memsetKind } from '../trace/activityNames.js';
import { CpuOps } from './cpuOpNesting.js';
import { kindOfCategory, microsToNs, nsSince, numericId, streamOfTid, type EventKind } from '../trace/kinetoEvents.js';
import type { KinetoEvent } from '../trace/readKineto.js';
import { TraceNotes } from '../trace/traceNotes.js';

/** How the PyTorch profiler names a module's forward among its Python frames (`with_stack`): `nn.Module: <Class>_<instance>`. */
export const TORCH_MODULE_PREFIX = 'nn.Module: ';

/** The upper bits nsys sets in every globalPid/globalTid of a local capture (fixture README). */
export const GLOBAL_ID_BASE = 0x1000000000000;
const ID_MASK = 0xffffff;

/** nsys's packing: `(pid << 24) | tid` above the capture's base bits. Fits in a double (< 2^53). */
export function packGlobalTid(pid: number, tid: number): number {
  return GLOBAL_ID_BASE + (pid & ID_MASK) * 0x1000000 + (tid & ID_MASK);
}

const PROFILER_STEP = /^ProfilerStep#\d+$/;

/** Counts of what was written, by table. */
export interface WrittenCounts {
  cpuOps: number;
  runtimeCalls: number;
  kernels: number;
  memcpys: number;
  memsets: number;
  /** `user_annotation` / `ProfilerStep#N` ranges written as NVTX push/pop ranges. */
  annotations: number;
}

/** One complete event's place in time: ns from the provisional origin. */
interface Span {
  start: number;
  end: number;
}

/** Which tables a conversion writes (a command that reads only kernels needs no aten ops). */
export interface ConvertedTables {
  cpuOps: boolean;
  apiCalls: boolean;
  kernels: boolean;
  memory: boolean;
  annotations: boolean;
}

export const ALL_TABLES: ConvertedTables = { cpuOps: true, apiCalls: true, kernels: true, memory: true, annotations: true };

/**
 * Text an event of a GPU category holds, whatever the PyTorch version: `"cat": "kernel"` /
 * `"Kernel"`, `"gpu_memcpy"` / `"Memcpy"`, `"gpu_memset"` / `"Memset"` (a `\u` escape could spell
 * one otherwise: such text is read too).
 */
const KERNEL_TEXT = /kernel|\\u/i;
const GPU_TEXT = /kernel|memcpy|memset|\\u/i;

/**
 * Reads the events of a Kineto trace as they stream by into rows of the nsys-shaped tables, held
 * in typed buffers (times against a provisional origin, the first event's whole µs) and written
 * by `finish` once the session start (the earliest event) and the launching process are known.
 * Strings are written as they come. Counts what it leaves out or reads differently in `notes`.
 */
export class EventWriter {
  private readonly insert: EventInserts;
  private readonly strings = new Map<string, number>();
  /** Kernel names repeat: each short name derived once. */
  private readonly shortNameIds = new Map<number, number>();
  readonly notes = new TraceNotes();
  readonly cpuOps = new CpuOps();
  readonly counts: WrittenCounts = { cpuOps: 0, runtimeCalls: 0, kernels: 0, memcpys: 0, memsets: 0, annotations: 0 };
  readonly processNames = new Map<number, string>();
  readonly threadNames = new Map<string, string>();
  /** CPU threads that ran converted events, by packed globalTid. */
  readonly cpuThreads = new Map<number, { pid: number; tid: number }>();
  originUs: number | null = null;
  minNs = Infinity;
  maxNs = -Infinity;
  private readonly runtimeRows = new RowBuffer(6);
  private readonly kernelRows = new RowBuffer(17);
  private readonly memcpyRows = new RowBuffer(10);
  private readonly memsetRows = new RowBuffer(8);
  /** start, end, globalTid, index into `annotationTexts`. */
  private readonly annotationRows = new RowBuffer(4, 256);
  private readonly annotationTexts: string[] = [];

  constructor(
    db: BetterSqlite3.Database,
    private readonly tables: ConvertedTables = ALL_TABLES,
  ) {
    this.insert = prepareEventInserts(db);
  }

  /**
   * Writes every row, times minus `shiftNs` (the session start), GPU rows with `gpuProcess` (the
   * one process of the trace; null: linked by correlation afterwards), aten ops nested.
   */
  finish(shiftNs: number, gpuProcess: number | null): void {
    const ins = this.insert;
    const tail = [gpuProcess];
    this.runtimeRows.forEach(shiftNs, (r) => ins.runtimeCall.add(r as [...RuntimeCallValues]));
    this.kernelRows.forEach(shiftNs, (r) => ins.kernel.add(r as [...KernelValues, number | null]), tail);
    this.memcpyRows.forEach(shiftNs, (r) => ins.memcpy.add(r as [...MemcpyValues, number | null]), tail);
    this.memsetRows.forEach(shiftNs, (r) => ins.memset.add(r as [...MemsetValues, number | null]), tail);
    this.annotationRows.forEach(shiftNs, (r) => ins.nvtxRange.add([r[0] as number, r[1] as number, this.annotationTexts[r[3] as number], r[2]]));
    this.cpuOps.writeNested(shiftNs, (...row) => ins.cpuOp.add(row));
    flushEventInserts(ins);
  }

  /**
   * For a conversion that writes GPU activity only (`kernels`): the text test that lets the reader
   * leave the other events unparsed (`ScannerSink.wants`), every event read until one of a Kineto
   * category has been (so a trace is still recognised by its content). Null: every event is read.
   */
  selection(): ((text: string) => boolean) | null {
    const t = this.tables;
    if (t.cpuOps || t.apiCalls || t.annotations) return null;
    const gpu = t.memory ? GPU_TEXT : KERNEL_TEXT;
    return (text) => this.notes.recognised === 0 || gpu.test(text);
  }

  stringId(s: string): number {
    let id = this.strings.get(s);
    if (id === undefined) {
      id = this.strings.size;
      this.strings.set(s, id);
      this.insert.string.run(id, s);
    }
    return id;
  }

  onEvent(e: KinetoEvent): void {
    const ph = e.ph;
    if (ph === 'X') return this.complete(e);
    if (ph === 'M') return this.metadata(e);
    if (typeof e.cat === 'string' && kindOfCategory(e.cat) !== undefined) this.notes.recognised++;
    if (ph === 's' || ph === 'f' || ph === 't') this.notes.count('flow');
    else if (ph === 'C') this.notes.count('counter');
    else if (ph === 'i' || ph === 'I') this.notes.count('instant');
    else this.notes.otherPhase(String(ph ?? '?'));
  }

  private metadata(e: KinetoEvent): void {
    const pid = numericId(e.pid);
    const name = e.args && typeof e.args.name === 'string' ? e.args.name : null;
    if (pid === null || !name) return;
    if (e.name === 'process_name') this.processNames.set(pid, name);
    else if (e.name === 'thread_name') {
      const tid = numericId(e.tid);
      if (tid !== null) this.threadNames.set(`${pid}:${tid}`, name);
    }
  }

  /** ns since the provisional origin (the first timed event's whole µs) of a µs time. */
  private nsOf(us: number): number {
    this.originUs ??= microsToNs(us).whole;
    return nsSince(us, this.originUs);
  }

  private complete(e: KinetoEvent): void {
    if (typeof e.ts !== 'number' || !Number.isFinite(e.ts)) return this.notes.count('noTs');
    const cat = typeof e.cat === 'string' ? e.cat : '';
    const kind = kindOfCategory(cat);
    if (kind !== undefined) this.notes.recognised++;
    const start = this.nsOf(e.ts);
    let durNs = 0;
    if (typeof e.dur === 'number' && Number.isFinite(e.dur)) durNs = nsSince(Math.max(0, e.dur), 0);
    else if (kind) this.notes.count('noDur');
    const span = { start, end: start + durNs };
    if (span.start < this.minNs) this.minNs = span.start;
    if (span.end > this.maxNs) this.maxNs = span.end;
    // The module spans a `with_stack` trace records (`nn.Module: DecoderLayer_3`, among its Python
    // frames, which are not converted): ranges, as the layer split reads module markers.
    if (kind === null && cat === 'python_function' && typeof e.name === 'string' && e.name.startsWith(TORCH_MODULE_PREFIX)) return this.cpuSide('annotation', e, span);
    if (!kind) return this.notes.notConvertedCategory(cat);
    this.write(kind, e, span);
  }

  private write(kind: EventKind, e: KinetoEvent, span: Span): void {
    switch (kind) {
      case 'cpuOp':
      case 'annotation':
        return this.cpuSide(kind, e, span);
      case 'runtime':
      case 'driver':
        return this.apiCall(kind, e, span);
      default:
        return this.gpuActivity(kind, e, span);
    }
  }

  /** The thread's packed id (noted as a CPU thread), or null without numeric pid/tid. */
  private threadOf(e: KinetoEvent): number | null {
    const pid = numericId(e.pid);
    const tid = numericId(e.tid);
    if (pid === null || tid === null) {
      this.notes.count('noThread');
      return null;
    }
    const gtid = packGlobalTid(pid, tid);
    if (!this.cpuThreads.has(gtid)) this.cpuThreads.set(gtid, { pid, tid });
    return gtid;
  }

  private cpuSide(kind: 'cpuOp' | 'annotation', e: KinetoEvent, span: Span): void {
    const gtid = this.threadOf(e);
    if (gtid === null) return;
    const name = typeof e.name === 'string' ? e.name : '';
    if (kind === 'annotation' || PROFILER_STEP.test(name)) {
      if (!this.tables.annotations) return;
      this.annotationRows.push([span.start, span.end, gtid, this.annotationTexts.length]);
      this.annotationTexts.push(name);
      this.counts.annotations++;
      return;
    }
    if (!this.tables.cpuOps) return;
    this.cpuOps.add(span.start, span.end, gtid, this.stringId(name), intOrNull(e.args?.['External id']));
    this.counts.cpuOps++;
  }

  /** `args.correlation`, else the External id that ROCm traces join launches and kernels by (noted). */
  private correlationOf(args: Record<string, unknown>): number | null {
    const corr = intOrNull(args.correlation);
    if (corr !== null) return corr;
    const ext = intOrNull(args['External id']);
    if (ext !== null) this.notes.count('correlationFromExternalId');
    return ext;
  }

  private apiCall(kind: 'runtime' | 'driver', e: KinetoEvent, span: Span): void {
    const gtid = this.threadOf(e);
    if (gtid === null) return;
    if (!this.tables.apiCalls) return;
    const name = typeof e.name === 'string' ? e.name : '';
    this.runtimeRows.push([span.start, span.end, kind === 'runtime' ? 0 : 1, gtid, this.correlationOf(e.args ?? {}), this.stringId(name)]);
    this.counts.runtimeCalls++;
  }

  private gpuActivity(kind: 'kernel' | 'memcpy' | 'memset', e: KinetoEvent, span: Span): void {
    if (!(kind === 'kernel' ? this.tables.kernels : this.tables.memory)) return;
    const args = e.args ?? {};
    let device = intOrNull(args.device);
    if (device === null) {
      device = numericId(e.pid) ?? 0;
      this.notes.count('deviceFromPid');
    }
    let stream = intOrNull(args.stream);
    if (stream === null) {
      stream = streamOfTid(e.tid) ?? 0;
      this.notes.count('streamFromTid');
    }
    if (span.end === span.start) this.notes.count('zeroDurGpu');
    const context = num(args.context);
    const corr = this.correlationOf(args);
    const name = typeof e.name === 'string' ? e.name : '';
    if (kind === 'kernel') return this.kernel(span, device, context, stream, corr, name, args);
    if (kind === 'memcpy') {
      const k = memcpyKinds(name);
      this.memcpyRows.push([span.start, span.end, device, context, stream, corr, num(args.bytes), k.copyKind, k.srcKind, k.dstKind]);
      this.counts.memcpys++;
      return;
    }
    this.memsetRows.push([span.start, span.end, device, context, stream, corr, num(args.bytes), memsetKind(name)]);
    this.counts.memsets++;
  }

  private kernel(span: Span, device: number, context: number, stream: number, corr: number | null, name: string, args: Record<string, unknown>): void {
    const nameId = this.stringId(name);
    let shortId = this.shortNameIds.get(nameId);
    if (shortId === undefined) this.shortNameIds.set(nameId, (shortId = this.stringId(kernelShortName(name))));
    const grid = args.grid;
    const block = args.block;
    this.kernelRows.push([
      span.start,
      span.end,
      device,
      context,
      stream,
      corr,
      nameId,
      shortId,
      num(args['registers per thread']),
      dim(grid, 0),
      dim(grid, 1),
      dim(grid, 2),
      dim(block, 0),
      dim(block, 1),
      dim(block, 2),
      num(args['shared memory']),
      this.counts.kernels,
    ]);
    this.counts.kernels++;
  }
}

function num(v: unknown, fallback = 0): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : fallback;
}
export function intOrNull(v: unknown): number | null {
  return typeof v === 'number' && Number.isInteger(v) ? v : null;
}
function dim(v: unknown, i: number): number {
  return Array.isArray(v) && typeof v[i] === 'number' ? v[i] : 1;
}
