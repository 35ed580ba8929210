import type { ExportHandle } from '../../queries/handle.js';
import { forEachRow } from '../../queries/run.js';
import { stripApiVersion } from '../../queries/runtime.js';
import { loadStrings, selectStringIdsOf } from '../../queries/strings.js';
import { selectHostCauseRanges } from '../../queries/hostRanges.js';
import { cachedNvtxColumns, isNvtxRange, textIndexOf, type NvtxColumns } from '../analysis/nvtxColumns.js';
import { unionIntervals, type IntervalSet } from '../analysis/intervals.js';
import { loadNvtxDomains, nvtxEndOfTime } from '../analysis/nvtxSummary.js';
import type { GpuOpColumns } from './findGaps.js';
import { loadApiCallColumns, type ApiCallColumns } from '../analysis/apiCallColumns.js';
import { apiCallIndex } from '../analysis/apiCallIndex.js';
import { Column } from '../analysis/typedColumn.js';

/** NVTX names the cause rules look for. */
export const GC_RANGE = 'Python GC';
export const GIL_DOMAIN = 'GIL Trace';
export const GIL_WAIT_RANGE = 'Waiting for GIL';
export const GIL_HOLD_RANGE = 'Holding GIL';

/** `pid`/`tid` in one number (both 24-bit). */
export function threadKey(pid: number, tid: number): number {
  return pid * 16777216 + tid;
}

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
  private active: number[] = [];
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
    if (a < this.lastQuery) {
      this.next = 0;
      this.active = [];
    }
    this.lastQuery = a;
    while (this.next < this.start.length && this.start[this.next] <= a) this.active.push(this.next++);
    this.active = this.active.filter((i) => this.end[i] > a);
    const out = this.active.filter((i) => this.start[i] < b);
    for (let i = this.next; i < this.start.length && this.start[i] < b; i++) if (this.end[i] > a) out.push(i);
    return out.sort((x, y) => x - y);
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

/** The CUDA API call behind a GPU op. */
export interface ApiCallInfo {
  startNs: number;
  endNs: number;
  tid: number;
  name: string;
}

/** Everything the host side says about the gaps of an export. */
export interface HostContext {
  runtimePresent: boolean;
  nvtxPresent: boolean;
  /** Any `Python GC` NVTX range in the export (TLLM_PROFILE_RECORD_GC=1). */
  gcTraced: boolean;
  /** Processes with a `GIL Trace` NVTX domain (`nsys -t python-gil`). */
  gilTracedPids: Set<number>;
  threads: Map<number, LaunchThreads>;
  /** `Python GC` ranges of each process (any thread: the collector holds the GIL). */
  gcByPid: Map<number, IntervalSet>;
  /** `Waiting for GIL` ranges on the process's launching threads (union). */
  gilWaitByPid: Map<number, IntervalSet>;
  /** Blocking CUDA API calls on the process's launching threads (union). */
  syncByPid: Map<number, IntervalSet>;
  /** Distinct blocking API names seen on launching threads. */
  syncApiNames: string[];
  /** Other NVTX ranges of each launching thread (key `threadKey`), for the `nvtx:` cause. */
  nvtxByThread: Map<number, ThreadRanges>;
  /** Cause names (`nvtxCauseName`) indexed by `ThreadRanges.name`. */
  nvtxNames: string[];
  /** API calls of the requested ops, per pid then correlation id. */
  apiCalls: Map<number, Map<number, ApiCallInfo>>;
}

class IntervalLists {
  readonly map = new Map<number, { s: number[]; e: number[] }>();
  push(key: number, s: number, e: number): void {
    let l = this.map.get(key);
    if (!l) this.map.set(key, (l = { s: [], e: [] }));
    l.s.push(s);
    l.e.push(e);
  }
  union(keys: number[]): IntervalSet {
    const s: number[] = [];
    const e: number[] = [];
    for (const k of keys) {
      const l = this.map.get(k);
      if (!l) continue;
      for (let i = 0; i < l.s.length; i++) {
        s.push(l.s[i]);
        e.push(l.e[i]);
      }
    }
    return unionIntervals(s, e);
  }
}

/**
 * Loads the host side of the gaps:
 * 1. CUDA API calls (one pass, or `apiCalls` already loaded): which threads launched the GPU ops (correlation id + PID), the
 *    blocking calls of those threads, and the calls behind `wantedCorrelations` (ops after gaps);
 * 2. NVTX (one pass, only the rows needed): `Python GC` ranges of every thread, `Waiting for GIL`
 *    and every other range of the launching threads (`Holding GIL` rows are skipped in SQL).
 */
export function loadHostContext(handle: ExportHandle, ops: GpuOpColumns, wantedCorrelations: Map<number, Set<number>>, apiCalls?: ApiCallColumns): HostContext {
  const ctx: HostContext = {
    runtimePresent: handle.hasTable('CUPTI_ACTIVITY_KIND_RUNTIME'),
    nvtxPresent: handle.hasTable('NVTX_EVENTS'),
    gcTraced: false,
    gilTracedPids: new Set(),
    threads: new Map(),
    gcByPid: new Map(),
    gilWaitByPid: new Map(),
    syncByPid: new Map(),
    syncApiNames: [],
    nvtxByThread: new Map(),
    nvtxNames: [],
    apiCalls: new Map(),
  };

  // --- CUDA API calls -------------------------------------------------------------------------
  const launches = new Map<number, number>();
  const sync = new IntervalLists();
  const syncNameIdsSeen = new Map<number, Set<number>>();
  const apiNames = new Map<number, string>();
  if (ctx.runtimePresent) {
    const calls = apiCalls ?? loadApiCallColumns(handle);
    // The calls' distinct name ids are in memory already: no second scan of the runtime table.
    const nameIds = new Set<number>();
    let lastId = -1;
    for (let i = 0; i < calls.count; i++) {
      const id = calls.nameId[i];
      if (id !== lastId && id >= 0) nameIds.add((lastId = id));
    }
    for (const [id, name] of loadStrings(handle, nameIds)) apiNames.set(id, name);
    const index = apiCallIndex(calls);
    // The calls that launched GPU work: the op's (pid, correlationId) leads to its call.
    const launched = new Uint8Array(calls.count);
    for (let i = 0; i < ops.count; i++) {
      const ci = index.lookup(ops.pid[i], ops.correlationId[i]);
      if (ci >= 0) launched[ci] = 1;
    }
    for (const [pid, corrs] of wantedCorrelations) {
      const m = new Map<number, ApiCallInfo>();
      ctx.apiCalls.set(pid, m);
      for (const corr of corrs) {
        const ci = index.lookup(pid, corr);
        if (ci >= 0) m.set(corr, { startNs: calls.start[ci], endNs: calls.end[ci], tid: calls.tid[ci], name: calls.nameId[ci] < 0 ? '' : stripApiVersion(apiNames.get(calls.nameId[ci]) ?? '') });
      }
    }
    let maxNameId = -1;
    for (const id of apiNames.keys()) if (id > maxNameId) maxNameId = id;
    const isSync = new Uint8Array(maxNameId + 1);
    for (const [id, name] of apiNames) if (isBlockingSyncApi(name)) isSync[id] = 1;
    for (let i = 0; i < calls.count; i++) {
      const nameId = calls.nameId[i];
      const blocking = nameId >= 0 && isSync[nameId] === 1;
      if (!launched[i] && !blocking) continue;
      const k = threadKey(calls.pid[i], calls.tid[i]);
      if (launched[i]) launches.set(k, (launches.get(k) ?? 0) + 1);
      if (blocking) {
        sync.push(k, calls.start[i], calls.end[i]);
        let s = syncNameIdsSeen.get(k);
        if (!s) syncNameIdsSeen.set(k, (s = new Set()));
        s.add(nameId);
      }
    }
  }

  // Launching threads per process, busiest first.
  const perPid = new Map<number, { tid: number; n: number }[]>();
  for (const [k, n] of launches) {
    const pid = Math.floor(k / 16777216);
    const tid = k % 16777216;
    let l = perPid.get(pid);
    if (!l) perPid.set(pid, (l = []));
    l.push({ tid, n });
  }
  const launchingKeys: number[] = [];
  for (const [pid, l] of perPid) {
    l.sort((a, b) => b.n - a.n || a.tid - b.tid);
    ctx.threads.set(pid, { pid, tids: l.map((x) => x.tid), launches: l.map((x) => x.n) });
    for (const x of l) launchingKeys.push(threadKey(pid, x.tid));
  }
  const launchingSet = new Set(launchingKeys);
  // Only the launching threads' blocking calls count.
  const seen = new Set<string>();
  for (const [k, ids] of syncNameIdsSeen) if (launchingSet.has(k)) for (const id of ids) seen.add(stripApiVersion(apiNames.get(id) ?? ''));
  ctx.syncApiNames = [...seen].sort();
  for (const [pid, t] of ctx.threads) ctx.syncByPid.set(pid, sync.union(t.tids.map((tid) => threadKey(pid, tid))));

  // --- NVTX ----------------------------------------------------------------------------------
  if (!ctx.nvtxPresent) return ctx;
  const domains = loadNvtxDomains(handle);
  const gilDomainKeys = new Set<number>();
  const gilDomainIds = new Set<number>();
  for (const [key, name] of domains) {
    if (name !== GIL_DOMAIN) continue;
    gilDomainKeys.add(key);
    gilDomainIds.add(Math.floor(key / 16777216));
    ctx.gilTracedPids.add(key % 16777216);
  }
  // StringIds ids of the special range names (only the query path hands textIds to `take`).
  const special = new Map<number, string>();
  const gc = new IntervalLists();
  const gil = new IntervalLists();
  // Per launching thread, its ranges in typed columns (millions on NVTX-heavy exports).
  const named = new Map<number, { s: Column<Float64Array>; e: Column<Float64Array>; n: Column<Int32Array>; count: number }>();
  const nameIndexByTextId = new Map<number, number>();
  const nameIndexByText = new Map<string, number>();
  const pendingTextIds: number[] = [];
  let rawNames: (string | number)[] = [];
  let anyOpenEnd = false;
  /** One range (`textId` null: `text` is the resolved text); `end` NaN when open. */
  const take = (pid: number, tid: number, eventType: number, domainId: number | null, textId: number | null, text: string | null, start: number, e: number, cross: boolean | number) => {
    if (e !== e) anyOpenEnd = true;
    const special_ = textId != null ? special.get(textId) : text;
    const dkey = (domainId ?? 0) * 16777216 + pid;
    if (special_ === GC_RANGE && (domainId ?? 0) === 0) {
      ctx.gcTraced = true;
      gc.push(pid, start, e);
      return;
    }
    const k = threadKey(pid, tid);
    if (!launchingSet.has(k)) return;
    if (gilDomainKeys.has(dkey)) {
      if (special_ === GIL_WAIT_RANGE) gil.push(k, start, e);
      return;
    }
    // Start/end ranges that end on another thread do not describe this thread's state.
    if (cross && (eventType === 60 || eventType === 71)) return;
    let ni: number | undefined;
    if (textId != null) {
      ni = nameIndexByTextId.get(textId);
      if (ni === undefined) {
        ni = rawNames.length;
        rawNames.push(textId);
        nameIndexByTextId.set(textId, ni);
        pendingTextIds.push(textId);
      }
    } else {
      const t = text ?? '';
      ni = nameIndexByText.get(t);
      if (ni === undefined) {
        ni = rawNames.length;
        rawNames.push(t);
        nameIndexByText.set(t, ni);
      }
    }
    let l = named.get(k);
    if (!l) named.set(k, (l = { s: new Column((m) => new Float64Array(m), 1024), e: new Column((m) => new Float64Array(m), 1024), n: new Column((m) => new Int32Array(m), 1024), count: 0 }));
    if (l.count === l.s.data.length) {
      l.s.ensure(l.count + 1);
      l.e.ensure(l.count + 1);
      l.n.ensure(l.count + 1);
    }
    l.s.data[l.count] = start;
    l.e.data[l.count] = e;
    l.n.data[l.count] = ni;
    l.count++;
  };
  const cols = cachedNvtxColumns(handle);
  if (cols) takeHostCauseRanges(cols, launchingSet, gilDomainIds, take);
  else {
    if (handle.hasTable('StringIds')) {
      forEachRow(
        handle,
        selectStringIdsOf(handle, [GC_RANGE, GIL_WAIT_RANGE, GIL_HOLD_RANGE]),
        (id: number, value: string) => special.set(id, value),
      );
    }
    const gcIds = [...special].filter(([, v]) => v === GC_RANGE).map(([id]) => id);
    const holdIds = [...special].filter(([, v]) => v === GIL_HOLD_RANGE).map(([id]) => id);
    const q = selectHostCauseRanges(handle, {
      gcRange: GC_RANGE,
      gilHoldRange: GIL_HOLD_RANGE,
      gilDomainIds: [...gilDomainIds],
      holdTextIds: holdIds,
      gcTextIds: gcIds,
      threadKeys: launchingKeys,
    });
    forEachRow(handle, q, (pid: number, tid: number, eventType: number, domainId: number | null, textId: number | null, text: string | null, start: number, end: number | null, cross: number) =>
      take(pid, tid, eventType, domainId, textId, text, start, end ?? NaN, cross),
    );
  }
  // Ranges never closed end where nsys ends them: the latest NVTX timestamp.
  if (anyOpenEnd) {
    const eot = nvtxEndOfTime(handle) ?? 0;
    const fix = (a: number[] | Float64Array, length = a.length) => {
      for (let i = 0; i < length; i++) if (Number.isNaN(a[i])) a[i] = eot;
    };
    for (const l of gc.map.values()) fix(l.e);
    for (const l of gil.map.values()) fix(l.e);
    for (const l of named.values()) fix(l.e.data, l.count);
  }
  const strings = loadStrings(handle, pendingTextIds);
  // Distinct raw names can share a cause name; map them onto one index.
  const causeIndex = new Map<string, number>();
  const remap = rawNames.map((r) => {
    const name = nvtxCauseName(typeof r === 'number' ? (strings.get(r) ?? null) : r);
    let i = causeIndex.get(name);
    if (i === undefined) {
      i = ctx.nvtxNames.length;
      ctx.nvtxNames.push(name);
      causeIndex.set(name, i);
    }
    return i;
  });
  rawNames = [];
  for (const [k, l] of named) {
    const names = l.n.trim(l.count);
    for (let i = 0; i < names.length; i++) names[i] = remap[names[i]];
    ctx.nvtxByThread.set(k, new ThreadRanges(l.s.trim(l.count), l.e.trim(l.count), names));
  }
  for (const [pid] of gc.map) ctx.gcByPid.set(pid, gc.union([pid]));
  for (const [pid, t] of ctx.threads) ctx.gilWaitByPid.set(pid, gil.union(t.tids.map((tid) => threadKey(pid, tid))));
  return ctx;
}

/**
 * `selectHostCauseRanges` over the shared NVTX columns: the ranges of the launching threads and
 * `Python GC` ranges of any thread, without the GIL domains' `Holding GIL` ranges, handed to `take`
 * with their resolved text (as a NULL textId).
 */
function takeHostCauseRanges(
  c: NvtxColumns,
  launching: ReadonlySet<number>,
  gilDomainIds: ReadonlySet<number>,
  take: (pid: number, tid: number, eventType: number, domainId: number | null, textId: number | null, text: string | null, start: number, end: number, cross: boolean) => void,
): void {
  const gcText = textIndexOf(c, GC_RANGE);
  const holdText = textIndexOf(c, GIL_HOLD_RANGE);
  for (let i = 0; i < c.count; i++) {
    const t = c.text[i];
    if (holdText >= 0 && t === holdText && gilDomainIds.has(c.domainId[i])) continue;
    if (!isNvtxRange(c.eventType[i]) || c.tid[i] < 0) continue;
    const pid = c.pid[i];
    const tid = c.tid[i];
    if (!(t === gcText && gcText >= 0) && !launching.has(threadKey(pid, tid))) continue;
    take(pid, tid, c.eventType[i], c.domainId[i], null, t >= 0 ? c.texts[t] : null, c.start[i], c.end[i], c.endTid[i] === 2);
  }
}
