import { forEachRangeWithText, textIndexOf, type NvtxColumns } from '../load/nvtxEventColumns.js';
import { rangesNamed, threadKey, type GilRange, type NamedRangeRow } from '../load/hostRangeReads.js';
import type { LoadedExport } from '../load/loadedExport.js';
import { nvtxEndOfTime } from '../load/nvtxReads.js';
import { firstEndingAfter, unionIntervals, type IntervalSet } from '../math/intervals.js';
import { GC_RANGE, GIL_HOLD_RANGE, GIL_WAIT_RANGE } from './hostCauses.js';

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

/** `HostNvtxRanges` from the NVTX columns (read now when they are not yet). */
export function hostNvtxRanges(loaded: LoadedExport): HostNvtxRanges {
  const c = loaded.nvtx();
  const gcAndGilWaits = rangesNamed(loaded, [GC_RANGE, GIL_WAIT_RANGE]) ?? [];
  const gilCandidates = gilCandidatesOf(c);
  const open = gcAndGilWaits.some((r) => r.end === null) || gilCandidates.some((r) => r.end === null);
  return { gcAndGilWaits, gilCandidates, endOfTime: open ? nvtxEndOfTime(loaded) : null };
}

/** The GIL ranges with a thread: every wait, and the holds that overlap a wait of another thread of their process or are open. */
function gilCandidatesOf(c: NvtxColumns): GilRange[] {
  const waitsByPid = waitUnionsByPid(c);
  const out: GilRange[] = [];
  if (waitsByPid.size === 0) return out;
  const waitText = textIndexOf(c, GIL_WAIT_RANGE);
  forEachRangeWithText(c, [GIL_WAIT_RANGE, GIL_HOLD_RANGE], (i) => {
    const pid = c.pid[i];
    const tid = c.tid[i];
    if (tid < 0) return;
    const wait = c.text[i] === waitText;
    const end = c.end[i];
    if (!wait && end === end && !meetsWaitOfOtherThread(waitsByPid.get(pid), tid, c.start[i], end)) return;
    out.push({ pid, tid, domainId: c.domainId[i], wait: wait ? 1 : 0, start: c.start[i], end: end === end ? end : null });
  });
  return out;
}

/** Whether [start, end) overlaps (by more than a point) a wait of one of `waits`' threads other than `tid`. */
function meetsWaitOfOtherThread(waits: readonly ThreadWaits[] | undefined, tid: number, start: number, end: number): boolean {
  if (!waits || end <= start) return false;
  for (const w of waits) {
    if (w.tid === tid) continue;
    const k = firstEndingAfter(w.union, start);
    if (k < w.union.starts.length && w.union.starts[k] < end) return true;
  }
  return false;
}

/** One thread's `Waiting for GIL` ranges as a union. */
interface ThreadWaits {
  tid: number;
  union: IntervalSet;
}

/** Per process, each thread's waits (an open one runs to +Infinity). */
function waitUnionsByPid(c: NvtxColumns): Map<number, ThreadWaits[]> {
  const waits = new Map<number, { pid: number; tid: number; s: number[]; e: number[] }>();
  forEachRangeWithText(c, [GIL_WAIT_RANGE], (i) => {
    if (c.tid[i] < 0) return;
    const k = threadKey(c.pid[i], c.tid[i]);
    let l = waits.get(k);
    if (!l) waits.set(k, (l = { pid: c.pid[i], tid: c.tid[i], s: [], e: [] }));
    const end = c.end[i];
    l.s.push(c.start[i]);
    l.e.push(end === end ? end : Infinity);
  });
  const byPid = new Map<number, ThreadWaits[]>();
  for (const l of waits.values()) {
    let list = byPid.get(l.pid);
    if (!list) byPid.set(l.pid, (list = []));
    list.push({ tid: l.tid, union: unionIntervals(l.s, l.e) });
  }
  return byPid;
}

/**
 * The executors' waits and the other threads' holds of their processes, as `gilRanges` reads them
 * (table order), from the candidates.
 */
export function gilRangesOfExecutors(candidates: readonly GilRange[], executors: readonly { pid: number; tid: number }[]): GilRange[] {
  const keys = new Set(executors.map((e) => threadKey(e.pid, e.tid)));
  const pids = new Set(executors.map((e) => e.pid));
  return candidates.filter((r) => {
    const executor = keys.has(threadKey(r.pid, r.tid));
    return r.wait === 1 ? executor : !executor && pids.has(r.pid);
  });
}
