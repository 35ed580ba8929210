import { forEachMatchingNvtxRange, hasMatchingNvtxRange, matchingNvtxTexts, selectMostFrequentRangeTexts, type NvtxRangeVisitor, type RangeTextCount } from '../../queries/iterationRanges.js';
import { selectLastApiCallEnd, selectLaunchCallsPerThread } from '../../queries/launchCalls.js';
import { allRows } from '../../queries/run.js';
import { isValidNvtxTimes } from '../../queries/validRows.js';
import { noteExcludedRows } from '../export/excludedRows.js';
import { analysisDetails } from './infoReads.js';
import type { LoadedExport } from './loadedExport.js';
import { forEachMatchingRangeRow, hasRangeRowMatching, holdingEveryRow } from './nvtxEventColumns.js';
import { nvtxDomains } from './nvtxReads.js';
import { hostCauseScanOf } from './hostRangeReads.js';

export type { NvtxRangeVisitor, RangeTextCount };

/**
 * What the iteration sources read: the NVTX ranges whose text marks an iteration, and, for
 * captures without such ranges, the thread that launched the most kernels and the capture's end.
 */

/**
 * Visits every NVTX range whose resolved text satisfies `match` and whose times are usable, by
 * start, from the NVTX columns when they are read (and left no row out), else by query (the string
 * table and distinct inline texts first, then only the matching rows). Matching ranges with
 * unusable times are counted in `invalid` and noted. `matched`: some text matched (the query path
 * stops early without one).
 */
export function forEachNvtxRangeMatching(loaded: LoadedExport, match: (text: string) => boolean, visit: NvtxRangeVisitor): { matched: boolean; invalid: number } {
  let invalid = 0;
  const checked: NvtxRangeVisitor = (start, end, pid, tid, domainId, text) => {
    if (!match(text)) return;
    // Few rows (the iteration ranges): checked here, excluded and counted (src/export/excludedRows.ts).
    if (!isValidNvtxTimes(start, end)) {
      invalid++;
      return;
    }
    visit(start, end, pid, tid, domainId, text);
  };
  // The columns when the query would find no more rows: it counts the unusable matches, and it
  // reports a match without a thread as it should. Without NVTX columns, the rows of the host-cause
  // query when it ran (the NVTX worker reads them first): every range but the GIL holds.
  const shared = loaded.sharedNvtx();
  const cols = shared ? holdingEveryRow(shared) : hostCauseScanOf(loaded, match);
  if (!(cols && forEachMatchingRangeRow(cols, match, checked))) {
    const matching = matchingNvtxTexts(loaded.handle, match);
    if (matching.ids.length === 0 && matching.texts.length === 0) return { matched: false, invalid: 0 };
    // The domain names (which visitors read) before the scan: read during it, their query would
    // run on the connection the scan holds.
    nvtxDomains(loaded);
    forEachMatchingNvtxRange(loaded.handle, matching, checked);
  }
  noteExcludedRows(loaded.handle, 'NVTX_EVENTS', invalid);
  return { matched: true, invalid };
}

/**
 * Whether some NVTX range's text satisfies `match`: from the NVTX columns when they are read and
 * hold every row, else by SQL (registered strings first: one `LIMIT 1` probe).
 */
export function hasNvtxRangeMatching(loaded: LoadedExport, match: (text: string) => boolean): boolean {
  const cols = loaded.hasTable('NVTX_EVENTS') ? holdingEveryRow(loaded.sharedNvtx()) : undefined;
  if (cols) return hasRangeRowMatching(cols, match);
  return hasMatchingNvtxRange(loaded.handle, match);
}

/** The thread that made the most kernel-launch calls; null when the capture has none. */
export function busiestLaunchingThread(loaded: LoadedExport): { pid: number; tid: number } | null {
  if (!loaded.hasTable('CUPTI_ACTIVITY_KIND_RUNTIME') || !loaded.hasTable('StringIds')) return null;
  const top = allRows(loaded.handle, selectLaunchCallsPerThread(loaded.handle).limit(1))[0];
  return top ? { pid: top.pid, tid: top.tid } : null;
}

/** End of the capture (ns from session start): ANALYSIS_DETAILS.duration, else the last API call's end. */
export function sessionEndNs(loaded: LoadedExport): number | undefined {
  const d = analysisDetails(loaded);
  if (d && Number(d.duration) > 0) return Number(d.duration);
  if (!loaded.hasTable('CUPTI_ACTIVITY_KIND_RUNTIME')) return undefined;
  const e = allRows(loaded.handle, selectLastApiCallEnd(loaded.handle))[0]?.endNs;
  return e == null ? undefined : Number(e);
}

/** The `limit` most frequent NVTX range texts with their counts (none without NVTX_EVENTS). */
export function mostFrequentRangeTexts(loaded: LoadedExport, limit: number): RangeTextCount[] {
  if (!loaded.hasTable('NVTX_EVENTS')) return [];
  return allRows(loaded.handle, selectMostFrequentRangeTexts(loaded.handle, limit)).map((r) => ({ text: String(r.text), count: Number(r.count) }));
}
