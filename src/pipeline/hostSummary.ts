import type { ExportHandle } from '../../queries/handle.js';
import { selectNvtxRangesNamed } from '../../queries/hostRanges.js';
import { allRows } from '../../queries/run.js';
import { selectStringIdsOf } from '../../queries/strings.js';
import type { NvtxDomainInfo } from '../analysis/exportInfo.js';
import { coveredLength, unionIntervals } from '../analysis/intervals.js';
import { loadNvtxDomains, nvtxEndOfTime } from '../analysis/nvtxSummary.js';
import type { GapAnalysis } from '../gaps/analyze.js';
import { GC_RANGE, GIL_DOMAIN, GIL_WAIT_RANGE, threadKey } from '../gaps/hostCauses.js';
import { cachedNvtxColumns, forEachRangeWithText, type NvtxColumns } from '../analysis/nvtxColumns.js';

/** A range as `selectNvtxRangesNamed` returns it (`textId` null: `text` is the resolved text). */
interface NamedRangeRow {
  pid: number;
  tid: number;
  domainId: number;
  textId: number | null;
  text: string | null;
  start: number;
  end: number | null;
}

/** `selectNvtxRangesNamed` over the shared NVTX columns, in table order. */
function rangesNamed(c: NvtxColumns, names: readonly string[]): NamedRangeRow[] {
  const out: NamedRangeRow[] = [];
  forEachRangeWithText(c, names, (i) => {
    const end = c.end[i];
    out.push({ pid: c.pid[i], tid: c.tid[i], domainId: c.domainId[i], textId: null, text: c.texts[c.text[i]], start: c.start[i], end: end === end ? end : null });
  });
  return out;
}

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
  handle: ExportHandle,
  gaps: GapAnalysis,
  iterations: readonly { pid: number; startNs: number; endNs: number }[] = [],
  /** NVTX domains as `describeExport` lists them (saves reading them again). */
  nvtxDomains?: readonly NvtxDomainInfo[],
): HostSummary {
  const primary = (cause: string) => gaps.gaps.filter((g) => g.cause === cause).length;
  const gc: GcSummary = { traced: gaps.gcTraced, collections: 0, totalNs: 0, coveredNs: 0, longestNs: 0, gapIdleNs: gaps.idleByCauseNs.gc ?? 0, gapsPrimary: primary('gc') };
  const gil: GilSummary = { traced: gaps.gilTraced, executorThreads: [], gapIdleNs: gaps.idleByCauseNs.gil_wait ?? 0, gapsPrimary: primary('gil_wait') };
  if (!handle.hasTable('NVTX_EVENTS') || !(gaps.gcTraced || gaps.gilTraced)) return { gc, gil };

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
    for (const d of nvtxDomains) if (d.name === GIL_DOMAIN) gilDomains.add(d.domainId * 16777216 + d.pid);
  } else {
    for (const [key, name] of loadNvtxDomains(handle)) if (name === GIL_DOMAIN) gilDomains.add(key);
  }

  const names = [GC_RANGE, GIL_WAIT_RANGE];
  // Names by StringIds id (registered strings), resolved up front: the NVTX scan compares integers.
  const nameOfId = new Map<number, string>();
  const cols = cachedNvtxColumns(handle);
  let rows: NamedRangeRow[];
  if (cols) rows = rangesNamed(cols, names);
  else {
    const hasTextId = handle.hasColumn('NVTX_EVENTS', 'textId') && handle.hasTable('StringIds');
    const hasText = handle.hasColumn('NVTX_EVENTS', 'text');
    if (hasTextId) for (const r of allRows(handle, selectStringIdsOf(handle, names))) nameOfId.set(r.id, r.value);
    const query = selectNvtxRangesNamed(handle, { textIds: [...nameOfId.keys()], texts: names, hasTextId, hasText });
    if (query === null) return { gc, gil };
    rows = allRows(handle, query);
  }
  let endOfTime: number | null | undefined;
  const gcStarts: number[] = [];
  const gcEnds: number[] = [];
  for (const r of rows) {
    const name = r.textId != null ? nameOfId.get(r.textId) : r.text;
    let end = r.end;
    if (end == null) end = endOfTime ??= nvtxEndOfTime(handle) ?? r.start;
    const d = Math.max(0, end - r.start);
    if (name === GC_RANGE && r.domainId === 0) {
      gc.collections++;
      gc.totalNs += d;
      if (d > gc.longestNs) gc.longestNs = d;
      gcStarts.push(r.start);
      gcEnds.push(end);
    } else if (name === GIL_WAIT_RANGE && gilDomains.has(r.domainId * 16777216 + r.pid)) {
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
