import { coveredLength, intersectIntervals, intersectionLength, overlapLength, unionIntervals } from '../math/intervals.js';
import type { NvtxDomainInfo } from '../analysis/exportInfo.js';
import { gilRanges, threadKey, threadNames } from '../load/hostRangeReads.js';
import type { LoadedExport } from '../load/loadedExport.js';
import { domainKey } from '../load/domainKeys.js';
import { nvtxEndOfTime } from '../load/nvtxReads.js';
import type { GapAnalysis } from './analyzeGaps.js';
import { gilRangesOfExecutors, type HostNvtxRanges } from './hostNvtxRanges.js';
import { GIL_DOMAIN, GIL_HOLD_RANGE, GIL_WAIT_RANGE } from './hostCauses.js';

/** A thread that held the GIL while the executor thread waited for it. */
export interface GilHolder {
  tid: number;
  /** `ThreadNames` name (Python threads are often all `python3`: the tid is what tells them apart). */
  name: string | null;
  /** Time this thread held the GIL while the executor waited (intersection of the two unions). */
  heldDuringWaitsNs: number;
  /** Share of the executor's wait time (0..1). */
  shareOfWaits: number;
  /** The same, restricted to the reported GPU idle gaps of the process. */
  heldDuringGapWaitsNs: number;
  /** `Holding GIL` ranges of this thread that overlap an executor wait. */
  overlappingHolds: number;
  /** The longest overlap of one hold with the waits, and where it starts (session ns). */
  longestOverlapNs: number;
  longestOverlapStartNs: number | null;
}

/** Per process: the executor thread's GIL waits and who held the GIL meanwhile. */
export interface GilHolderAnalysis {
  pid: number;
  executorTid: number;
  executorName: string | null;
  waits: number;
  /** Union of the executor's `Waiting for GIL` ranges. */
  waitNs: number;
  /** The executor's waits inside reported GPU idle gaps (the `gil_wait` the gaps rest on, as a union). */
  gapWaitNs: number;
  /** Wait time no traced thread was seen holding the GIL (the holder was untraced or between holds). */
  unexplainedWaitNs: number;
  /** Threads by `heldDuringWaitsNs`, descending. */
  holders: GilHolder[];
}

/**
 * Which thread held the GIL while each process's executor thread waited for it: the `GIL Trace`
 * domain's `Holding GIL` ranges of the process's other threads, intersected with the executor's
 * `Waiting for GIL` ranges. One NVTX pass that drops the executor's own holds in SQL. Empty when
 * the GIL was not traced.
 */
export function findGilHolders(loaded: LoadedExport, gaps: GapAnalysis, nvtxDomains: readonly NvtxDomainInfo[], nvtxRanges?: HostNvtxRanges): GilHolderAnalysis[] {
  if (!gaps.gilTraced || gaps.threads.length === 0) return [];
  const gilDomain = new Set(nvtxDomains.filter((d) => d.name === GIL_DOMAIN).map((d) => domainKey(d.domainId, d.pid)));
  const executors = gaps.threads.filter((t) => nvtxDomains.some((d) => d.name === GIL_DOMAIN && d.pid === t.pid)).map((t) => ({ pid: t.pid, tid: t.executorTid }));
  if (executors.length === 0) return [];
  // Taken from the NVTX columns (by the pipeline, or here when read), else one filtered query.
  const rows = nvtxRanges ? gilRangesOfExecutors(nvtxRanges.gilCandidates, executors) : gilRanges(loaded, executors, { wait: GIL_WAIT_RANGE, hold: GIL_HOLD_RANGE });
  let endOfTime: number | null | undefined = nvtxRanges ? nvtxRanges.endOfTime : undefined;
  const waits = new Map<number, { s: number[]; e: number[] }>();
  const holds = new Map<number, { s: number[]; e: number[] }>();
  const push = (m: Map<number, { s: number[]; e: number[] }>, k: number, s: number, e: number) => {
    let l = m.get(k);
    if (!l) m.set(k, (l = { s: [], e: [] }));
    l.s.push(s);
    l.e.push(e);
  };
  for (const r of rows) {
    if (!gilDomain.has(domainKey(r.domainId, r.pid))) continue;
    const end = r.end ?? (endOfTime ??= nvtxEndOfTime(loaded) ?? r.start);
    push(r.wait ? waits : holds, threadKey(r.pid, r.tid), r.start, end);
  }
  const names = threadNames(loaded, executors.map((e) => e.pid));
  const out: GilHolderAnalysis[] = [];
  for (const ex of executors) {
    const w = waits.get(threadKey(ex.pid, ex.tid));
    const waitSet = unionIntervals(w?.s ?? [], w?.e ?? []);
    const gapRows = gaps.gaps.filter((g) => g.pid === ex.pid);
    const gapSet = unionIntervals(gapRows.map((g) => g.startNs), gapRows.map((g) => g.endNs));
    const gapWaits = intersectIntervals(waitSet, gapSet);
    const holders: GilHolder[] = [];
    const heldStarts: number[] = [];
    const heldEnds: number[] = [];
    for (const [k, l] of holds) {
      if (Math.floor(k / 16777216) !== ex.pid) continue;
      const holdSet = unionIntervals(l.s, l.e);
      const during = intersectIntervals(holdSet, waitSet);
      const heldNs = coveredLength(during);
      if (heldNs <= 0) continue;
      let longest = 0;
      let longestStart: number | null = null;
      for (let i = 0; i < during.starts.length; i++) {
        const d = during.ends[i] - during.starts[i];
        if (d > longest) {
          longest = d;
          longestStart = during.starts[i];
        }
        heldStarts.push(during.starts[i]);
        heldEnds.push(during.ends[i]);
      }
      let overlapping = 0;
      for (let i = 0; i < l.s.length; i++) if (overlapLength(waitSet, l.s[i], l.e[i]) > 0) overlapping++;
      holders.push({
        tid: k % 16777216,
        name: names.get(k) ?? null,
        heldDuringWaitsNs: heldNs,
        shareOfWaits: heldNs / Math.max(1, coveredLength(waitSet)),
        heldDuringGapWaitsNs: intersectionLength(during, gapWaits),
        overlappingHolds: overlapping,
        longestOverlapNs: longest,
        longestOverlapStartNs: longestStart,
      });
    }
    const anyHeld = unionIntervals(heldStarts, heldEnds);
    holders.sort((a, b) => b.heldDuringWaitsNs - a.heldDuringWaitsNs || a.tid - b.tid);
    const waitNs = coveredLength(waitSet);
    out.push({
      pid: ex.pid,
      executorTid: ex.tid,
      executorName: names.get(threadKey(ex.pid, ex.tid)) ?? null,
      waits: w?.s.length ?? 0,
      waitNs,
      gapWaitNs: coveredLength(gapWaits),
      unexplainedWaitNs: Math.max(0, waitNs - coveredLength(anyHeld)),
      holders,
    });
  }
  return out;
}
