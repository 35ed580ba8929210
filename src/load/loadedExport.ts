import type { ExportHandle, ExportMetadata } from '../../queries/handle.js';
import { rowIdBound } from '../../queries/capture.js';
import { loadStrings, stringLookup } from '../../queries/strings.js';
import { requireContract, type AnalysisName } from '../export/contract.js';
import { busyUnionOverOps, type BusyIntervals } from '../math/busyIntervals.js';
import { loadApiCallColumns, recordApiCallRows, type ApiCallColumns } from './apiCallColumns.js';
import { ApiCallIndex } from './apiCallIndex.js';
import { computeDeviceTimelines, type DeviceTimeline } from './deviceTimelines.js';
import { loadGpuOpColumns, recordGpuOpRows, type GpuOpColumns, type KernelNameColumn } from './gpuOpColumns.js';
import type { MemcpyTrafficColumns } from './memcpyTrafficColumns.js';
import { NvtxWorkerRead, type BackgroundPlan } from '../worker/nvtxInBackground.js';
import { ReadInBackground } from '../worker/readInBackground.js';
import type { LaunchedCalls } from './launchedCalls.js';
import { emptyNvtxColumns, loadNvtxColumns, nvtxSpanOf, type NvtxColumns, type NvtxSpan } from './nvtxEventColumns.js';
import { youngGeneration } from '../v8/youngGeneration.js';

/**
 * What a part declares it reads (see `PartEntry.loads`): the tables read whole into typed columns,
 * `gpuTimelines`, the busy union and device timelines built from the GPU ops (107 MB on the 10x
 * bench export: let go after their last reader, not with the GPU ops), and `memcpyTraffic`, the
 * memcpys' traffic read in the GPU ops' scan (`LoadOptions.memcpyTraffic`).
 */
export type LoadedData = 'gpuOps' | 'apiCalls' | 'nvtx' | 'gpuTimelines' | 'memcpyTraffic';

/** How the columns are read (what the parts asked for decides it, see src/pipeline). */
export interface LoadOptions {
  /** The GPU ops and API calls with the launch-id check the NVTX GPU projection needs (`GpuOpColumns.launchIds`, `ApiCallColumns.launchIds`). */
  launchIds?: boolean;
  /** The GPU ops with their trace slice columns (the `timeline` part). */
  slices?: { kernelName: KernelNameColumn };
  /** The memcpys' traffic read in the GPU ops' scan (`memcpyTraffic()`), not with `slices`. */
  memcpyTraffic?: boolean;
  /**
   * Every column over SharedArrayBuffers (the NVTX worker's side: its columns cross to the other
   * thread). On the other side they are shared once a worker is started (`startNvtxWorker`).
   */
  shared?: boolean;
  /**
   * What is built from the GPU ops and API calls as soon as both are read, while the NVTX worker
   * still works (reads NVTX, or queries what this thread waits for next): the API-call index, the
   * busy union, the device timelines.
   */
  precompute?: readonly ('apiCallIndex' | 'busyUnion' | 'deviceTimelines')[];
  /**
   * Reads on a second core when no NVTX worker runs, or one that reads neither the NVTX columns nor
   * the API calls (src/worker/readInBackground.ts): `entry`, the worker entry file; `apiCalls`: the API calls
   * read there while this thread reads the GPU ops; either read from `minApiCalls` API calls
   * (below, starting the worker costs more than the read).
   */
  readWorkers?: { entry: string; apiCalls: boolean; minApiCalls: number };
  /**
   * The analysis reads the GPU ops on this thread: in a program importing the library, V8's young
   * generation is kept small until `close` (src/v8/youngGeneration.ts; the CLI decides once, by command).
   */
  smallYoungGeneration?: boolean;
}

/** Reports the time one load step took (`gpuOps`, `apiCalls`, `nvtxColumns`, `launchIndexes`). */
export type LoadTiming = <T>(step: string, fn: () => T) => T;

/**
 * One export as the analyses read it: the tables read once into typed columns (GPU ops, CUDA API
 * calls, NVTX), what is built from them once (the API-call index, the busy union, the device
 * timelines, the NVTX domain names, string lookups) and the contract checks made, all held here
 * and let go with it (no module-level cache). Columns are read on first use and let go when no
 * part left reads them (`release`, the pipeline's plan). The small filtered reads
 * (src/load/*Reads.ts) take it too: nothing but src/load reads the export.
 *
 * NVTX can be read on a second core (`startNvtxWorker`): the columns and some parts come from
 * there (`takeBackground`), and the GPU ops and API calls cross to it over shared memory.
 */
export class LoadedExport {
  readonly path: string;
  readonly metadata: ExportMetadata;
  private gpuOpsValue: GpuOpColumns | undefined;
  private memcpyTrafficValue: MemcpyTrafficColumns | undefined;
  private apiCallsValue: ApiCallColumns | undefined;
  private nvtxValue: NvtxColumns | undefined;
  private worker: NvtxWorkerRead | null = null;
  private launchesRead: ReadInBackground<'launches'> | null = null;
  /** The launches taken from the worker early (`settleLaunchesRead`), until the projection takes them. */
  private launchesSettled: LaunchedCalls | undefined;
  private apiCallsRead: ReadInBackground<'apiCalls'> | null = null;
  private readonly memo = new Map<string, unknown>();
  private readonly contracts = new Set<string>();
  private readonly timed: LoadTiming;
  /** Columns over SharedArrayBuffers (see `LoadOptions.shared`). */
  private shared: boolean;
  /** Sets back what `youngGeneration.forAnalysis` set for this analysis (`LoadOptions.smallYoungGeneration`). */
  private readonly youngGenerationBack: () => void;

  constructor(
    /** The open export: read by src/load only (test/architecture holds every other folder to that). */
    readonly handle: ExportHandle,
    private readonly options: LoadOptions = {},
    timed?: LoadTiming,
  ) {
    this.path = handle.path;
    this.metadata = handle.metadata;
    this.timed = timed ?? ((_step, fn) => fn());
    this.shared = options.shared === true;
    this.youngGenerationBack = options.smallYoungGeneration ? youngGeneration.forAnalysis() : () => {};
  }

  hasTable(table: string): boolean {
    return this.handle.hasTable(table);
  }

  hasColumn(table: string, column: string): boolean {
    return this.handle.hasColumn(table, column);
  }

  /** `max(rowid)` of a table (0 when empty or absent): a b-tree lookup, at least its row count. */
  rowBound(table: string): number {
    return this.handle.hasTable(table) ? this.cached(`rowBound\u0000${table}`, () => rowIdBound(this.handle, table)) : 0;
  }

  /** Checks `analysis`'s declared tables and columns once (see contract.ts). */
  requireContract(analysis: AnalysisName): void {
    requireContract(this.handle, analysis, this.contracts);
  }

  /** `compute()`'s value, computed once per export under `key` (what a small read or an index is). */
  cached<T>(key: string, compute: () => T): T {
    if (this.memo.has(key)) return this.memo.get(key) as T;
    const v = compute();
    this.memo.set(key, v);
    return v;
  }

  /** The value `cached` keeps under `key`, if it was made (nothing is computed). */
  cachedValue<T>(key: string): T | undefined {
    return this.memo.get(key) as T | undefined;
  }

  // ---- GPU ops and API calls -----------------------------------------------------------------

  /** Every GPU op in typed columns (read on first use). */
  gpuOps(): GpuOpColumns {
    if (!this.gpuOpsValue) {
      const entry = this.options.readWorkers?.apiCalls && !this.apiCallsValue && !this.apiCallsRead && !this.worker?.apiCallsPending() ? this.readWorkerEntry() : null;
      if (entry) this.apiCallsRead = ReadInBackground.start(this.handle, entry, 'apiCalls', { launchIds: this.options.launchIds });
      const { memcpyTraffic, ...gpuOps } = this.timed('gpuOps', () =>
        loadGpuOpColumns(this.handle, { launchIds: this.options.launchIds, slices: this.options.slices, shared: this.shared, memcpyTraffic: this.options.memcpyTraffic }),
      );
      // Held apart: the GPU ops cross to the NVTX worker, which has no use for the traffic.
      this.gpuOpsValue = gpuOps;
      this.memcpyTrafficValue = memcpyTraffic;
      this.launchesLoaded();
    }
    return this.gpuOpsValue;
  }

  /** Every CUDA API call in typed columns (read on first use). */
  apiCalls(): ApiCallColumns {
    if (!this.apiCallsValue) {
      const read = this.apiCallsRead;
      this.apiCallsRead = null;
      // Timed as `apiCalls` either way (from a worker: the wait for it).
      this.apiCallsValue = this.timed('apiCalls', () => {
        const fromWorker = read?.take() ?? this.worker?.takeApiCalls<ApiCallColumns>();
        if (fromWorker) recordApiCallRows(this.handle, fromWorker);
        return fromWorker ?? loadApiCallColumns(this.handle, { shared: this.shared, launchIds: this.options.launchIds });
      });
      this.launchesLoaded();
    }
    return this.apiCallsValue;
  }

  /**
   * The memcpys' traffic when the GPU ops' scan read it (`LoadOptions.memcpyTraffic`), else
   * undefined: the memory part then queries the memcpy table.
   */
  memcpyTraffic(): MemcpyTrafficColumns | undefined {
    return this.memcpyTrafficValue;
  }

  /** The GPU ops when they are read (a part that can also query them asks this), else undefined. */
  loadedGpuOps(): GpuOpColumns | undefined {
    return this.gpuOpsValue;
  }

  /** The API calls when they are read, else undefined. */
  loadedApiCalls(): ApiCallColumns | undefined {
    return this.apiCallsValue;
  }

  /**
   * The GPU ops and API calls read elsewhere (the NVTX worker gets the other thread's), with the
   * row counts their scans made, so no part here counts those tables again.
   */
  adoptLaunches(launches: { gpuOps: GpuOpColumns; apiCalls: ApiCallColumns }): void {
    this.gpuOpsValue = launches.gpuOps;
    this.apiCallsValue = launches.apiCalls;
    recordGpuOpRows(this.handle, launches.gpuOps);
    recordApiCallRows(this.handle, launches.apiCalls);
  }

  /**
   * Both read: hand them to the NVTX worker, then build what is built from them alone while it works
   * (reads NVTX, or queries the iteration ranges this thread waits for next).
   */
  private launchesLoaded(): void {
    const gpuOps = this.gpuOpsValue;
    const apiCalls = this.apiCallsValue;
    if (!gpuOps || !apiCalls || !this.worker) return;
    this.worker.postLaunches({ gpuOps, apiCalls });
    const precompute = this.options.precompute ?? [];
    if (precompute.length === 0 || !this.worker.busy()) return;
    this.timed('launchIndexes', () => {
      if (precompute.includes('apiCallIndex')) this.apiCallIndex();
      if (precompute.includes('busyUnion')) this.busyUnion();
      if (precompute.includes('deviceTimelines')) this.deviceTimelines();
    });
  }

  /** The index from a GPU op's (pid, correlation id) to its API call (`ApiCallIndex`), built once. */
  apiCallIndex(): ApiCallIndex {
    return this.cached('apiCallIndex', () => new ApiCallIndex(this.apiCalls()));
  }

  /**
   * Busy union of every GPU op (see `unionIntervals`; over the op columns, 4 bytes an interval: `busyUnionOverOps`), computed once: with one process on one
   * device, the iteration attribution (busy per process) and the gap analysis (busy per device)
   * need the same union, and on millions of ops its two sorts dominate.
   */
  busyUnion(): BusyIntervals {
    return this.cached('busyUnion', () => {
      const ops = this.gpuOps();
      return busyUnionOverOps(ops.start, ops.end);
    });
  }

  /** Busy union per device (read-only for callers), computed once. */
  deviceTimelines(): DeviceTimeline[] {
    return this.cached('deviceTimelines', () => computeDeviceTimelines(this.gpuOps(), () => this.busyUnion()));
  }

  // ---- NVTX -----------------------------------------------------------------------------------

  /**
   * Every NVTX event in columns: read on first use here, or taken from the NVTX worker (waiting
   * for it). An export without NVTX_EVENTS has none (count 0).
   */
  nvtx(): NvtxColumns {
    if (!this.nvtxValue) {
      this.nvtxValue = this.timed('nvtxColumns', () => {
        // (The rows the worker left out are noted for this export as its reply is taken.)
        const fromWorker = this.worker?.columnsPending() ? this.worker.takeColumns<NvtxColumns>() : undefined;
        return fromWorker ?? (this.handle.hasTable('NVTX_EVENTS') ? loadNvtxColumns(this.handle, { shared: this.shared }) : emptyNvtxColumns());
      });
    }
    return this.nvtxValue;
  }

  /**
   * The NVTX columns when they are read or being read by the worker (waited for), else undefined:
   * readers that can also run a filtered query of their own ask this.
   */
  sharedNvtx(): NvtxColumns | undefined {
    if (this.nvtxValue) return this.nvtxValue;
    return this.worker?.columnsPending() ? this.nvtx() : undefined;
  }

  /**
   * The min start / max end of the NVTX rows as read into columns, kept when the columns are let go
   * (a scan of NVTX_EVENTS by SQL costs ~2.5 s on the 10x bench file); undefined when they never were.
   */
  nvtxSpan(): NvtxSpan | undefined {
    const cols = this.sharedNvtx();
    return cols ? this.cached('nvtxSpan', () => nvtxSpanOf(cols)) : this.cachedValue<NvtxSpan>('nvtxSpan');
  }

  /** Whether `data` is read (for the NVTX: read, or being read by the worker). */
  isLoaded(data: LoadedData): boolean {
    if (data === 'gpuOps') return !!this.gpuOpsValue;
    if (data === 'apiCalls') return !!this.apiCallsValue;
    if (data === 'gpuTimelines') return this.memo.has('busyUnion') || this.memo.has('deviceTimelines');
    if (data === 'memcpyTraffic') return !!this.memcpyTrafficValue;
    return !!this.nvtxValue || this.worker?.columnsPending() === true;
  }

  /** Rows of the columns let go since `takeReleasedRows` was last asked (see src/v8/collectGarbage.ts). */
  private releasedRows = 0;

  /** The rows of the columns let go since the last call (the pipeline collects garbage after large ones). */
  takeReleasedRows(): number {
    const n = this.releasedRows;
    this.releasedRows = 0;
    return n;
  }

  /** Lets `data` go, with what was built from it (no part left reads it). */
  release(data: LoadedData): void {
    this.releasedRows += this.rowsHeld(data);
    if (data === 'memcpyTraffic') this.memcpyTrafficValue = undefined;
    else if (data === 'gpuOps' || data === 'gpuTimelines') {
      if (data === 'gpuOps') this.gpuOpsValue = undefined;
      for (const k of ['busyUnion', 'deviceTimelines']) this.memo.delete(k);
    } else if (data === 'apiCalls') {
      this.apiCallsValue = undefined;
      this.apiCallsRead?.cancel();
      this.apiCallsRead = null;
      this.memo.delete('apiCallIndex');
    } else {
      if (this.nvtxValue) this.nvtxSpan();
      this.nvtxValue = undefined;
      if (this.worker?.columnsPending()) this.worker.cancel();
    }
  }

  /** The most rows any of the large columns holds on this thread now. */
  largestRowsHeld(): number {
    return Math.max(this.rowsHeld('gpuOps'), this.rowsHeld('apiCalls'), this.rowsHeld('nvtx'));
  }

  /** The rows `data` holds on this thread now (0 when not read). */
  private rowsHeld(data: LoadedData): number {
    if (data === 'gpuOps' || data === 'gpuTimelines') return this.gpuOpsValue?.count ?? 0;
    if (data === 'apiCalls') return this.apiCallsValue?.count ?? 0;
    if (data === 'nvtx') return this.nvtxValue?.count ?? 0;
    return 0;
  }

  // ---- The NVTX worker ------------------------------------------------------------------------

  /**
   * Starts reading NVTX in a worker thread, with `plan`'s parts computed there. False (nothing
   * started) when the export cannot be opened a second time or has no NVTX.
   */
  startNvtxWorker(plan: BackgroundPlan): boolean {
    if (this.worker) return true;
    this.worker = NvtxWorkerRead.start(this.handle, plan);
    // The GPU ops and API calls read from now on cross to the worker without a copy.
    if (this.worker?.takesLaunches()) this.shared = true;
    return this.worker !== null;
  }

  /** Whether part `name` is being computed by the NVTX worker (not taken yet). */
  inBackground(name: string): boolean {
    return this.worker?.hasPart(name) === true;
  }

  /** Part `name`'s value from the NVTX worker (waiting for it), or undefined: compute it here. */
  takeBackground<T>(name: string): T | undefined {
    return this.worker?.takePart<T>(name);
  }

  /**
   * Starts folding the GPU ops into their API calls in a worker thread (`readWorkers`), for the
   * NVTX GPU projection of an export whose NVTX is read before the GPU ops.
   */
  startLaunchesRead(): boolean {
    const entry = this.launchesRead ? null : this.readWorkerEntry();
    if (entry) this.launchesRead = ReadInBackground.start(this.handle, entry, 'launches');
    return this.launchesRead !== null;
  }

  /**
   * Whether the API calls are worth a read on a second core: `readWorkers` set and at least
   * `minApiCalls` of them. A read worker's condition, and the pipeline's for an NVTX worker that
   * reads them (`BackgroundPlan.apiCalls`).
   */
  apiCallsWorthASecondCore(): boolean {
    const read = this.options.readWorkers;
    return !!read && this.hasTable('CUPTI_ACTIVITY_KIND_RUNTIME') && this.rowBound('CUPTI_ACTIVITY_KIND_RUNTIME') >= read.minApiCalls;
  }

  /**
   * The read workers' entry when one may start now: no NVTX worker that takes the launches (they are
   * shared with it, not transferred), and API calls worth it (`apiCallsWorthASecondCore`).
   */
  private readWorkerEntry(): string | null {
    if (this.worker?.takesLaunches() || !this.apiCallsWorthASecondCore()) return null;
    return this.options.readWorkers!.entry;
  }

  /** The projection's calls with their GPU work from that worker (waiting for them), or undefined: read them here. */
  launchesFromBackground(): LaunchedCalls | undefined {
    const settled = this.launchesSettled;
    this.launchesSettled = undefined;
    if (settled) return settled;
    const read = this.launchesRead;
    if (!read) return undefined;
    this.launchesRead = null;
    // Timed as `launchesWorker`: the wait for it (0 when it was done first).
    return this.timed('launchesWorker', () => read.take());
  }

  /**
   * Takes that worker's calls now (waiting for it), for `launchesFromBackground` to give later: on a
   * large export, its fold (~200 MB on the 10x bench export, with a call-key index) is then over
   * before the NVTX summary's and the projection's arrays are made beside the NVTX columns.
   */
  settleLaunchesRead(): void {
    this.launchesSettled = this.launchesFromBackground();
  }

  // ---- Strings --------------------------------------------------------------------------------

  /**
   * `StringIds` values of `ids`: a few (a gap's kernel names, the runtime API names) by cached
   * primary-key lookups, more than a quarter of the table in one pass over it (a pass converts
   * every string, ~25-45 ms on pytorch-dense-long's 8k long kernel signatures).
   */
  strings(ids: Iterable<number>): Map<number, string> {
    const wanted = [...new Set(ids)];
    if (wanted.length * 4 > this.rowBound('StringIds')) return loadStrings(this.handle, wanted);
    const out = new Map<number, string>();
    for (const id of wanted) {
      const value = this.stringOf(id);
      if (value !== undefined) out.set(id, value);
    }
    return out;
  }

  /** A lookup of single string ids (kept for the export: primary-key lookups, each answer cached). */
  stringOf(id: number): string | undefined {
    return this.cached('stringLookup', () => stringLookup(this.handle))(id);
  }

  /** Lets the worker go and drops every column and cache (the export itself stays open: its opener closes it). */
  close(): void {
    this.worker?.cancel();
    this.worker = null;
    this.launchesRead?.cancel();
    this.launchesRead = null;
    this.apiCallsRead?.cancel();
    this.apiCallsRead = null;
    this.gpuOpsValue = undefined;
    this.memcpyTrafficValue = undefined;
    this.apiCallsValue = undefined;
    this.nvtxValue = undefined;
    this.memo.clear();
    // After the workers are let go: one that has not started yet finds the lease ended.
    this.youngGenerationBack();
  }
}
