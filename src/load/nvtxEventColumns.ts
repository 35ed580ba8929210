import type { ExportHandle } from '../../queries/handle.js';
import { rowIdBound } from '../../queries/capture.js';
import { selectNvtxColumnRows, selectNvtxHostCauseColumnRows, type GilHoldFilter } from '../../queries/nvtxColumns.js';
import { forEachRow } from '../../queries/run.js';
import { loadStringsById } from '../../queries/strings.js';
import type { NvtxRangeVisitor } from '../../queries/iterationRanges.js';
import { isTimeNs, isValidNvtxTimes, recordRowCount } from '../../queries/validRows.js';
import { requireContract } from '../export/contract.js';
import { noteExcludedRows } from '../export/excludedRows.js';
import { columnMaker, narrowingColumnMaker, type Column, type NarrowingIntColumn, type SmallInts } from '../columns/typedColumn.js';
import { keysDomainExactly } from './domainKeys.js';
import { InternedStrings } from '../columns/internedStrings.js';

/**
 * Every NVTX event of an export with usable times, in column arrays, read in one scan and shared
 * by the analyses that read NVTX (the summary, the GPU projection, the host causes of gaps, GC and
 * GIL): NVTX_EVENTS is often the largest table (a GIL-traced run writes a `Holding GIL` range per
 * GIL hand-off), and each of them scanning it again cost most of `report`'s time.
 *
 * Rows are in table order, of every event type (ranges, marks, domain creations): consumers pick.
 */
export interface NvtxColumns {
  count: number;
  /** NVTX_EVENTS rowids (nsys's RangeId) of the rows, read with `nvtxRowId`. */
  rowIds: NvtxRowIds;
  start: Float64Array;
  /** NaN: no end (a mark, or a range never closed). */
  end: Float64Array;
  /** nsys event type (59/70 push-pop, 60/71 start-end, 34 mark, 75 domain create); 255 for any above. */
  eventType: Uint8Array;
  /** Low 24 bits of `globalTid >> 24` (0 when globalTid is NULL); in two bytes while every one fits (a container's ids). */
  pid: SmallInts;
  /** `globalTid & 0xFFFFFF`; -1 when globalTid is NULL; in two bytes while every one fits. */
  tid: SmallInts;
  /** `coalesce(domainId, 0)`: in one byte while every domain id fits (`NarrowingIntColumn`: nsys numbers domains from 0), else two (25 MB at 30x). */
  domainId: SmallInts;
  /**
   * Index into `texts` of `coalesce(StringIds.value via textId, text)`; -1 when that is NULL. In two
   * bytes while every index (and, during the scan, every `-2 - textId`) fits: pid, tid and text
   * together 48 MB on the 10x bench export's 8M rows.
   */
  text: SmallInts;
  /** `endGlobalTid`: 0 absent (or no such column), 1 the starting thread, 2 another thread. */
  endTid: Uint8Array;
  /** Distinct texts (each once). */
  texts: string[];
  /**
   * The bits of `globalTid` above the PID (hardware and VM ids) shared by every row, or null when
   * rows differ in them: then (pid, tid) alone does not name a thread across the whole export.
   */
  upperBits: number | null;
  /** Rows left out for unusable times (see src/export/excludedRows.ts). */
  invalidRows: number;
  /** nsys's end of time for unclosed ranges: the latest start or end of any row (0 without rows). */
  maxTimestampNs: number;
  /**
   * The span of the rows the scan put in these columns (`nvtxSpanOf`): taken in the scan, so no
   * pass of its own over a million rows. An extract (`nvtxRowsAt`) keeps its table's, as it keeps
   * the counts.
   */
  span: NvtxSpan;
  /** Marks (eventType 34) among all rows, usable times or not (as `nsys stats` counts them). */
  marks: number;
  /**
   * Range rows here whose (domain, process) no `domainKey` names (`keysDomainExactly`: a NULL
   * globalTid, kept with pid 0; a domain id that is a text, negative or past 2^29, kept as the
   * Int32 it converts to): their domain and process are not what SQL groups them by.
   */
  unkeyedRanges: number;
}

/**
 * The rowids of NVTX columns' rows. The scan reads the table in rowid order, so they come in runs
 * of consecutive rowids (one run on an export as nsys writes it; a row left out starts another):
 * held as the runs (`runAt[k]`: the row where run k begins, `runFirst[k]`: its rowid), with no
 * column of 4 bytes a row (102 MB on the 30x bench export's 25M rows). Past one run per `ROWS_PER_RUN` rows,
 * each row's in `column` (32-bit when max(rowid) allows); exactly one of the two forms is set.
 */
export interface NvtxRowIds {
  runAt: Int32Array | null;
  runFirst: Float64Array | null;
  column: Int32Array | Float64Array | null;
}

/** The rowid of row `i` of `c`. */
export function nvtxRowId(c: NvtxColumns, i: number): number {
  return rowIdAt(c.rowIds, i);
}

/** Row `i`'s rowid in `ids`. */
function rowIdAt(ids: NvtxRowIds, i: number): number {
  const { runAt, runFirst, column } = ids;
  if (column !== null) return column[i];
  // The last run beginning at or before row i.
  let lo = 0;
  let hi = runAt!.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (runAt![mid] <= i) lo = mid;
    else hi = mid - 1;
  }
  return runFirst![lo] + (i - runAt![lo]);
}

/** Runs held while there is at most one per `ROWS_PER_RUN` rows (or `FEW_RUNS` in all); past that, a column. */
const ROWS_PER_RUN = 16;
const FEW_RUNS = 4096;

/** The row ids as the scan gives them (`NvtxRowIds`): runs, or a column once they are many. */
class RowIdsBuilder {
  private readonly runAt: number[] = [];
  private readonly runFirst: number[] = [];
  private last = NaN;
  /** Set once the runs are too many; then grown with the other columns (`all`). */
  column: Column<Int32Array | Float64Array> | null = null;

  constructor(
    private readonly makeColumn: () => Column<Int32Array | Float64Array>,
    private readonly all: unknown[],
  ) {}

  put(n: number, r: number): void {
    if (this.column !== null) {
      this.column.data[n] = r;
      return;
    }
    if (r === this.last + 1) {
      this.last = r;
      return;
    }
    this.runAt.push(n);
    this.runFirst.push(r);
    this.last = r;
    if (this.runAt.length > FEW_RUNS && this.runAt.length * ROWS_PER_RUN > n) this.toColumn(n, r);
  }

  /** The rows so far (and row n, `r`) into a column sized as the others. */
  private toColumn(n: number, r: number): void {
    const column = this.makeColumn();
    column.ensure(n + 1);
    const ids: NvtxRowIds = { runAt: Int32Array.from(this.runAt), runFirst: Float64Array.from(this.runFirst), column: null };
    for (let i = 0; i < n; i++) column.data[i] = rowIdAt(ids, i);
    column.data[n] = r;
    this.column = column;
    this.all.push(column);
  }

  finish(n: number): NvtxRowIds {
    if (this.column !== null) return { runAt: null, runFirst: null, column: this.column.trim(n) };
    return { runAt: Int32Array.from(this.runAt), runFirst: Float64Array.from(this.runFirst), column: null };
  }
}

const TWO_24 = 16777216;

/** An export without NVTX_EVENTS has no NVTX columns (count 0). */
export function emptyNvtxColumns(): NvtxColumns {
  return {
    count: 0,
    rowIds: { runAt: new Int32Array(0), runFirst: new Float64Array(0), column: null },
    start: new Float64Array(0),
    end: new Float64Array(0),
    eventType: new Uint8Array(0),
    pid: new Int32Array(0),
    tid: new Int32Array(0),
    domainId: new Int32Array(0),
    text: new Int32Array(0),
    endTid: new Uint8Array(0),
    texts: [],
    upperBits: null,
    invalidRows: 0,
    unkeyedRanges: 0,
    maxTimestampNs: 0,
    span: { start: null, end: null },
    marks: 0,
  };
}

/**
 * One scan of NVTX_EVENTS (SQLite drives it, `forEachRow`), every row tested in JS with the same
 * rule as `validNvtxSql`: numeric start within +-(2^53 - 1) ns, end NULL or numeric, within range
 * and not before start. Strings are resolved once per distinct text id. `shared`: the columns over
 * SharedArrayBuffers (see `columnMaker`), read by the thread that loaded them and another.
 */
export function loadNvtxColumns(handle: ExportHandle, opts: { shared?: boolean } = {}): NvtxColumns {
  if (!handle.hasTable('NVTX_EVENTS')) return emptyNvtxColumns();
  requireContract(handle, 'nvtx');
  const bound = rowIdBound(handle, 'NVTX_EVENTS');
  const { columns, visited } = scanIntoColumns(handle, selectNvtxColumnRows(handle), nvtxColumnBuilders(bound, bound, opts.shared));
  // Every row of the table is visited (no WHERE): `info` counts NVTX_EVENTS with no scan of its own,
  // also after a large export let these columns go (a count(*) of 8.5M rows took 0.45 s at 10x).
  recordRowCount(handle, 'NVTX_EVENTS', visited);
  noteExcludedRows(handle, 'NVTX_EVENTS', columns.invalidRows);
  return columns;
}

/**
 * The NVTX rows that can be a host cause (`selectNvtxHostCauseColumnRows`: ranges with a thread,
 * without most GIL holds) as columns, for a caller that loads no NVTX columns; their counts and
 * upper bits (`invalidRows`, `maxTimestampNs`, `marks`, `upperBits`) are of these rows only, and
 * nothing is noted (the whole table's read notes its unusable rows). Columns grow from a small
 * size: these rows are few.
 */
export function loadNvtxHostCauseColumns(handle: ExportHandle, filter: GilHoldFilter): NvtxColumns {
  if (!handle.hasTable('NVTX_EVENTS')) return emptyNvtxColumns();
  requireContract(handle, 'nvtx');
  const bound = rowIdBound(handle, 'NVTX_EVENTS');
  return scanIntoColumns(handle, selectNvtxHostCauseColumnRows(handle, filter), nvtxColumnBuilders(bound, 1024, false)).columns;
}

/** The rows of `query` (`selectNvtxColumnRows`' columns) into `cols`, texts resolved; with the rows it gave. */
function scanIntoColumns(handle: ExportHandle, query: NvtxColumnRowsQuery, cols: NvtxColumnBuilders): { columns: NvtxColumns; visited: number } {
  const texts = new InternedStrings();
  const scan = scanNvtxRows(handle, query, cols, texts);
  const n = scan.count;
  resolveTextIds(handle, cols.text, scan, texts);
  const columns: NvtxColumns = {
    count: n,
    rowIds: cols.rowIds.finish(n),
    start: cols.start.trim(n),
    end: cols.end.trim(n),
    eventType: cols.eventType.trim(n),
    pid: cols.pid.trim(n),
    tid: cols.tid.trim(n),
    domainId: cols.domainId.trim(n),
    text: cols.text.trim(n),
    endTid: cols.endTid.trim(n),
    texts: texts.list,
    // No row with a thread: nothing to disagree on.
    upperBits: scan.upper === undefined ? 0 : scan.upper,
    invalidRows: scan.invalid,
    unkeyedRanges: scan.unkeyed,
    maxTimestampNs: scan.maxTs,
    span: n === 0 ? { start: null, end: null } : { start: scan.minStart, end: scan.maxLast },
    marks: scan.marks,
  };
  return { columns, visited: scan.visited };
}

/** The growable columns the NVTX scan fills, sized for `cap` rows; row ids 32-bit when `rowIdBound` (max(rowid)) allows. */
function nvtxColumnBuilders(rowIdBound: number, cap: number, shared: boolean | undefined) {
  const column = columnMaker(cap, shared);
  // Made only when the rowids are not in few runs (`RowIdsBuilder`), with the others' length.
  const rowIdColumn = (): Column<Int32Array | Float64Array> => (rowIdBound < 2147483647 ? column(Int32Array) : column(Float64Array));
  const start = column(Float64Array);
  const end = column(Float64Array);
  const eventType = column(Uint8Array);
  const narrowColumn = narrowingColumnMaker(cap, shared);
  const pid = narrowColumn(Int16Array);
  const tid = narrowColumn(Int16Array);
  const domainId = narrowColumn(Int8Array);
  const text = narrowColumn(Int16Array);
  const endTid = column(Uint8Array);
  const all = [start, end, eventType, pid, tid, domainId, text, endTid] as (Column<Float64Array | Int32Array | Uint8Array> | NarrowingIntColumn)[];
  const rowIds = new RowIdsBuilder(() => {
    const c = rowIdColumn();
    c.ensure(start.data.length);
    return c;
  }, all);
  return { rowIds, start, end, eventType, pid, tid, domainId, text, endTid, all };
}
type NvtxColumnBuilders = ReturnType<typeof nvtxColumnBuilders>;
type NvtxColumnRowsQuery = ReturnType<typeof selectNvtxColumnRows>;

/** What the scan counted beside the columns, and the text ids it left to resolve. */
interface NvtxScan {
  /** Rows in the columns. */
  count: number;
  /** Rows the query gave, usable or not. */
  visited: number;
  invalid: number;
  marks: number;
  /** Range rows kept whose (domain, pid) `domainKey` cannot hold (`NvtxColumns.unkeyedRanges`). */
  unkeyed: number;
  maxTs: number;
  /** Min start and max end (start when open) of the rows in the columns (+-Infinity: none). */
  minStart: number;
  maxLast: number;
  /** Upper bits of globalTid shared by every row with a thread (undefined: none; null: they differ). */
  upper: number | null | undefined;
  /** Row -> inline text, for the rare row with a text id too (coalesce's fallback). */
  inlineOf: Map<number, string>;
  /** Row -> text id, for the ids the `-2 - id` encoding cannot hold. */
  farTextIds: Map<number, number>;
}

/** The scan: every usable row into the columns, text ids kept as `-2 - id` to resolve afterwards. */
function scanNvtxRows(handle: ExportHandle, query: NvtxColumnRowsQuery, cols: NvtxColumnBuilders, texts: InternedStrings): NvtxScan {
  const { rowIds, start, end, eventType, pid, tid, domainId, text, endTid } = cols;
  let room = start.data.length;
  const inlineOf = new Map<number, string>();
  const farTextIds = new Map<number, number>();
  let n = 0;
  let invalid = 0;
  let marks = 0;
  let unkeyed = 0;
  let maxTs = 0;
  let minStart = Infinity;
  let maxLast = -Infinity;
  let upper: number | null | undefined;
  const visited = forEachRow(
    handle,
    query,
    (r: number, s: unknown, e: unknown, et: number | null, hi: number | null, t: number | null, dom: number, textId: number | null, txt: string | null, endT: number) => {
      if (et === 34) marks++;
      // nsys's end of time: the latest integer start or end of any row (as selectNvtxMaxTimestamp).
      if (isTimeNs(s) && s > maxTs) maxTs = s;
      if (isTimeNs(e) && e > maxTs) maxTs = e;
      if (!isValidNvtxTimes(s, e)) {
        invalid++;
        return;
      }
      // No event type: neither a range nor a mark (the contract's probe counts these rows in a note).
      if (et === null) return;
      if (n === room) {
        for (const col of cols.all) col.ensure(n + 1);
        room = start.data.length;
      }
      rowIds.put(n, r);
      start.data[n] = s as number;
      end.data[n] = e === null ? NaN : (e as number);
      if ((s as number) < minStart) minStart = s as number;
      const last = e === null ? (s as number) : (e as number);
      if (last > maxLast) maxLast = last;
      eventType.data[n] = et > 255 ? 255 : et;
      const h = hi ?? 0;
      const p = h % TWO_24;
      pid.put(n, p);
      tid.put(n, t ?? -1);
      if (hi !== null) {
        const up = (h - p) / TWO_24;
        if (upper === undefined) upper = up;
        else if (upper !== up) upper = null;
      }
      domainId.put(n, dom);
      // (The domain first: on an export as nsys writes it, every row's is keyed.)
      if (!keysDomainExactly(dom, hi === null ? null : p) && isNvtxRange(et)) unkeyed++;
      endTid.data[n] = endT;
      // Text ids are resolved after the scan (the connection is busy during it): kept as -2 - id,
      // with the inline text aside for the rare row that has both (coalesce's fallback). An id
      // that does not fit (negative or past 2^31 - 3: an edited export) is kept aside whole, so
      // it resolves as coalesce(StringIds.value, text) does rather than naming nothing.
      if (textId !== null) {
        if (textId >= 0 && textId < 2147483646) text.put(n, -2 - textId);
        else {
          text.put(n, -2);
          farTextIds.set(n, textId);
        }
        if (txt !== null) inlineOf.set(n, txt);
      } else text.put(n, txt === null ? -1 : texts.intern(txt));
      n++;
    },
  );
  return { count: n, visited, invalid, marks, unkeyed, maxTs, minStart, maxLast, upper, inlineOf, farTextIds };
}

/**
 * The text ids the scan kept (`-2 - id`) replaced by indices in `texts`: the distinct ids resolve
 * through StringIds in one query (`loadStringsById`: registered strings are few); an id without a
 * StringIds row falls back to the row's inline text, as coalesce does.
 */
function resolveTextIds(handle: ExportHandle, text: NarrowingIntColumn, scan: NvtxScan, texts: InternedStrings): void {
  const { farTextIds, inlineOf } = scan;
  // `text.data` is read afresh: a put that widens the column replaces it.
  const idOf = (r: number) => (farTextIds.size > 0 ? farTextIds.get(r) : undefined) ?? -2 - text.data[r];
  const ids = new Set<number>();
  for (let r = 0; r < scan.count; r++) if (text.data[r] <= -2) ids.add(idOf(r));
  const values = loadStringsById(handle, ids);
  /** text id -> index in `texts`; -1: the id has no StringIds row (the row's inline text stands). */
  const byTextId = new Map<number, number>();
  // Interned in row order, as the rows name them (the texts' order is the first use's).
  for (let r = 0; r < scan.count; r++) {
    if (text.data[r] > -2) continue;
    const id = idOf(r);
    let i = byTextId.get(id);
    if (i === undefined) {
      const value = values.get(id);
      byTextId.set(id, (i = value === undefined || value === null ? -1 : texts.intern(value)));
    }
    text.put(r, i >= 0 ? i : inlineOf.has(r) ? texts.intern(inlineOf.get(r)!) : -1);
  }
}

/**
 * Rows `rows` (ascending: table order) as columns of their own, with the texts, upper bits and
 * counts of `c` (a small extract that outlives the columns, which a large export lets go early).
 */
export function nvtxRowsAt(c: NvtxColumns, rows: Int32Array): NvtxColumns {
  const n = rows.length;
  const pick = <T extends { length: number; [i: number]: number }>(a: T, make: (n: number) => T): T => {
    const out = make(n);
    for (let k = 0; k < n; k++) out[k] = a[rows[k]];
    return out;
  };
  return {
    ...c,
    count: n,
    rowIds: { runAt: null, runFirst: null, column: Float64Array.from(rows, (r) => nvtxRowId(c, r)) },
    start: pick(c.start, (m) => new Float64Array(m)),
    end: pick(c.end, (m) => new Float64Array(m)),
    eventType: pick(c.eventType, (m) => new Uint8Array(m)),
    pid: pick(c.pid, (m) => new Int32Array(m)),
    tid: pick(c.tid, (m) => new Int32Array(m)),
    domainId: pick<SmallInts>(c.domainId, (m) => new Int32Array(m)),
    text: pick(c.text, (m) => new Int32Array(m)),
    endTid: pick(c.endTid, (m) => new Uint8Array(m)),
  };
}

/** Index of `value` in `cols.texts`, or -1 (no row has that text). */
export function textIndexOf(cols: NvtxColumns, value: string): number {
  return cols.texts.indexOf(value);
}

/** Calls `fn` with each range row (in table order) whose text is one of `names`. */
export function forEachRangeWithText(c: NvtxColumns, names: readonly string[], fn: (row: number) => void): void {
  const wanted = new Set<number>();
  for (const name of names) {
    const t = textIndexOf(c, name);
    if (t >= 0) wanted.add(t);
  }
  if (wanted.size === 0) return;
  for (let i = 0; i < c.count; i++) if (wanted.has(c.text[i]) && isNvtxRange(c.eventType[i])) fn(i);
}

/**
 * `c` when it left no row out (`invalidRows` 0), else undefined: the columns a reader that could
 * also query NVTX_EVENTS may answer from (a row with unusable times still counts in SQL).
 */
export function holdingEveryRow(c: NvtxColumns | undefined): NvtxColumns | undefined {
  return c && c.invalidRows === 0 ? c : undefined;
}

/** A flag per distinct text of the columns (`texts`): 1 when it satisfies `match` (each text tested once). */
function textsMatching(c: NvtxColumns, match: (text: string) => boolean): Uint8Array {
  const matches = new Uint8Array(c.texts.length);
  for (let t = 0; t < c.texts.length; t++) matches[t] = match(c.texts[t]) ? 1 : 0;
  return matches;
}

/**
 * Whether some range row's text satisfies `match` (tested once per distinct text): what
 * `hasMatchingNvtxRange` asks of NVTX_EVENTS by SQL, from the columns (the text is
 * coalesce(StringIds.value, text)). The columns hold the rows with usable times only: a caller
 * answers from them when they left no row out (`invalidRows` 0).
 */
export function hasRangeRowMatching(c: NvtxColumns, match: (text: string) => boolean): boolean {
  const matches = textsMatching(c, match);
  if (!matches.includes(1)) return false;
  for (let i = 0; i < c.count; i++) {
    const t = c.text[i];
    if (t >= 0 && matches[t] === 1 && isNvtxRange(c.eventType[i])) return true;
  }
  return false;
}

/**
 * The range rows whose text satisfies `match` (tested once per distinct text), by start (table
 * order on ties), as `forEachMatchingNvtxRange` visits them from SQL. Returns false, visiting
 * nothing, when one of them has no thread (NULL globalTid): the query reports those as it should.
 */
export function forEachMatchingRangeRow(c: NvtxColumns, match: (text: string) => boolean, visit: NvtxRangeVisitor): boolean {
  const matches = textsMatching(c, match);
  const rows: number[] = [];
  for (let i = 0; i < c.count; i++) {
    const t = c.text[i];
    if (t < 0 || matches[t] === 0 || !isNvtxRange(c.eventType[i])) continue;
    if (c.tid[i] < 0) return false;
    rows.push(i);
  }
  rows.sort((a, b) => c.start[a] - c.start[b] || a - b);
  for (const i of rows) {
    const end = c.end[i];
    visit(c.start[i], Number.isNaN(end) ? null : end, c.pid[i], c.tid[i], c.domainId[i], c.texts[c.text[i]]);
  }
  return true;
}

/** NVTX range event types: push/pop (59, 70) and start/end (60, 71). */
export function isNvtxRange(eventType: number): boolean {
  return eventType === 59 || eventType === 60 || eventType === 70 || eventType === 71;
}

/** The min start and max end (or start, when open) of NVTX rows; nulls without rows. */
export interface NvtxSpan {
  start: number | null;
  end: number | null;
}

/** The span over NVTX_EVENTS from the NVTX columns: min start, max of end (or start when open); taken in their scan. */
export function nvtxSpanOf(c: NvtxColumns): NvtxSpan {
  return c.span;
}
