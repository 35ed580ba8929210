import { selectGilRanges, selectThreadNames, type GilRangeRow } from '../../queries/gilRanges.js';
import { selectHostCauseRanges, selectNvtxRangesNamed } from '../../queries/hostRanges.js';
import { allRows, forEachRow } from '../../queries/run.js';
import { selectStringIdsOf } from '../../queries/strings.js';
import type { LoadedExport } from './loadedExport.js';
import { isValidNvtxTimes } from '../../queries/validRows.js';
import { noteExcludedRows } from '../export/excludedRows.js';
import { Column } from '../columns/typedColumn.js';
import { forEachRangeWithText, isNvtxRange, loadNvtxHostCauseColumns, nvtxRowsAt, textIndexOf, type NvtxColumns } from './nvtxEventColumns.js';

/**
 * The NVTX ranges the host side reads (the causes of GPU idle gaps, GC and GIL): from the NVTX
 * columns when they are read, else by a query over the few rows needed. Either way the same rows,
 * in table order.
 */

/** `pid`/`tid` in one number (both 24-bit). */
export function threadKey(pid: number, tid: number): number {
  return pid * 16777216 + tid;
}

/** Which ranges `forEachHostCauseRange` reads. Names are the callers' (bound in the query). */
export interface HostCauseReadFilter {
  /** `Python GC`: its ranges are read on every thread. */
  gcRange: string;
  /** `Holding GIL`: left out in the GIL domains (most of a GIL-traced export's rows). */
  gilHoldRange: string;
  /** Names whose StringIds ids the query resolves itself (`specialName`): the GC and GIL range names. */
  specialNames: readonly string[];
  /** Domain ids named `GIL Trace`. */
  gilDomainIds: ReadonlySet<number>;
  /** `threadKey`s of the threads whose ranges are read. */
  threads: ReadonlySet<number>;
}

/**
 * One range: `textId` null when `text` is the resolved text (else the caller resolves it);
 * `specialName` the range's name when it is one of `specialNames` (else its text or undefined);
 * `end` NaN when open; `cross`: ended on another thread.
 */
export type HostCauseRangeVisitor = (pid: number, tid: number, eventType: number, domainId: number | null, textId: number | null, text: string | null, start: number, end: number, cross: boolean | number, specialName: string | null | undefined) => void;

/**
 * The ranges of `filter.threads` and `gcRange` ranges of any thread, without the GIL domains'
 * `gilHoldRange` ranges (those are skipped in SQL: 99% of a GIL-traced export's rows).
 */
export function forEachHostCauseRange(loaded: LoadedExport, filter: HostCauseReadFilter, visit: HostCauseRangeVisitor, causeRows?: NvtxColumns): void {
  const cols = causeRows ?? loaded.sharedNvtx();
  if (cols) return hostCauseRangesOf(cols, filter, visit);
  const special = new Map<number, string>();
  if (loaded.hasTable('StringIds')) forEachRow(loaded.handle, selectStringIdsOf(loaded.handle, filter.specialNames), (id: number, value: string) => special.set(id, value));
  const idsOf = (name: string) => [...special].filter(([, v]) => v === name).map(([id]) => id);
  const q = selectHostCauseRanges(loaded.handle, {
    gcRange: filter.gcRange,
    gilHoldRange: filter.gilHoldRange,
    gilDomainIds: [...filter.gilDomainIds],
    holdTextIds: idsOf(filter.gilHoldRange),
    gcTextIds: idsOf(filter.gcRange),
    threadKeys: [...filter.threads],
  });
  forEachRow(loaded.handle, q, (pid: number, tid: number, eventType: number, domainId: number | null, textId: number | null, text: string | null, start: number, end: number | null, cross: number) =>
    visit(pid, tid, eventType, domainId, textId, text, start, end ?? NaN, cross, textId != null ? special.get(textId) : text),
  );
}

/**
 * The NVTX rows `forEachHostCauseRange` can visit whatever threads it is given (`causeRows`):
 * every range with a thread but the GIL domains' `gilHoldRange` ranges (99% of a GIL-traced
 * export's rows, which it skips). Taken while the columns are loaded: a large export lets them go
 * before the gaps are computed, which then read these instead of NVTX_EVENTS again.
 */
export function hostCauseRowsOf(c: NvtxColumns, gilDomainIds: ReadonlySet<number>, gilHoldRange: string): NvtxColumns {
  const holdText = textIndexOf(c, gilHoldRange);
  const rows = new Column((n) => new Int32Array(n), 1024);
  let n = 0;
  for (let i = 0; i < c.count; i++) {
    if (!isHostCauseRow(c, i, holdText, gilDomainIds)) continue;
    rows.ensure(n + 1);
    rows.data[n++] = i;
  }
  return nvtxRowsAt(c, rows.trim(n));
}

/**
 * The NVTX rows the gaps' host causes read (`hostCauseRowsOf`), with the GIL domains whose holds
 * they leave out: the rows a reader of the causes needs whatever threads launch.
 */
export interface HostCauseRows {
  rows: NvtxColumns;
  /** `domainKey(domainId, pid)` of each domain named `GIL Trace`. */
  gilDomainKeys: readonly number[];
}

/**
 * `hostCauseRowsOf` for an analysis that loads no NVTX columns: the same rows, read by a query that
 * leaves out the GIL holds in SQL (the NVTX worker runs it while the GPU ops are read). What the
 * scan held is kept on `loaded` (`hostCauseScanOf`): the iteration ranges are among its rows.
 */
export function hostCauseRowsByQuery(loaded: LoadedExport, gilDomainIds: ReadonlySet<number>, gilHoldRange: string): NvtxColumns {
  const holdTextIds: number[] = [];
  if (gilDomainIds.size > 0 && loaded.hasTable('StringIds')) forEachRow(loaded.handle, selectStringIdsOf(loaded.handle, [gilHoldRange]), (id: number) => holdTextIds.push(id));
  const scan = loadNvtxHostCauseColumns(loaded.handle, { gilDomainIds: [...gilDomainIds], gilHoldRange, holdTextIds });
  let threadless = 0;
  for (let i = 0; i < scan.count; i++) if (scan.tid[i] < 0) threadless++;
  // The query left out the holds it could name; the rule itself (coalesce of text id and text) is applied here.
  const rows = hostCauseRowsOf(scan, gilDomainIds, gilHoldRange);
  // Kept once: every caller reads the same GIL domains and hold text of this export.
  loaded.cached(HOST_CAUSE_SCAN, (): HostCauseScan => ({ rows, gilDomainIds, gilHoldRange, threadlessRanges: threadless, invalidRows: scan.invalidRows }));
  return rows;
}

const HOST_CAUSE_SCAN = 'hostCauseScan';

/**
 * What the host-cause query of `hostCauseRowsByQuery` read: its rows (`hostCauseRowsOf`), and what
 * it read besides them: ranges without a thread, rows with unusable times (left out), and the
 * holds of `gilDomainIds` (left out).
 */
export interface HostCauseScan {
  rows: NvtxColumns;
  gilDomainIds: ReadonlySet<number>;
  gilHoldRange: string;
  threadlessRanges: number;
  invalidRows: number;
}

/**
 * The NVTX columns holding every range whose text satisfies `match`, from the host-cause query when
 * this export ran it (`hostCauseRowsByQuery`), so the iteration ranges need no scan of their own;
 * undefined when it did not, or when a matching range may be missing from its rows (a range
 * without a thread or with unusable times was read; `match` takes the GIL holds it left out).
 */
export function hostCauseScanOf(loaded: LoadedExport, match: (text: string) => boolean): NvtxColumns | undefined {
  const scan = loaded.cachedValue<HostCauseScan>(HOST_CAUSE_SCAN);
  if (!scan || scan.threadlessRanges > 0 || scan.invalidRows > 0) return undefined;
  if (scan.gilDomainIds.size > 0 && match(scan.gilHoldRange)) return undefined;
  return scan.rows;
}

/** Whether NVTX row `i` can be a host cause: a range with a thread, not a GIL domain's hold (`holdText`). */
function isHostCauseRow(c: NvtxColumns, i: number, holdText: number, gilDomainIds: ReadonlySet<number>): boolean {
  if (holdText >= 0 && c.text[i] === holdText && gilDomainIds.has(c.domainId[i])) return false;
  return isNvtxRange(c.eventType[i]) && c.tid[i] >= 0;
}

/** `forEachHostCauseRange` over NVTX columns (texts resolved: each row's `textId` is null). */
function hostCauseRangesOf(c: NvtxColumns, filter: HostCauseReadFilter, visit: HostCauseRangeVisitor): void {
  const gcText = textIndexOf(c, filter.gcRange);
  const holdText = textIndexOf(c, filter.gilHoldRange);
  for (let i = 0; i < c.count; i++) {
    if (!isHostCauseRow(c, i, holdText, filter.gilDomainIds)) continue;
    const t = c.text[i];
    const pid = c.pid[i];
    const tid = c.tid[i];
    if (!(t === gcText && gcText >= 0) && !filter.threads.has(threadKey(pid, tid))) continue;
    const text = t >= 0 ? c.texts[t] : null;
    visit(pid, tid, c.eventType[i], c.domainId[i], null, text, c.start[i], c.end[i], c.endTid[i] === 2, text);
  }
}

/** A `Waiting for GIL` (`wait` 1) or `Holding GIL` (0) range, with its domain. */
export type GilRange = GilRangeRow & { domainId: number };

/**
 * `Waiting for GIL` ranges of the executor threads and `Holding GIL` ranges of the other threads
 * of their processes, in table order (`wait` 1 for a wait). Domain filtering is the caller's.
 */
export function gilRanges(loaded: LoadedExport, executors: readonly { pid: number; tid: number }[], names: { wait: string; hold: string }): (GilRangeRow & { domainId: number })[] {
  const cols = loaded.sharedNvtx();
  if (cols) return gilRangesOf(cols, executors, names);
  // The rows the NVTX columns leave out (unusable times) are left out here too, and counted.
  const rows = selectGilRanges(loaded.handle, executors);
  const usable = rows.filter((r) => isValidNvtxTimes(r.start, r.end));
  noteExcludedRows(loaded.handle, 'NVTX_EVENTS', rows.length - usable.length);
  return usable;
}

/** `gilRanges` over the NVTX columns. */
export function gilRangesOf(c: NvtxColumns, executors: readonly { pid: number; tid: number }[], names: { wait: string; hold: string }): (GilRangeRow & { domainId: number })[] {
  const out: (GilRangeRow & { domainId: number })[] = [];
  if (executors.length === 0) return out;
  const waitText = textIndexOf(c, names.wait);
  const read = executorGilRangeTest(executors);
  forEachRangeWithText(c, [names.wait, names.hold], (i) => {
    const pid = c.pid[i];
    const tid = c.tid[i];
    if (tid < 0) return;
    const wait = c.text[i] === waitText;
    if (!read(pid, tid, wait)) return;
    const end = c.end[i];
    out.push({ pid, tid, domainId: c.domainId[i], wait: wait ? 1 : 0, start: c.start[i], end: end === end ? end : null });
  });
  return out;
}

/**
 * Whether a GIL range is one `gilRanges` reads: a wait of one of the executor threads, or a hold of
 * another thread of an executor's process.
 */
export function executorGilRangeTest(executors: readonly { pid: number; tid: number }[]): (pid: number, tid: number, wait: boolean) => boolean {
  const keys = new Set(executors.map((e) => threadKey(e.pid, e.tid)));
  const pids = new Set(executors.map((e) => e.pid));
  return (pid, tid, wait) => {
    const executor = keys.has(threadKey(pid, tid));
    return wait ? executor : !executor && pids.has(pid);
  };
}

/** Thread names of the given processes, by `threadKey`. */
export function threadNames(loaded: LoadedExport, pids: readonly number[]): Map<number, string> {
  return selectThreadNames(loaded.handle, pids);
}

/** A range named one of the names asked for (`name` resolved). */
export interface NamedRangeRow {
  pid: number;
  tid: number;
  domainId: number;
  name: string | undefined;
  start: number;
  end: number | null;
}

/** NVTX row `i` of the columns as a `NamedRangeRow` (an open range's end is null). */
export function namedRangeRowOf(c: NvtxColumns, i: number): NamedRangeRow {
  const end = c.end[i];
  return { pid: c.pid[i], tid: c.tid[i], domainId: c.domainId[i], name: c.texts[c.text[i]], start: c.start[i], end: end === end ? end : null };
}

/** The ranges whose text is one of `names`, in table order (null: the export can have none). */
export function rangesNamed(loaded: LoadedExport, names: readonly string[]): NamedRangeRow[] | null {
  const cols = loaded.sharedNvtx();
  if (cols) {
    const out: NamedRangeRow[] = [];
    forEachRangeWithText(cols, names, (i) => out.push(namedRangeRowOf(cols, i)));
    return out;
  }
  const handle = loaded.handle;
  const nameOfId = new Map<number, string>();
  const hasTextId = handle.hasColumn('NVTX_EVENTS', 'textId') && handle.hasTable('StringIds');
  const hasText = handle.hasColumn('NVTX_EVENTS', 'text');
  if (hasTextId) for (const r of allRows(handle, selectStringIdsOf(handle, names))) nameOfId.set(r.id, r.value);
  const query = selectNvtxRangesNamed(handle, { textIds: [...nameOfId.keys()], texts: names, hasTextId, hasText });
  if (query === null) return null;
  return allRows(handle, query).map((r) => ({ pid: r.pid, tid: r.tid, domainId: r.domainId, name: r.textId != null ? nameOfId.get(r.textId) : (r.text ?? undefined), start: r.start, end: r.end }));
}
