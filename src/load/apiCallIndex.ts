import type { ApiCallColumns } from './apiCallColumns.js';
import type { IdArray } from '../columns/typedColumn.js';

/**
 * One process's calls in correlation-id order: `corrs` ascending, `rows[k]` the call row of
 * `corrs[k]` (`rows` null: the process owns every row, so k is the row).
 */
interface SortedCalls {
  kind: 'sorted';
  corrs: IdArray;
  rows: Int32Array | null;
  /** Last answer: GPU ops come in launch order, so the next lookup is usually close by. */
  finger: number;
}
/** Correlation ids out of row order: a direct-address table over [min, max], or a Map. */
interface TableCalls {
  kind: 'table';
  min: number;
  table: Int32Array;
}
type ProcessIndex = SortedCalls | TableCalls | Map<number, number>;

/**
 * Finds the CUDA API call behind a GPU op: (pid, correlationId) -> row in `ApiCallColumns`.
 * correlationId is unique per process only; when two calls share one, the first row wins, so no
 * GPU op is counted twice.
 *
 * CUPTI hands out correlation ids from a per-process counter at call time, and nsys writes the
 * runtime rows in call order, so a process's ids ascend with the row (checked on every fixture).
 * Then the columns themselves are the index: a search from the previous answer, with no table
 * (a table over the ids' range cost 80 MB on the 10x bench export). Ids out of order fall back
 * to a direct-address table (dense ids) or a Map.
 */
export class ApiCallIndex {
  private readonly byPid = new Map<number, ProcessIndex>();
  private lastPid = NaN;
  private last: ProcessIndex | undefined;

  constructor(calls: ApiCallColumns) {
    const stats = new Map<number, { min: number; max: number; n: number; prev: number; sorted: boolean }>();
    for (let i = 0; i < calls.count; i++) {
      const c = calls.correlationId[i];
      if (Number.isNaN(c)) continue;
      const pid = calls.pid[i];
      const st = stats.get(pid);
      if (!st) stats.set(pid, { min: c, max: c, n: 1, prev: c, sorted: true });
      else {
        if (c < st.min) st.min = c;
        if (c > st.max) st.max = c;
        if (c < st.prev) st.sorted = false;
        st.prev = c;
        st.n++;
      }
    }
    const fill: [number, SortedCalls][] = [];
    for (const [pid, st] of stats) {
      if (st.sorted && st.n === calls.count) this.byPid.set(pid, { kind: 'sorted', corrs: calls.correlationId, rows: null, finger: 0 });
      else if (st.sorted) {
        const ix: SortedCalls = { kind: 'sorted', corrs: new Float64Array(st.n), rows: new Int32Array(st.n), finger: 0 };
        this.byPid.set(pid, ix);
        fill.push([pid, ix]);
      } else {
        const range = st.max - st.min + 1;
        this.byPid.set(pid, range <= 8 * st.n + 65536 ? { kind: 'table', min: st.min, table: new Int32Array(range).fill(-1) } : new Map());
      }
    }
    const filled = new Map(fill.map(([pid]) => [pid, 0]));
    for (let i = 0; i < calls.count; i++) {
      const c = calls.correlationId[i];
      if (Number.isNaN(c)) continue;
      const pid = calls.pid[i];
      const ix = this.byPid.get(pid)!;
      if (ix instanceof Map) {
        if (!ix.has(c)) ix.set(c, i);
      } else if (ix.kind === 'table') {
        if (ix.table[c - ix.min] < 0) ix.table[c - ix.min] = i;
      } else if (ix.rows) {
        const k = filled.get(pid)!;
        ix.corrs[k] = c;
        ix.rows[k] = i;
        filled.set(pid, k + 1);
      }
    }
  }

  /**
   * A flag per call row (`callCount` rows): the row some (pid, correlationId) pair of the ops
   * leads to (`lookup`), for every op at once. When one process owns every row in id order (the
   * nsys layout), the ops' ids are marked in a bitmap over the calls' id range and the calls are
   * read once against it (the first row of a repeated id wins, as in `lookup`): no search per op,
   * which was most of the gaps' launch-side pass over 700k ops. Otherwise, a lookup per op.
   */
  flagCalls(pids: ArrayLike<number>, corrs: ArrayLike<number>, count: number, callCount: number): Uint8Array {
    const flags = new Uint8Array(callCount);
    const sole = this.soleProcess(callCount);
    if (sole) flagByBitmap(sole.pid, sole.corrs, pids, corrs, count, flags);
    else
      for (let i = 0; i < count; i++) {
        const ci = this.lookup(pids[i], corrs[i]);
        if (ci >= 0) flags[ci] = 1;
      }
    return flags;
  }

  /**
   * The process owning every call row, in id order, when its ids are whole numbers over a range
   * a bitmap covers cheaply (at most 64 ids per call); else null.
   */
  private soleProcess(callCount: number): { pid: number; corrs: IdArray } | null {
    if (this.byPid.size !== 1) return null;
    const [[pid, ix]] = this.byPid;
    if (ix instanceof Map || ix.kind !== 'sorted' || ix.rows || ix.corrs.length !== callCount || callCount === 0) return null;
    const c = ix.corrs;
    const range = c[callCount - 1] - c[0];
    if (!(range >= 0 && range <= 64 * callCount + 65536)) return null;
    for (let k = 0; k < callCount; k++) if (!Number.isInteger(c[k])) return null;
    return { pid, corrs: c };
  }

  /** Row of the call with this correlation id in process `pid`, or -1 (none, or `corr` NaN). */
  lookup(pid: number, corr: number): number {
    let ix = this.last;
    if (pid !== this.lastPid) {
      ix = this.last = this.byPid.get(pid);
      this.lastPid = pid;
    }
    if (ix === undefined || Number.isNaN(corr)) return -1;
    if (ix instanceof Map) return ix.get(corr) ?? -1;
    if (ix.kind === 'table') {
      const k = corr - ix.min;
      return k >= 0 && k < ix.table.length ? ix.table[k] : -1;
    }
    const k = firstAtLeast(ix.corrs, corr, ix.finger);
    if (k >= ix.corrs.length || ix.corrs[k] !== corr) return -1;
    ix.finger = k;
    return ix.rows ? ix.rows[k] : k;
  }
}

/**
 * First index whose value is >= v in an ascending array, searched outward from `from`
 * (exponential steps, then binary search): O(log distance), so nearby answers are cheap.
 */
export function firstAtLeast(a: IdArray, v: number, from: number): number {
  const n = a.length;
  let lo: number;
  let hi: number;
  if (from < n && a[from] < v) {
    // Answer after `from`.
    lo = from + 1;
    let step = 1;
    hi = lo;
    while (hi < n && a[hi] < v) {
      lo = hi + 1;
      hi += step;
      step *= 2;
    }
    if (hi > n) hi = n;
  } else {
    // Answer at or before `from`.
    hi = Math.min(from, n);
    let step = 1;
    lo = hi;
    while (lo > 0 && a[lo - 1] >= v) {
      hi = lo - 1;
      lo -= step;
      step *= 2;
      if (lo < 0) lo = 0;
    }
  }
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * `ApiCallIndex.flagCalls` for one process owning every row, ids ascending and whole: the ops'
 * ids (of that process, within the calls' range) as bits, then the first row of each marked id.
 */
function flagByBitmap(pid: number, callCorrs: IdArray, pids: ArrayLike<number>, corrs: ArrayLike<number>, count: number, flags: Uint8Array): void {
  const min = callCorrs[0];
  const range = callCorrs[callCorrs.length - 1] - min + 1;
  const bits = new Uint32Array(Math.ceil(range / 32));
  for (let i = 0; i < count; i++) {
    const k = corrs[i] - min;
    // NaN, out of range and fractional ids match no call (a call's id is whole here).
    if (pids[i] !== pid || !(k >= 0 && k < range) || k !== Math.floor(k)) continue;
    bits[k >>> 5] |= 1 << (k & 31);
  }
  let prev = NaN;
  for (let r = 0; r < callCorrs.length; r++) {
    const c = callCorrs[r];
    if (c === prev) continue;
    prev = c;
    const k = c - min;
    if (bits[k >>> 5] & (1 << (k & 31))) flags[r] = 1;
  }
}
