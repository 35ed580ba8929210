import type { NvtxDomainInfo } from '../analysis/exportInfo.js';
import { coveredLength, unionIntervals } from '../math/intervals.js';
import type { GapAnalysis } from './analyzeGaps.js';
import { GC_RANGE, GIL_DOMAIN, GIL_WAIT_RANGE } from './hostCauses.js';
import { rangesNamed, threadKey } from '../load/hostRangeReads.js';
import type { LoadedExport } from '../load/loadedExport.js';
import type { HostNvtxRanges } from './hostNvtxRanges.js';
import { domainKey } from '../load/domainKeys.js';
import { nvtxDomains as nvtxDomainNames, nvtxEndOfTime } from '../load/nvtxReads.js';

/** Python garbage collections (`Python GC` NVTX ranges, TLLM_PROFILE_RECORD_GC=1). */
export interface GcSummary {
  traced: boolean;
  collections: number;
  /** Sum of the collections' durations. */
  totalNs: number;
  /** Time covered by at least one collection (collections of several processes may overlap). */
  coveredNs: number;
  longestNs: number;
  /** GPU idle time the gap analysis attributed to gc (gaps >= its minimum gap). */
  gapIdleNs: number;
  /** Gaps whose largest part is gc. */
  gapsPrimary: number;
}

/** `Waiting for GIL` on one process's executor thread (the thread that launches the most GPU work). */
export interface GilThreadSummary {
  pid: number;
  tid: number;
  waits: number;
  totalNs: number;
  longestNs: number;
  /** Wait time inside the process's iteration windows (first start .. last end); null without iterations. */
  inIterationsNs: number | null;
  /** Wall time of those windows. */
  iterationWallNs: number | null;
}

export interface GilSummary {
  /** A `GIL Trace` NVTX domain exists (nsys -t python-gil). */
  traced: boolean;
  executorThreads: GilThreadSummary[];
  /** GPU idle time the gap analysis attributed to gil_wait. */
  gapIdleNs: number;
  gapsPrimary: number;
}

export interface HostSummary {
  gc: GcSummary;
  gil: GilSummary;
}

/**
 * GC and GIL in one query over the few NVTX rows named `Python GC` or `Waiting for GIL`, with the
 * same rules as the gap causes (`loadHostContext`): GC ranges of the default domain on any thread;
 * GIL waits of the `GIL Trace` domain on the executor thread the gap analysis found. What the gaps
 * lost to each comes from the gap analysis itself (nothing is recomputed).
 */
export function summarizeHost(
  loaded: LoadedExport,
  gaps: GapAnalysis,
  iterations: readonly { pid: number; startNs: number; endNs: number }[] = [],
  /** NVTX domains as `describeExport` lists them (saves reading them again). */
  nvtxDomains?: readonly NvtxDomainInfo[],
  /** The GC and GIL-wait ranges taken while the NVTX columns were loaded (else read here). */
  nvtxRanges?: HostNvtxRanges,
): HostSummary {
  const primary = (cause: string) => gaps.gaps.filter((g) => g.cause === cause).length;
  const gc: GcSummary = { traced: gaps.gcTraced, collections: 0, totalNs: 0, coveredNs: 0, longestNs: 0, gapIdleNs: gaps.idleByCauseNs.gc ?? 0, gapsPrimary: primary('gc') };
  const gil: GilSummary = { traced: gaps.gilTraced, executorThreads: [], gapIdleNs: gaps.idleByCauseNs.gil_wait ?? 0, gapsPrimary: primary('gil_wait') };
  if (!loaded.hasTable('NVTX_EVENTS') || !(gaps.gcTraced || gaps.gilTraced)) return { gc, gil };

  const executor = new Map<number, GilThreadSummary>();
  // Iteration windows of a process are back to back: one span per process.
  const spans = new Map<number, { start: number; end: number }>();
  for (const r of iterations) {
    const sp = spans.get(r.pid);
    if (!sp) spans.set(r.pid, { start: r.startNs, end: r.endNs });
    else {
      sp.start = Math.min(sp.start, r.startNs);
      sp.end = Math.max(sp.end, r.endNs);
    }
  }
  for (const t of gaps.threads) {
    const sp = spans.get(t.pid);
    const s: GilThreadSummary = { pid: t.pid, tid: t.executorTid, waits: 0, totalNs: 0, longestNs: 0, inIterationsNs: sp ? 0 : null, iterationWallNs: sp ? sp.end - sp.start : null };
    executor.set(threadKey(t.pid, t.executorTid), s);
    gil.executorThreads.push(s);
  }
  const gilDomains = new Set<number>();
  if (nvtxDomains) {
    for (const d of nvtxDomains) if (d.name === GIL_DOMAIN) gilDomains.add(domainKey(d.domainId, d.pid));
  } else {
    for (const [key, name] of nvtxDomainNames(loaded)) if (name === GIL_DOMAIN) gilDomains.add(key);
  }

  // Taken from the NVTX columns (by the pipeline, or here when read), else one query over the few rows with these names.
  const rows = nvtxRanges?.gcAndGilWaits ?? rangesNamed(loaded, [GC_RANGE, GIL_WAIT_RANGE]);
  if (rows === null) return { gc, gil };
  let endOfTime: number | null | undefined = nvtxRanges ? nvtxRanges.endOfTime : undefined;
  const gcStarts: number[] = [];
  const gcEnds: number[] = [];
  for (const r of rows) {
    const name = r.name;
    let end = r.end;
    if (end == null) end = endOfTime ??= nvtxEndOfTime(loaded) ?? r.start;
    const d = Math.max(0, end - r.start);
    if (name === GC_RANGE && r.domainId === 0) {
      gc.collections++;
      gc.totalNs += d;
      if (d > gc.longestNs) gc.longestNs = d;
      gcStarts.push(r.start);
      gcEnds.push(end);
    } else if (name === GIL_WAIT_RANGE && gilDomains.has(domainKey(r.domainId, r.pid))) {
      const s = executor.get(threadKey(r.pid, r.tid));
      if (!s) continue;
      s.waits++;
      s.totalNs += d;
      if (d > s.longestNs) s.longestNs = d;
      const sp = spans.get(r.pid);
      if (sp && s.inIterationsNs != null) s.inIterationsNs += Math.max(0, Math.min(end, sp.end) - Math.max(r.start, sp.start));
    }
  }
  gc.coveredNs = coveredLength(unionIntervals(gcStarts, gcEnds));
  return { gc, gil };
}
