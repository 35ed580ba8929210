import { callEnd, stripApiVersion, type ApiCallColumns } from '../load/apiCallColumns.js';
import type { ApiCallIndex } from '../load/apiCallIndex.js';
import type { GpuOpColumns } from '../load/gpuOpColumns.js';
import { forEachHostCauseRange, threadKey, type HostCauseRows } from '../load/hostRangeReads.js';
import type { LoadedExport } from '../load/loadedExport.js';
import { domainKey, domainKeyParts } from '../load/domainKeys.js';
import { nvtxDomains, nvtxEndOfTime } from '../load/nvtxReads.js';
import { Column, NO_STRING_ID } from '../columns/typedColumn.js';
import { unionIntervals, type IntervalSet } from '../math/intervals.js';
import { Float64Buffer } from '../math/durationStats.js';

/** NVTX names the cause rules look for. */
export const GC_RANGE = 'Python GC';
export const GIL_DOMAIN = 'GIL Trace';
export const GIL_WAIT_RANGE = 'Waiting for GIL';
export const GIL_HOLD_RANGE = 'Holding GIL';


/**
 * Whether a CUDA runtime/driver API call blocks the calling thread until GPU work finishes,
 * judged by its name (nsys's `syncType` codes changed between versions):
 * `*Synchronize` calls (cudaStreamSynchronize, cudaDeviceSynchronize, cudaEventSynchronize,
 * cudaThreadSynchronize, cuStreamSynchronize, cuCtxSynchronize, cuEventSynchronize) and
 * synchronous memcpys (every `cudaMemcpy*` / `cuMemcpy*` that is not `*Async`). Version
 * suffixes (`_v3020`, `_v2`) and per-thread-stream suffixes (`_ptds`, `_ptsz`) are ignored.
 */
export function isBlockingSyncApi(rawName: string): boolean {
  const name = stripApiVersion(rawName).replace(/_(ptds|ptsz)$/, '');
  if (/^cu(da)?[A-Z]\w*Synchronize$/.test(name)) return true;
  if (/^cu(da)?Memcpy\w*$/.test(name) && !/Async$/.test(name)) return true;
  return false;
}

/**
 * The cause label of an NVTX range: its text up to the first number that follows a space or the
 * first `, key = <number>` pair, with trailing separators dropped, so labels that carry counters
 * collapse into one cause: `[Executor] _forward_step 12: 0 ctx reqs, ...` ->
 * `[Executor] _forward_step`, `aten::mm, seq = 5, op_id = 7` -> `aten::mm`, vLLM's
 * `execute_context_1(512)_generation_15(15)` -> `execute_context`, SGLang's `step[DECODE bs=16]` ->
 * `step[DECODE]`. Other texts are kept
 * whole (`_sample_async`).
 */
export function nvtxCauseName(text: string | null): string {
  const t = (text ?? '').trim();
  // vLLM's per-step label glues its counts on with `_`: `execute_context_1(512)_generation_15(15)`.
  const vllm = /^(execute_(?:context|new))_\d/.exec(t);
  if (vllm) return vllm[1];
  // SGLang's torch step span carries its batch: `step[DECODE bs=16]` -> `step[DECODE]`.
  const sglang = /^step\[\s*([A-Za-z_]+)[\s\]]/.exec(t);
  if (sglang) return `step[${sglang[1]}]`;
  const m = /\s\d|,\s*[\w ]+?\s*=\s*\d/.exec(t);
  const cut = (m ? t.slice(0, m.index) : t).replace(/[\s:,=;([{-]+$/, '');
  return cut || t || '(unnamed)';
}

/** NVTX ranges of one thread, sorted by start (ties: longer first), with a forward cursor. */
export class ThreadRanges {
  readonly start: Float64Array;
  readonly end: Float64Array;
  readonly name: Int32Array;
  private next = 0;
  private readonly active: number[] = [];
  private lastQuery = -Infinity;
  /**
   * Ranges in start order (ties: the longer first, then input order). Typed inputs already in
   * that order are kept as they are (no copy); otherwise a 4-byte index is sorted and the columns
   * gathered once: NVTX-heavy exports hold millions of ranges here (issue 14: about 20 B each).
   */
  constructor(starts: ArrayLike<number>, ends: ArrayLike<number>, names: ArrayLike<number>) {
    const n = starts.length;
    const before = (a: number, b: number) => starts[a] - starts[b] || ends[b] - ends[a] || a - b;
    let sorted = true;
    for (let i = 1; i < n && sorted; i++) if (before(i - 1, i) > 0) sorted = false;
    if (sorted) {
      this.start = starts instanceof Float64Array ? starts : Float64Array.from(starts);
      this.end = ends instanceof Float64Array ? ends : Float64Array.from(ends);
      this.name = names instanceof Int32Array ? names : Int32Array.from(names);
      return;
    }
    const idx = new Uint32Array(n);
    for (let i = 0; i < n; i++) idx[i] = i;
    idx.sort(before);
    this.start = new Float64Array(n);
    this.end = new Float64Array(n);
    this.name = new Int32Array(n);
    for (let k = 0; k < n; k++) {
      const i = idx[k];
      this.start[k] = starts[i];
      this.end[k] = ends[i];
      this.name[k] = names[i];
    }
  }
  get length(): number {
    return this.start.length;
  }
  /**
   * Indices (in start order) of the ranges overlapping [a, b). Queries must come with
   * non-decreasing `a` (the gaps are processed in time order); any `b` is fine.
   */
  overlapping(a: number, b: number): number[] {
    const { start, end, active } = this;
    if (a < this.lastQuery) {
      this.next = 0;
      active.length = 0;
    }
    this.lastQuery = a;
    while (this.next < start.length && start[this.next] <= a) active.push(this.next++);
    // Drop the ranges that ended by `a`, in place: `active` stays in index (start) order.
    let kept = 0;
    for (let r = 0; r < active.length; r++) if (end[active[r]] > a) active[kept++] = active[r];
    active.length = kept;
    // Those still open, then those starting inside [a, b): every one after the open ones, so the
    // indices come out in start order.
    const out: number[] = [];
    for (let r = 0; r < kept; r++) if (start[active[r]] < b) out.push(active[r]);
    for (let i = this.next; i < start.length && start[i] < b; i++) if (end[i] > a) out.push(i);
    return out;
  }
}

/** The threads of one process that launch GPU work, busiest first (the executor thread). */
export interface LaunchThreads {
  pid: number;
  /** Thread ids by number of launch calls, descending. `tids[0]` is the executor thread. */
  tids: number[];
  /** CUDA API calls of each thread that launched GPU work (same order). */
  launches: number[];
}

/** The CUDA API call behind a GPU op (a gap's `launchCall`, as the gaps report it: fields in that order). */
export interface ApiCallInfo {
  name: string;
  startNs: number;
  tid: number;
}

/** Everything the host side says about the gaps of an export. */
export interface HostContext {
  runtimePresent: boolean;
  nvtxPresent: boolean;
  /** Any `Python GC` NVTX range in the export (TLLM_PROFILE_RECORD_GC=1). */
  gcTraced: boolean;
  /** Processes with a `GIL Trace` NVTX domain (`nsys -t python-gil`). */
  gilTracedPids: Set<number>;
  threads: ReadonlyMap<number, LaunchThreads>;
  /** `Python GC` ranges of each process (any thread: the collector holds the GIL). */
  gcByPid: Map<number, IntervalSet>;
  /** `Waiting for GIL` ranges on the process's launching threads (union). */
  gilWaitByPid: Map<number, IntervalSet>;
  /** Blocking CUDA API calls on the process's launching threads (union). */
  syncByPid: ReadonlyMap<number, IntervalSet>;
  /** Distinct blocking API names seen on launching threads. */
  syncApiNames: readonly string[];
  /** Other NVTX ranges of each launching thread (key `threadKey`), for the `nvtx:` cause. */
  nvtxByThread: Map<number, ThreadRanges>;
  /** Cause names (`nvtxCauseName`) indexed by `ThreadRanges.name`. */
  nvtxNames: string[];
}

/** The CUDA API call of (pid, correlation id), undefined when the export has none. */
export type CallLookup = (pid: number, correlationId: number) => ApiCallInfo | undefined;

/**
 * Intervals listed per key (the blocking calls per thread: 1.5M `cudaStreamSynchronize` calls on
 * the 30x bench copy) in typed buffers: as arrays of numbers, each list's growth and the copy
 * `union` made of it were ~100 MB of garbage there.
 */
class IntervalLists {
  readonly map = new Map<number, { s: Float64Buffer; e: Float64Buffer }>();
  push(key: number, s: number, e: number): void {
    let l = this.map.get(key);
    if (!l) this.map.set(key, (l = { s: new Float64Buffer(), e: new Float64Buffer() }));
    l.s.push(s);
    l.e.push(e);
  }
  /** The union of the keys' intervals (a thread's own list as it is, several concatenated in key order). */
  union(keys: number[]): IntervalSet {
    const lists = keys.map((k) => this.map.get(k)).filter((l) => l !== undefined);
    if (lists.length === 1) return unionIntervals(lists[0].s.view(), lists[0].e.view());
    const n = lists.reduce((t, l) => t + l.s.length, 0);
    const s = new Float64Array(n);
    const e = new Float64Array(n);
    let at = 0;
    for (const l of lists) {
      s.set(l.s.view(), at);
      e.set(l.e.view(), at);
      at += l.s.length;
    }
    return unionIntervals(s, e);
  }
}

/**
 * The host side of the gaps from the CUDA API calls alone (`loadLaunchSide`): known before the
 * iterations and the NVTX ranges, so it can be read while the other thread still reads those.
 */
export interface LaunchSide {
  runtimePresent: boolean;
  threads: ReadonlyMap<number, LaunchThreads>;
  syncByPid: ReadonlyMap<number, IntervalSet>;
  syncApiNames: readonly string[];
  /** The calls' names by name id (empty without the runtime table). */
  apiNames: ReadonlyMap<number, string>;
  /** The launching threads' `threadKey`s. */
  launchingKeys: ReadonlySet<number>;
}

/**
 * The CUDA API calls (the loaded columns): which threads launched the GPU ops (correlation id +
 * PID), the blocking calls of those threads, and the calls' names.
 */
export function loadLaunchSide(loaded: LoadedExport, ops: GpuOpColumns): LaunchSide {
  const runtimePresent = loaded.hasTable('CUPTI_ACTIVITY_KIND_RUNTIME');
  const launching = runtimePresent ? readLaunchCalls(loaded, ops) : { launches: new Map<number, number>(), sync: new IntervalLists(), syncNameIds: new Map<number, Set<number>>(), apiNames: new Map<number, string>() };
  return { runtimePresent, apiNames: launching.apiNames, ...launchingThreads(launching) };
}

/**
 * The host side of the gaps: `launch` (`loadLaunchSide`), and from NVTX (the loaded columns,
 * `causeRows`, else one query over the rows needed) the `Python GC` ranges of every thread,
 * `Waiting for GIL` and every other range of the launching threads (`Holding GIL` rows are skipped).
 */
export function loadHostContext(loaded: LoadedExport, launch: LaunchSide, causeRows?: HostCauseRows): HostContext {
  const ctx: HostContext = {
    runtimePresent: launch.runtimePresent,
    nvtxPresent: loaded.hasTable('NVTX_EVENTS'),
    gcTraced: false,
    gilTracedPids: new Set(),
    threads: launch.threads,
    gcByPid: new Map(),
    gilWaitByPid: new Map(),
    syncByPid: launch.syncByPid,
    syncApiNames: launch.syncApiNames,
    nvtxByThread: new Map(),
    nvtxNames: [],
  };
  if (ctx.nvtxPresent) readHostRanges(loaded, ctx, launch.launchingKeys, causeRows);
  return ctx;
}

/** What the API calls say: launch calls per thread, blocking calls per thread and their names. */
interface LaunchingCalls {
  /** Launch calls per `threadKey`. */
  launches: Map<number, number>;
  /** Blocking calls per `threadKey`. */
  sync: IntervalLists;
  /** Name ids of the blocking calls seen per `threadKey`. */
  syncNameIds: Map<number, Set<number>>;
  apiNames: Map<number, string>;
}

/**
 * The calls that launched GPU work, the blocking calls, per thread. One function per pass over
 * the calls or ops: each long loop is optimized once, and leaving it deoptimizes nothing that has
 * not run yet.
 */
function readLaunchCalls(loaded: LoadedExport, ops: GpuOpColumns): LaunchingCalls {
  const calls = loaded.apiCalls();
  const apiNames = apiNamesOf(loaded, calls);
  const launched = launchedCalls(ops, calls.count, loaded.apiCallIndex());
  return { apiNames, ...callsPerThread(calls, launched, blockingNameTest(apiNames)) };
}

/** The calls' names by name id (the distinct ids are in memory already: no second scan of the runtime table). */
function apiNamesOf(loaded: LoadedExport, calls: ApiCallColumns): Map<number, string> {
  const nameIds = new Set<number>();
  let lastId = -1;
  for (let i = 0; i < calls.count; i++) {
    const id = calls.nameId[i];
    if (id !== lastId && id !== NO_STRING_ID) nameIds.add((lastId = id));
  }
  return new Map(loaded.strings(nameIds));
}

/** A flag per call: it launched GPU work (an op's (pid, correlationId) leads to it). */
function launchedCalls(ops: GpuOpColumns, callCount: number, index: ApiCallIndex): Uint8Array {
  return index.flagCalls(ops.pid, ops.correlationId, ops.count, callCount);
}

/**
 * The CUDA API call behind a GPU op, by its process and correlation id (from the API-call columns,
 * `launch`'s names), or none without the runtime table: asked by the gap scan for each long gap's
 * op after it, so the gaps' explanation reads no API-call columns.
 */
export function launchCallLookup(loaded: LoadedExport, launch: LaunchSide): CallLookup {
  return launch.runtimePresent ? callLookup(loaded.apiCalls(), loaded.apiCallIndex(), launch.apiNames) : () => undefined;
}

/**
 * The call behind (pid, correlation id) through the index the attribution shares, made when asked:
 * the gaps ask once per long gap, in time order (the index's search starts from its last answer).
 * Each name id's name is stripped of its version suffix once.
 */
function callLookup(calls: ApiCallColumns, index: ApiCallIndex, apiNames: ReadonlyMap<number, string>): CallLookup {
  const names = new Map<number, string>();
  const nameOf = (id: number): string => {
    if (id === NO_STRING_ID) return '';
    let name = names.get(id);
    if (name === undefined) names.set(id, (name = stripApiVersion(apiNames.get(id) ?? '')));
    return name;
  };
  return (pid, correlationId) => {
    const ci = index.lookup(pid, correlationId);
    return ci < 0 ? undefined : { name: nameOf(calls.nameId[ci]), startNs: calls.start[ci], tid: calls.tid[ci] };
  };
}

/** Launch calls counted per thread, blocking calls (and their names) listed per thread. */
function callsPerThread(calls: ApiCallColumns, launched: Uint8Array, isBlocking: (nameId: number) => boolean): Omit<LaunchingCalls, 'apiNames'> {
  const out = { launches: new Map<number, number>(), sync: new IntervalLists(), syncNameIds: new Map<number, Set<number>>() };
  // A thread's calls come in runs: its launches are counted per run, not with a Map update per call.
  let runKey = NaN;
  let runLaunches = 0;
  for (let i = 0; i < calls.count; i++) {
    const nameId = calls.nameId[i];
    const blocking = isBlocking(nameId);
    if (!launched[i] && !blocking) continue;
    const k = threadKey(calls.pid[i], calls.tid[i]);
    if (k !== runKey) {
      if (runLaunches > 0) out.launches.set(runKey, (out.launches.get(runKey) ?? 0) + runLaunches);
      runKey = k;
      runLaunches = 0;
    }
    if (launched[i]) runLaunches++;
    if (blocking) {
      out.sync.push(k, calls.start[i], callEnd(calls, i));
      let s = out.syncNameIds.get(k);
      if (!s) out.syncNameIds.set(k, (s = new Set()));
      s.add(nameId);
    }
  }
  if (runLaunches > 0) out.launches.set(runKey, (out.launches.get(runKey) ?? 0) + runLaunches);
  return out;
}

/** Whether a name id is a blocking call's: a flag per id (negative ids, an edited export's, in a set). */
function blockingNameTest(apiNames: ReadonlyMap<number, string>): (nameId: number) => boolean {
  let maxNameId = -1;
  for (const id of apiNames.keys()) if (id > maxNameId) maxNameId = id;
  const isSync = new Uint8Array(maxNameId + 1);
  const negativeSync = new Set<number>();
  for (const [id, name] of apiNames) {
    if (!isBlockingSyncApi(name)) continue;
    if (id >= 0) isSync[id] = 1;
    else negativeSync.add(id);
  }
  return (nameId) => (nameId >= 0 ? isSync[nameId] === 1 : negativeSync.size > 0 && negativeSync.has(nameId));
}

/** Launching threads per process, busiest first, their blocking calls (only theirs count) and keys. */
function launchingThreads(calls: LaunchingCalls): Pick<LaunchSide, 'threads' | 'syncByPid' | 'syncApiNames' | 'launchingKeys'> {
  const perPid = new Map<number, { tid: number; n: number }[]>();
  for (const [k, n] of calls.launches) {
    const pid = Math.floor(k / 16777216);
    const tid = k % 16777216;
    let l = perPid.get(pid);
    if (!l) perPid.set(pid, (l = []));
    l.push({ tid, n });
  }
  const threads = new Map<number, LaunchThreads>();
  const launchingKeys: number[] = [];
  for (const [pid, l] of perPid) {
    l.sort((a, b) => b.n - a.n || a.tid - b.tid);
    threads.set(pid, { pid, tids: l.map((x) => x.tid), launches: l.map((x) => x.n) });
    for (const x of l) launchingKeys.push(threadKey(pid, x.tid));
  }
  const launchingSet = new Set(launchingKeys);
  const seen = new Set<string>();
  for (const [k, ids] of calls.syncNameIds) if (launchingSet.has(k)) for (const id of ids) seen.add(stripApiVersion(calls.apiNames.get(id) ?? ''));
  const syncByPid = new Map<number, IntervalSet>();
  for (const [pid, t] of threads) syncByPid.set(pid, calls.sync.union(t.tids.map((tid) => threadKey(pid, tid))));
  return { threads, syncByPid, syncApiNames: [...seen].sort(), launchingKeys: launchingSet };
}

/** Per launching thread, its ranges as they are collected (millions on NVTX-heavy exports). */
interface ThreadRangeColumns {
  s: Column<Float64Array>;
  e: Column<Float64Array>;
  n: Column<Int32Array>;
  count: number;
}

/** Range names as read: a StringIds id (resolved after the scan) or a text; one index each. */
class RawNames {
  readonly raw: (string | number)[] = [];
  readonly pendingTextIds: number[] = [];
  private readonly byTextId = new Map<number, number>();
  private readonly byText = new Map<string, number>();
  indexOf(textId: number | null, text: string | null): number {
    if (textId != null) {
      let ni = this.byTextId.get(textId);
      if (ni === undefined) {
        ni = this.raw.length;
        this.raw.push(textId);
        this.byTextId.set(textId, ni);
        this.pendingTextIds.push(textId);
      }
      return ni;
    }
    const t = text ?? '';
    let ni = this.byText.get(t);
    if (ni === undefined) {
      ni = this.raw.length;
      this.raw.push(t);
      this.byText.set(t, ni);
    }
    return ni;
  }
}

/** The `GIL Trace` domains: their (domain, process) keys (`domainKey`) and their domain ids. */
export function gilDomainsOf(loaded: LoadedExport): { keys: Set<number>; ids: Set<number> } {
  const keys: number[] = [];
  for (const [key, name] of nvtxDomains(loaded)) if (name === GIL_DOMAIN) keys.push(key);
  return gilDomainsOfKeys(keys);
}

/** `gilDomainsOf` from the domains' keys. */
function gilDomainsOfKeys(keys: readonly number[]): { keys: Set<number>; ids: Set<number> } {
  return { keys: new Set(keys), ids: new Set(keys.map((key) => domainKeyParts(key).domainId)) };
}

/**
 * The GC ranges (any thread), the GIL waits and the other ranges of the launching threads: from
 * `causeRows` (the rows any such read can visit, taken from the NVTX columns before a large
 * export let them go, see `hostCauseRowsOf`) when given.
 */
function readHostRanges(loaded: LoadedExport, ctx: HostContext, launchingSet: ReadonlySet<number>, causeRows: HostCauseRows | undefined): void {
  const { keys: gilDomainKeys, ids: gilDomainIds } = causeRows ? gilDomainsOfKeys(causeRows.gilDomainKeys) : gilDomainsOf(loaded);
  for (const key of gilDomainKeys) ctx.gilTracedPids.add(domainKeyParts(key).pid);
  const gc = new IntervalLists();
  const gil = new IntervalLists();
  const named = new Map<number, ThreadRangeColumns>();
  const names = new RawNames();
  let anyOpenEnd = false;
  const filter = { gcRange: GC_RANGE, gilHoldRange: GIL_HOLD_RANGE, specialNames: [GC_RANGE, GIL_WAIT_RANGE, GIL_HOLD_RANGE], gilDomainIds, threads: launchingSet };
  forEachHostCauseRange(loaded, filter, (pid, tid, eventType, domainId, textId, text, start, e, cross, special) => {
    if (e !== e) anyOpenEnd = true;
    if (special === GC_RANGE && (domainId ?? 0) === 0) {
      ctx.gcTraced = true;
      gc.push(pid, start, e);
      return;
    }
    const k = threadKey(pid, tid);
    if (!launchingSet.has(k)) return;
    if (gilDomainKeys.has(domainKey(domainId, pid))) {
      if (special === GIL_WAIT_RANGE) gil.push(k, start, e);
      return;
    }
    // Start/end ranges that end on another thread do not describe this thread's state.
    if (cross && (eventType === 60 || eventType === 71)) return;
    pushRange(named, k, start, e, names.indexOf(textId, text));
  }, causeRows?.rows);
  // Ranges never closed end where nsys ends them: the latest NVTX timestamp.
  if (anyOpenEnd) closeOpenRanges(nvtxEndOfTime(loaded) ?? 0, [...gc.map.values(), ...gil.map.values()], named);
  threadRangesByCause(loaded, ctx, named, names);
  for (const [pid] of gc.map) ctx.gcByPid.set(pid, gc.union([pid]));
  for (const [pid, t] of ctx.threads) ctx.gilWaitByPid.set(pid, gil.union(t.tids.map((tid) => threadKey(pid, tid))));
}

function pushRange(named: Map<number, ThreadRangeColumns>, k: number, start: number, end: number, name: number): void {
  let l = named.get(k);
  if (!l) named.set(k, (l = { s: new Column((m) => new Float64Array(m), 1024), e: new Column((m) => new Float64Array(m), 1024), n: new Column((m) => new Int32Array(m), 1024), count: 0 }));
  if (l.count === l.s.data.length) {
    l.s.ensure(l.count + 1);
    l.e.ensure(l.count + 1);
    l.n.ensure(l.count + 1);
  }
  l.s.data[l.count] = start;
  l.e.data[l.count] = end;
  l.n.data[l.count] = name;
  l.count++;
}

/** Open ends (NaN) set to the end of time. */
function closeOpenRanges(eot: number, lists: readonly { e: Float64Buffer }[], named: Map<number, ThreadRangeColumns>): void {
  const fix = (a: Float64Array, length = a.length) => {
    for (let i = 0; i < length; i++) if (Number.isNaN(a[i])) a[i] = eot;
  };
  for (const l of lists) fix(l.e.view());
  for (const l of named.values()) fix(l.e.data, l.count);
}

/** Each launching thread's ranges, named by cause (`nvtxCauseName`: distinct raw names can share one). */
function threadRangesByCause(loaded: LoadedExport, ctx: HostContext, named: Map<number, ThreadRangeColumns>, names: RawNames): void {
  const strings = loaded.strings(names.pendingTextIds);
  const causeIndex = new Map<string, number>();
  const remap = names.raw.map((r) => {
    const name = nvtxCauseName(typeof r === 'number' ? (strings.get(r) ?? null) : r);
    let i = causeIndex.get(name);
    if (i === undefined) {
      i = ctx.nvtxNames.length;
      ctx.nvtxNames.push(name);
      causeIndex.set(name, i);
    }
    return i;
  });
  for (const [k, l] of named) {
    const ids = l.n.trim(l.count);
    for (let i = 0; i < ids.length; i++) ids[i] = remap[ids[i]];
    ctx.nvtxByThread.set(k, new ThreadRanges(l.s.trim(l.count), l.e.trim(l.count), ids));
  }
}
