import { Float64Buffer } from '../math/durationStats.js';
import { GpuOpKind } from '../../queries/gpuOps.js';
import { callEnd, type ApiCallColumns } from './apiCallColumns.js';
import type { ApiCallIndex } from './apiCallIndex.js';
import type { GpuOpColumns } from './gpuOpColumns.js';

import { Column, idColumnMaker, type IdArray, type Uint32OrFloat64Column } from '../columns/typedColumn.js';

/**
 * Every API call the NVTX GPU projection reads, with the GPU work it launched folded in: the
 * projection's launch side, which needs no NVTX (so it can be read on another core while this one
 * reads the NVTX columns, see src/worker/readInBackground.ts). Plain typed arrays (the queries' fold crosses
 * threads by transfer; the columns' fold, made where it is read, keeps the calls' times as views
 * of the API-call columns), and per call only what the projection reads after the fold: 36 bytes
 * a call.
 */
export interface LaunchedCalls {
  /** Calls in `eachCall` order (every call with a thread and a correlation id). */
  count: number;
  /** Per call: its thread, an index into `threadHi`/`threadLo`. */
  thread: Int32Array;
  /** The distinct threads: `globalTid >> 24` (process half) and `globalTid & 0xFFFFFF`. */
  threadHi: number[];
  threadLo: number[];
  start: Float64Array;
  end: Float64Array;
  /** Per call: first start and last end of its GPU ops (+-Infinity: none), and how many. */
  opStart: Float64Array;
  opEnd: Float64Array;
  opCount: Uint32Array;
  /** 1 when the call's (process, correlation id) key is carried by other calls too (each gets the key's ops). */
  sharedKey: Uint8Array;
  /** Those calls -> the first call of their key (a key's identity). */
  keyOf: Map<number, number>;
  /** Kernel, memcpy and memset rows read. */
  gpuOps: number;
  /** Of those, ops with no call of their key. */
  gpuOpsWithoutApiCall: number;
  /** Keys carried by more than one call. */
  duplicateCorrelationIds: number;
}

/**
 * The calls in arrays, each op folded into its call through the (process, correlation id) key
 * index (a key carried by several calls gives its ops to each of them).
 */
export function foldOpsIntoCalls(source: LaunchSource): LaunchedCalls {
  const cap = Math.max(1024, source.callCapacity);
  const keys = new CallKeyIndex(cap);
  const threads = new ThreadIndex();
  const thread = new Column((n) => new Int32Array(n), cap);
  const start = new Float64Buffer(cap);
  const end = new Float64Buffer(cap);
  const others = new SharedKeys();
  source.eachCall((h, l, s, e, c) => {
    const i = start.length;
    thread.ensure(i + 1);
    thread.data[i] = threads.intern(h, l);
    start.push(s);
    end.push(e);
    others.add(keys.insert(h, c, i), i);
  });
  const count = start.length;
  const fold = new CallOpFold(count, others);
  source.eachOp((h, c, s, e) => fold.add(h == null || c == null ? -1 : keys.find(h, c), s, e));
  // Views of the buffers (sized max(rowid), about the calls read): no copy of millions of values.
  return { count, thread: thread.trim(count), threadHi: threads.hi, threadLo: threads.tid, start: start.view(), end: end.view(), ...fold.result(), ...others.result(count) };
}

/**
 * The calls that launched GPU work (`opCount` > 0), in the same order, with their keys renumbered:
 * the projection reads no other (`launchingCallsOnRangeThreads` skips a call without ops, and the
 * coverage counts it keeps are the fold's, not per call). The calls of one key share its ops, so a
 * key's calls stay or go together. On pytorch-dense-long 145k of the 356k calls launched work (CUDA
 * graphs launch hundreds of kernels a call). What the read worker hands over, defined on the whole
 * fold: `foldLaunchingCalls` computes it without the whole fold, and is tested against this.
 */
export function keepCallsWithGpuWork(c: LaunchedCalls): LaunchedCalls {
  const newIndex = new Int32Array(c.count);
  let m = 0;
  for (let i = 0; i < c.count; i++) newIndex[i] = c.opCount[i] > 0 ? m++ : -1;
  if (m === c.count) return c;
  const pick = <T extends Float64Array | Int32Array | Uint32Array | Uint8Array>(values: T, out: T): T => {
    for (let i = 0; i < c.count; i++) if (newIndex[i] >= 0) out[newIndex[i]] = values[i];
    return out;
  };
  const keyOf = new Map<number, number>();
  for (const [i, first] of c.keyOf) if (newIndex[i] >= 0) keyOf.set(newIndex[i], newIndex[first]);
  return {
    ...c,
    count: m,
    thread: pick(c.thread, new Int32Array(m)),
    start: pick(c.start, new Float64Array(m)),
    end: pick(c.end, new Float64Array(m)),
    opStart: pick(c.opStart, new Float64Array(m)),
    opEnd: pick(c.opEnd, new Float64Array(m)),
    opCount: pick(c.opCount, new Uint32Array(m)),
    sharedKey: pick(c.sharedKey, new Uint8Array(m)),
    keyOf,
  };
}

/**
 * `keepCallsWithGpuWork(foldOpsIntoCalls(source))`, read ops first so no call without GPU work is
 * held: each op is folded into its (process, correlation id) key as it is read, then each call
 * whose key has ops is kept, in call order; the others are only interned (their threads, as the
 * fold numbers them) and checked for keys they share (`duplicateCorrelationIds` counts every call).
 * The read worker's launches on the 30x bench copy: the whole fold held ~56 bytes for each of its
 * 10.7M calls beside the NVTX columns; this holds ~40 a key with ops, ~24 a kept call and a bit or
 * two a correlation id for the rest.
 */
export function foldLaunchingCalls(source: LaunchSource): LaunchedCalls {
  // Sized for every call (max(rowid)): the untouched part of a zeroed array takes no memory.
  const cap = Math.max(1024, source.callCapacity);
  const ops = foldOpsByKey(source, cap);
  const threads = new ThreadIndex();
  const kept = new KeptCalls(ops.keyCount, cap);
  const others = new KeysSeen(source.callCapacity);
  source.eachCall((h, l, s, e, c) => {
    const thread = threads.intern(h, l);
    const key = ops.keys.find(h, c);
    if (key >= 0) kept.add(key, thread, s, e);
    else others.see(h, c);
  });
  return { ...kept.result(ops), threadHi: threads.hi, threadLo: threads.tid, duplicateCorrelationIds: kept.sharedKeys + others.duplicates };
}

/** Every op folded into its key (first start, last end, count): keys numbered in the order their first op came. */
interface OpsByKey {
  keys: CallKeyIndex;
  keyCount: number;
  opStart: Float64Array;
  opEnd: Float64Array;
  opCount: Uint32Array;
  gpuOps: number;
}

function foldOpsByKey(source: LaunchSource, cap: number): OpsByKey {
  // The index grows with the keys (its slots are filled, so all of them take memory).
  const keys = new CallKeyIndex(1024);
  const opStart = new Column((n) => new Float64Array(n), cap);
  const opEnd = new Column((n) => new Float64Array(n), cap);
  const opCount = new Column((n) => new Uint32Array(n), cap);
  let keyCount = 0;
  let gpuOps = 0;
  source.eachOp((h, c, s, e) => {
    gpuOps++;
    if (h == null || c == null) return;
    const k = keys.insert(h, c, keyCount);
    if (k === keyCount) {
      keyCount++;
      opStart.ensure(keyCount);
      opEnd.ensure(keyCount);
      opCount.ensure(keyCount);
      opStart.data[k] = s;
      opEnd.data[k] = e;
      opCount.data[k] = 1;
      return;
    }
    if (s < opStart.data[k]) opStart.data[k] = s;
    if (e > opEnd.data[k]) opEnd.data[k] = e;
    opCount.data[k]++;
  });
  return { keys, keyCount, opStart: opStart.trim(keyCount), opEnd: opEnd.trim(keyCount), opCount: opCount.trim(keyCount), gpuOps };
}

/** The calls whose key has ops, in call order, each with its key; keys carried by several of them. */
class KeptCalls {
  private readonly thread: Column<Int32Array>;
  private readonly key: Column<Int32Array>;
  private readonly start: Float64Buffer;
  private readonly end: Float64Buffer;
  /** Per key: its first kept call, -1 before one; `sharedKeys`: keys a second call came for. */
  private readonly firstCall: Int32Array;
  private readonly calls: Uint8Array;
  sharedKeys = 0;

  constructor(keyCount: number, cap: number) {
    this.thread = new Column((n) => new Int32Array(n), cap);
    this.key = new Column((n) => new Int32Array(n), cap);
    this.start = new Float64Buffer(cap);
    this.end = new Float64Buffer(cap);
    this.firstCall = new Int32Array(keyCount).fill(-1);
    this.calls = new Uint8Array(keyCount);
  }

  add(key: number, thread: number, s: number, e: number): void {
    const i = this.start.length;
    this.thread.ensure(i + 1);
    this.key.ensure(i + 1);
    this.thread.data[i] = thread;
    this.key.data[i] = key;
    this.start.push(s);
    this.end.push(e);
    if (this.firstCall[key] < 0) this.firstCall[key] = i;
    else if (this.calls[key] === 1) this.sharedKeys++;
    if (this.calls[key] < 2) this.calls[key]++;
  }

  /** The kept calls with their keys' folds (every call of a key gets all its ops, as `foldOpsIntoCalls` gives them). */
  result(ops: OpsByKey): Omit<LaunchedCalls, 'threadHi' | 'threadLo' | 'duplicateCorrelationIds'> {
    const m = this.start.length;
    const key = this.key.trim(m);
    const opStart = new Float64Array(m);
    const opEnd = new Float64Array(m);
    const opCount = new Uint32Array(m);
    const sharedKey = new Uint8Array(m);
    const keyOf = new Map<number, number>();
    let opsOfCalledKeys = 0;
    for (let i = 0; i < m; i++) {
      const k = key[i];
      opStart[i] = ops.opStart[k];
      opEnd[i] = ops.opEnd[k];
      opCount[i] = ops.opCount[k];
      if (this.calls[k] > 1) {
        sharedKey[i] = 1;
        keyOf.set(i, this.firstCall[k]);
      }
    }
    // Ops whose key a call carried; the rest (no call, or no key) are the fold's "without API call".
    for (let k = 0; k < ops.keyCount; k++) if (this.firstCall[k] >= 0) opsOfCalledKeys += ops.opCount[k];
    return {
      count: m,
      // Views: they cross to the thread that reads them by transfer, their untouched tails with them.
      thread: this.thread.trim(m),
      start: this.start.view(),
      end: this.end.view(),
      opStart,
      opEnd,
      opCount,
      sharedKey,
      keyOf,
      gpuOps: ops.gpuOps,
      gpuOpsWithoutApiCall: ops.gpuOps - opsOfCalledKeys,
    };
  }
}

/**
 * Which (process, correlation id) keys the calls without GPU work carried, to count those carried
 * twice or more (once each): a bit per correlation id while ids are whole numbers below a bound
 * (CUPTI's count up from 1, ~6 a call with the driver's), a set beyond it.
 */
class KeysSeen {
  duplicates = 0;
  /** Per process half: a bit per correlation id seen, and one per id seen twice (grown as `Column`s grow). */
  private readonly bitsByHi = new Map<number, { seen: Column<Uint8Array>; twice: Column<Uint8Array> }>();
  private readonly wide = new Map<string, number>();
  private readonly limit: number;

  constructor(callCapacity: number) {
    this.limit = Math.max(1 << 20, 64 * callCapacity);
  }

  see(hi: number, corr: number): void {
    if (!(Number.isInteger(corr) && corr >= 0 && corr < this.limit)) {
      const key = `${hi}:${corr}`;
      const n = this.wide.get(key) ?? 0;
      if (n === 1) this.duplicates++;
      if (n < 2) this.wide.set(key, n + 1);
      return;
    }
    let bits = this.bitsByHi.get(hi);
    if (!bits) this.bitsByHi.set(hi, (bits = { seen: new Column((n) => new Uint8Array(n), 4096), twice: new Column((n) => new Uint8Array(n), 4096) }));
    const byte = corr >>> 3;
    bits.seen.ensure(byte + 1);
    bits.twice.ensure(byte + 1);
    const bit = 1 << (corr & 7);
    if ((bits.seen.data[byte] & bit) === 0) bits.seen.data[byte] |= bit;
    else if ((bits.twice.data[byte] & bit) === 0) {
      bits.twice.data[byte] |= bit;
      this.duplicates++;
    }
  }
}

/**
 * `foldOpsIntoCalls` over the loaded columns, when they hold exactly the rows the projection's
 * queries read (`launchedCallsOf` checks): the same calls, threads, keys and folds, in loops over
 * the columns instead of a source's row callbacks (on pytorch-dense-long the fold took ~90 ms of
 * the NVTX worker's projection). The calls are the rows with a correlation id, in row order; a
 * key's first call is its first row (`ApiCallIndex`, shared with the attribution and the gaps);
 * `hiBase` is the bits above the PID every row shares, times 2^24.
 */
export function foldColumnsIntoCalls(ops: GpuOpColumns, calls: ApiCallColumns, index: ApiCallIndex, hiBase: number): LaunchedCalls {
  const callOfRow = callIndicesOfRows(calls.correlationId, calls.count);
  const count = callOfRow ? callOfRow.count : calls.count;
  const rows = callOfRow?.index ?? null;
  const others = new SharedKeys();
  for (let r = 0; r < calls.count; r++) {
    const k = rows ? rows[r] : r;
    if (k < 0) continue;
    const first = index.lookup(calls.pid[r], calls.correlationId[r]);
    others.add(first < 0 || rows === null ? first : rows[first], k);
  }
  const fold = new CallOpFold(count, others);
  for (let i = 0; i < ops.count; i++) {
    if (ops.kind[i] > GpuOpKind.Memset) continue;
    const row = index.lookup(ops.pid[i], ops.correlationId[i]);
    fold.add(row < 0 || rows === null ? row : rows[row], ops.start[i], ops.end[i]);
  }
  const threads = new ThreadIndex();
  const thread = callThreads(calls, rows, count, hiBase, threads);
  const end = (r: number) => callEnd(calls, r);
  const times = rows ? { start: pickCalls((r) => calls.start[r], rows, count), end: pickCalls(end, rows, count) } : { start: calls.start, end: Float64Array.from({ length: count }, (_, r) => end(r)) };
  return { count, thread, threadHi: threads.hi, threadLo: threads.tid, ...times, ...fold.result(), ...others.result(count) };
}

/** Row -> call index (-1: no correlation id, not a call), when some row has none; null when every row is a call. */
function callIndicesOfRows(corr: IdArray, n: number): { index: Int32Array; count: number } | null {
  let k = 0;
  while (k < n && corr[k] === corr[k]) k++;
  if (k === n) return null;
  const index = new Int32Array(n);
  let count = 0;
  for (let r = 0; r < n; r++) index[r] = corr[r] === corr[r] ? count++ : -1;
  return { index, count };
}

/** Each call's thread, interned in row order, as `foldOpsIntoCalls` interns them (`ThreadIndex` answers a run of one thread's rows from its last lookup). */
function callThreads(calls: ApiCallColumns, rows: Int32Array | null, count: number, hiBase: number, threads: ThreadIndex): Int32Array {
  const thread = new Int32Array(count);
  for (let r = 0; r < calls.count; r++) {
    const k = rows ? rows[r] : r;
    if (k >= 0) thread[k] = threads.intern(hiBase + calls.pid[r], calls.tid[r]);
  }
  return thread;
}

/** The values of the rows that are calls, by call index. */
function pickCalls(valueOf: (row: number) => number, rows: Int32Array, count: number): Float64Array {
  const out = new Float64Array(count);
  for (let r = 0; r < rows.length; r++) if (rows[r] >= 0) out[rows[r]] = valueOf(r);
  return out;
}

/** The calls that carry a key another call carried first: that first call -> the others. */
class SharedKeys {
  private readonly others = new Map<number, number[]>();

  get size(): number {
    return this.others.size;
  }

  /** Call `i`, whose key's first call is `first`. */
  add(first: number, i: number): void {
    if (first === i) return;
    const list = this.others.get(first);
    if (list) list.push(i);
    else this.others.set(first, [i]);
  }

  /** The other calls of `first`'s key (undefined: none). */
  of(first: number): number[] | undefined {
    return this.others.get(first);
  }

  result(count: number): Pick<LaunchedCalls, 'sharedKey' | 'keyOf' | 'duplicateCorrelationIds'> {
    const sharedKey = new Uint8Array(count);
    const keyOf = new Map<number, number>();
    for (const [first, list] of this.others) {
      sharedKey[first] = 1;
      keyOf.set(first, first);
      for (const j of list) {
        sharedKey[j] = 1;
        keyOf.set(j, first);
      }
    }
    return { sharedKey, keyOf, duplicateCorrelationIds: this.others.size };
  }
}

/** Each GPU op given to its key's calls: first start, last end and count per call. */
class CallOpFold {
  private readonly opStart: Float64Array;
  private readonly opEnd: Float64Array;
  private readonly opCount: Uint32Array;
  private gpuOps = 0;
  private gpuOpsWithoutApiCall = 0;

  constructor(
    count: number,
    private readonly others: SharedKeys,
  ) {
    this.opStart = new Float64Array(count).fill(Infinity);
    this.opEnd = new Float64Array(count).fill(-Infinity);
    this.opCount = new Uint32Array(count);
  }

  /** One op, of the key whose first call is `first` (-1: no call has its key). */
  add(first: number, s: number, e: number): void {
    this.gpuOps++;
    if (first < 0) {
      this.gpuOpsWithoutApiCall++;
      return;
    }
    this.addTo(first, s, e);
    if (this.others.size === 0) return;
    const list = this.others.of(first);
    if (list) for (const j of list) this.addTo(j, s, e);
  }

  private addTo(i: number, s: number, e: number): void {
    if (s < this.opStart[i]) this.opStart[i] = s;
    if (e > this.opEnd[i]) this.opEnd[i] = e;
    this.opCount[i]++;
  }

  result(): Pick<LaunchedCalls, 'opStart' | 'opEnd' | 'opCount' | 'gpuOps' | 'gpuOpsWithoutApiCall'> {
    return { opStart: this.opStart, opEnd: this.opEnd, opCount: this.opCount, gpuOps: this.gpuOps, gpuOpsWithoutApiCall: this.gpuOpsWithoutApiCall };
  }
}

/** PID part of the `globalTid >> 24` half (HW and VM ids above it; may be negative). */
export function pidOfHi(hi: number): number {
  return ((hi % 16777216) + 16777216) % 16777216;
}

/**
 * Dense thread numbering from the two exact halves of a globalTid (`>> 24` and `& 0xFFFFFF`),
 * which stay exact as JS numbers even when the globalTid itself exceeds 2^53.
 */
export class ThreadIndex {
  private readonly byNum = new Map<number, number>();
  private readonly byStr = new Map<string, number>();
  readonly hi: number[] = [];
  readonly pid: number[] = [];
  readonly tid: number[] = [];
  // Rows of one thread usually come in runs: remember the last lookup.
  private lastHi = NaN;
  private lastLo = NaN;
  private lastIdx = -1;
  get size(): number {
    return this.pid.length;
  }
  private key(hi: number, lo: number): number | string {
    const k = hi * 16777216 + lo;
    return Number.isSafeInteger(k) ? k : `${hi}:${lo}`;
  }
  /** Index of a thread already interned, or -1. */
  find(hi: number, lo: number): number {
    if (hi === this.lastHi && lo === this.lastLo) return this.lastIdx;
    const k = this.key(hi, lo);
    const i = (typeof k === 'number' ? this.byNum.get(k) : this.byStr.get(k)) ?? -1;
    if (i >= 0) {
      this.lastHi = hi;
      this.lastLo = lo;
      this.lastIdx = i;
    }
    return i;
  }
  intern(hi: number, lo: number): number {
    let i = this.find(hi, lo);
    if (i >= 0) return i;
    i = this.pid.length;
    const k = this.key(hi, lo);
    if (typeof k === 'number') this.byNum.set(k, i);
    else this.byStr.set(k, i);
    this.hi.push(hi);
    this.pid.push(pidOfHi(hi));
    this.tid.push(lo);
    return i;
  }
}

/**
 * The first call of each (process half of globalTid, correlation id) key: an open-addressing hash
 * table of call indices in typed arrays (a Map of Maps held ~40 bytes and a boxed number per call:
 * 150 MB on the 3.6M calls of the 10x bench export; this holds 8-12 bytes per call). A key's two
 * parts are whole numbers below 2^32 on every export nsys writes: each is held in 4 bytes until one
 * is not (`Uint32OrFloat64Column`), read back as the same number either way.
 */
class CallKeyIndex implements CallKeys {
  private slots: Int32Array;
  private mask: number;
  private readonly hiCol: Uint32OrFloat64Column;
  private readonly corrCol: Uint32OrFloat64Column;
  constructor(capacity: number) {
    const column = idColumnMaker(capacity);
    this.hiCol = column();
    this.corrCol = column();
    this.slots = new Int32Array(0);
    this.mask = 0;
    this.rehash();
  }
  private get hi(): IdArray {
    return this.hiCol.data;
  }
  private get corr(): IdArray {
    return this.corrCol.data;
  }
  /** Slots for twice the capacity, refilled with the first call of every key. */
  private rehash(): void {
    const old = this.slots;
    let size = 1024;
    while (size < this.hi.length * 2) size *= 2;
    this.slots = new Int32Array(size).fill(-1);
    this.mask = size - 1;
    for (let k = 0; k < old.length; k++) {
      const j = old[k];
      if (j < 0) continue;
      let s = this.slotOf(this.hi[j], this.corr[j]);
      while (this.slots[s] >= 0) s = (s + 1) & this.mask;
      this.slots[s] = j;
    }
  }
  private slotOf(hi: number, corr: number): number {
    const h = Math.imul((corr | 0) ^ ((corr / 4294967296) | 0), 0x9e3779b1) ^ Math.imul((hi | 0) ^ ((hi / 4294967296) | 0), 0x85ebca6b);
    return (h ^ (h >>> 15)) & this.mask;
  }
  /** Records call `i` (0, 1, 2, ... in order) under its key; returns the key's first call. */
  insert(hi: number, corr: number, i: number): number {
    if (i >= this.hi.length) {
      // More calls than max(rowid) promised (negative rowids): grow.
      this.hiCol.ensure(i + 1);
      this.corrCol.ensure(i + 1);
      this.rehash();
    }
    for (let s = this.slotOf(hi, corr); ; s = (s + 1) & this.mask) {
      const j = this.slots[s];
      if (j < 0) {
        this.slots[s] = i;
        this.hiCol.put(i, hi);
        this.corrCol.put(i, corr);
        return i;
      }
      if (this.corr[j] === corr && this.hi[j] === hi) return j;
    }
  }
  /** The first call with this key, or -1. */
  find(hi: number, corr: number): number {
    for (let s = this.slotOf(hi, corr); ; s = (s + 1) & this.mask) {
      const j = this.slots[s];
      if (j < 0) return -1;
      if (this.corr[j] === corr && this.hi[j] === hi) return j;
    }
  }
}

/** The first call of each (process half of globalTid, correlation id) key, by call index (0, 1, 2, ... as `eachCall` gives them). */
export interface CallKeys {
  /** Records call `i` (in order) under its key; returns the key's first call. */
  insert(hi: number, corr: number, i: number): number;
  /** The first call with this key, or -1. */
  find(hi: number, corr: number): number;
}

/**
 * Where the projection reads API calls and GPU ops: `eachCall` gives hi (`globalTid >> 24`), lo
 * (thread), start, end, correlation id of every call with a thread and a correlation id; `eachOp`
 * gives hi (`globalPid >> 24`, null when its thread part is not 0: it joins no call), correlation
 * id, start, end of every kernel, memcpy and memset, in table order.
 */
export interface LaunchSource {
  /** At least the number of calls (sizes the arrays). */
  callCapacity: number;
  eachCall(fn: (hi: number, lo: number, start: number, end: number, corr: number) => void): void;
  eachOp(fn: (hi: number | null, corr: number | null, start: number, end: number) => void): void;
}
