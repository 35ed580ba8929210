import { isNvtxRange, textIndexOf, type NvtxColumns } from '../load/nvtxEventColumns.js';
import { executorGilRangeTest, hostCauseRowsByQuery, hostCauseRowsOf, namedRangeRowOf, threadKey, type GilRange, type HostCauseRows, type NamedRangeRow } from '../load/hostRangeReads.js';
import type { LoadedExport } from '../load/loadedExport.js';
import { nvtxEndOfTime } from '../load/nvtxReads.js';
import { firstEndingAfter, unionIntervals, type IntervalSet } from '../math/intervals.js';
import { GC_RANGE, gilDomainsOf, GIL_HOLD_RANGE, GIL_WAIT_RANGE } from './hostCauses.js';

/**
 * The few NVTX ranges the host summary and the GIL holders read, taken from the NVTX columns while
 * they are loaded. Both parts need the gaps, which need the GPU ops; on a large export the NVTX
 * columns are let go before the GPU ops are read (see `planRun`), and without this extract each
 * would scan NVTX_EVENTS again by SQL (~2.4 s and ~3.2 s on the 10x bench file).
 */
export interface HostNvtxRanges {
  /** `Python GC` and `Waiting for GIL` ranges, in table order (what `summarizeHost` reads). */
  gcAndGilWaits: readonly NamedRangeRow[];
  /**
   * Every `Waiting for GIL` range with a thread, and the `Holding GIL` ranges that overlap a wait
   * of another thread of their process (or are open), in table order: the only holds
   * `findGilHolders` can count (it intersects holds with the executor's waits), whichever thread
   * the gaps find to be the executor.
   */
  gilCandidates: readonly GilRange[];
  /** Where an open range ends: the last NVTX timestamp (null: unknown; callers use the range's start). */
  endOfTime: number | null;
}

/**
 * The rows the gaps' host causes can read (every range with a thread but the GIL holds), from the
 * NVTX columns when loaded, else by query: a large export lets its columns go before the gaps, and
 * an analysis without NVTX columns has the NVTX worker read these while the GPU ops are read.
 */
export function hostCauseRows(loaded: LoadedExport): HostCauseRows {
  const { keys, ids } = gilDomainsOf(loaded);
  const rows = loaded.isLoaded('nvtx') ? hostCauseRowsOf(loaded.nvtx(), ids, GIL_HOLD_RANGE) : hostCauseRowsByQuery(loaded, ids, GIL_HOLD_RANGE);
  return { rows, gilDomainKeys: [...keys] };
}

/** `HostNvtxRanges` from the NVTX columns (read now when they are not yet): one pass over the rows, then one over the GIL ranges. */
export function hostNvtxRanges(loaded: LoadedExport): HostNvtxRanges {
  const c = loaded.nvtx();
  const gc = textIndexOf(c, GC_RANGE);
  const wait = textIndexOf(c, GIL_WAIT_RANGE);
  const hold = textIndexOf(c, GIL_HOLD_RANGE);
  const gcAndGilWaits: NamedRangeRow[] = [];
  // The GIL ranges with a thread (row indices, table order), and each waiting thread's waits.
  const gilRows = new Int32Array(wait >= 0 ? c.count : 0);
  let gilCount = 0;
  const waits = new Map<number, WaitLists>();
  let open = false;
  for (let i = 0; i < c.count; i++) {
    const t = c.text[i];
    if ((t !== gc && t !== wait && t !== hold) || t < 0 || !isNvtxRange(c.eventType[i])) continue;
    const end = c.end[i];
    if (t !== hold) {
      gcAndGilWaits.push(namedRangeRowOf(c, i));
      if (end !== end) open = true;
    }
    if (t === gc || c.tid[i] < 0 || wait < 0) continue;
    gilRows[gilCount++] = i;
    if (t === wait) addWait(waits, c.pid[i], c.tid[i], c.start[i], end === end ? end : Infinity);
  }
  const gilCandidates = gilCandidatesOf(c, gilRows.subarray(0, gilCount), wait, waitUnionsByPid(waits));
  open ||= gilCandidates.some((r) => r.end === null);
  return { gcAndGilWaits, gilCandidates, endOfTime: open ? nvtxEndOfTime(loaded) : null };
}

/** Of the GIL ranges (`rows`), every wait, and the holds that overlap a wait of another thread of their process or are open. */
function gilCandidatesOf(c: NvtxColumns, rows: Int32Array, waitText: number, waitsByPid: Map<number, ThreadWaits[]>): GilRange[] {
  const out: GilRange[] = [];
  if (waitsByPid.size === 0) return out;
  // Millions of holds on a long capture: indexed loops, the process's waits looked up once per run of rows.
  let lastPid = -1;
  let waits: readonly ThreadWaits[] | undefined;
  for (let r = 0; r < rows.length; r++) {
    const i = rows[r];
    const pid = c.pid[i];
    if (pid !== lastPid) {
      lastPid = pid;
      waits = waitsByPid.get(pid);
    }
    const isWait = c.text[i] === waitText;
    const end = c.end[i];
    if (!isWait && end === end && !meetsWaitOfOtherThread(waits, c.tid[i], c.start[i], end)) continue;
    out.push({ pid, tid: c.tid[i], domainId: c.domainId[i], wait: isWait ? 1 : 0, start: c.start[i], end: end === end ? end : null });
  }
  return out;
}

/**
 * Whether [start, end) overlaps (by more than a point) a wait of one of `waits`' threads other than
 * `tid`. Rows come about in start order: each thread's cursor moves forward from where the last
 * row left it (a binary search only when a row starts before the previous one).
 */
function meetsWaitOfOtherThread(waits: readonly ThreadWaits[] | undefined, tid: number, start: number, end: number): boolean {
  if (waits === undefined || end <= start) return false;
  for (let w = 0; w < waits.length; w++) {
    const tw = waits[w];
    if (tw.tid === tid) continue;
    const { starts, ends } = tw.union;
    let k = tw.cursor;
    if (k > 0 && ends[k - 1] > start) k = firstEndingAfter(tw.union, start);
    else while (k < ends.length && ends[k] <= start) k++;
    tw.cursor = k;
    if (k < starts.length && starts[k] < end) return true;
  }
  return false;
}

/** One thread's `Waiting for GIL` ranges as a union, and where the last lookup in it ended. */
interface ThreadWaits {
  tid: number;
  union: IntervalSet;
  /** The first interval ending after the last row's start. */
  cursor: number;
}

/** One thread's `Waiting for GIL` starts and ends as read (by `threadKey`). */
interface WaitLists {
  pid: number;
  tid: number;
  s: number[];
  e: number[];
}

function addWait(waits: Map<number, WaitLists>, pid: number, tid: number, start: number, end: number): void {
  const k = threadKey(pid, tid);
  let l = waits.get(k);
  if (!l) waits.set(k, (l = { pid, tid, s: [], e: [] }));
  l.s.push(start);
  l.e.push(end);
}

/** Per process, each waiting thread's waits as a union (an open wait runs to +Infinity). */
function waitUnionsByPid(waits: Map<number, WaitLists>): Map<number, ThreadWaits[]> {
  const byPid = new Map<number, ThreadWaits[]>();
  for (const l of waits.values()) {
    let list = byPid.get(l.pid);
    if (!list) byPid.set(l.pid, (list = []));
    list.push({ tid: l.tid, union: unionIntervals(l.s, l.e), cursor: 0 });
  }
  return byPid;
}

/**
 * The executors' waits and the other threads' holds of their processes, as `gilRanges` reads them
 * (table order), from the candidates.
 */
export function gilRangesOfExecutors(candidates: readonly GilRange[], executors: readonly { pid: number; tid: number }[]): GilRange[] {
  const read = executorGilRangeTest(executors);
  return candidates.filter((r) => read(r.pid, r.tid, r.wait === 1));
}
