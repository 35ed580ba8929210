import { DurationBuffer, durationStats, percentOf, type DurationStats } from '../math/durationStats.js';
import type { LoadedExport } from '../load/loadedExport.js';
import { isNvtxRange, type NvtxColumns } from '../load/nvtxEventColumns.js';
import { domainKey } from '../load/domainKeys.js';
import { nvtxDomains } from '../load/nvtxReads.js';

export type NvtxStyle = 'PushPop' | 'StartEnd';

/** One row of the `nsys stats -r nvtx_sum` report. */
export interface NvtxSummaryRow extends DurationStats {
  timePercent: number;
  style: NvtxStyle;
  /** `Domain:Text`, as nsys prints it (`:Text` for the default domain). */
  range: string;
}

export interface NvtxSummary {
  rows: NvtxSummaryRow[];
  /** Ranges with no end, closed at the latest NVTX timestamp as nsys does. */
  unclosedRanges: number;
  /** Start/end ranges that ended on another thread than the one that started them. */
  crossThreadRanges: number;
  /** The NVTX end-of-time used for unclosed ranges. */
  maxTimestampNs: number | null;
  /** Instant markers (eventType 34): not ranges, so not in the table; counted here. */
  marks: number;
  /** Ranges of zero length (start == end): in the table with duration 0. */
  zeroLengthRanges: number;
}

/** 59 and 70 are push/pop ranges; 60 and 71 start/end ranges. */
export function nvtxStyleOf(eventType: number): NvtxStyle {
  return eventType === 60 || eventType === 71 ? 'StartEnd' : 'PushPop';
}

/** nsys's range label: `domain:text`, empty strings for a missing domain or text. */
export function nvtxRangeLabel(domain: string | null, text: string | null): string {
  return `${domain ?? ''}:${text ?? ''}`;
}

interface RangeGroup {
  /** Style and (domain, process): `domainKey` * 2, plus 1 for start/end ranges. */
  sub: number;
  style: NvtxStyle;
  domain: number;
  textId: number | null;
  text: string | null;
  buf: DurationBuffer;
}

/**
 * Reproduces `nsys stats -r nvtx_sum`: NVTX ranges grouped by (label, style); nested ranges are
 * not made exclusive, so a parent's time includes its children's. Rows are streamed from SQLite
 * as plain values and grouped by ids; labels are resolved once per group.
 */
export function summarizeNvtx(loaded: LoadedExport, opts: NvtxSummaryOptions = {}): NvtxSummary {
  return summarizeNvtxWithDomains(loaded, opts).summary;
}

/** Only the ranges (and marks) of this OS process. */
export interface NvtxSummaryOptions {
  pid?: number;
}

/** Ranges per NVTX domain and process (`domainKey` -> count), as `describeExport` lists them. */
export type NvtxRangesByDomain = ReadonlyMap<number, number>;

/**
 * `summarizeNvtx`, plus the number of ranges of each (domain, process) counted in the same scan:
 * the pipeline hands them to `describeExport`, which then does not scan NVTX_EVENTS again.
 */
export function summarizeNvtxWithDomains(loaded: LoadedExport, opts: NvtxSummaryOptions = {}): NvtxSummaryWithDomains {
  const empty: NvtxSummary = { rows: [], unclosedRanges: 0, crossThreadRanges: 0, maxTimestampNs: null, marks: 0, zeroLengthRanges: 0 };
  if (!loaded.hasTable('NVTX_EVENTS')) return { summary: empty, rangesByDomain: new Map() };
  return summarizeNvtxColumns(loaded.nvtx(), nvtxDomains(loaded), opts);
}

/** The NVTX summary with the ranges per domain counted in the same scan. */
export interface NvtxSummaryWithDomains {
  summary: NvtxSummary;
  /**
   * Null when the columns cannot count them as the table holds them: some range rows were left
   * out (unusable times) or have a (domain, process) no key names (`NvtxColumns.unkeyedRanges`);
   * `describeExport` then counts them by query.
   */
  rangesByDomain: NvtxRangesByDomain | null;
}

/**
 * The summary over the shared NVTX columns: ranges grouped by (text, style, domain and process)
 * in typed loops, then merged by printed label (a domain name used in several processes).
 */
export function summarizeNvtxColumns(
  c: NvtxColumns,
  domains: ReadonlyMap<number, string>,
  opts: NvtxSummaryOptions = {},
): NvtxSummaryWithDomains {
  const rangesByDomain = new Map<number, number>();
  const maxTs = c.maxTimestampNs;
  const pidFilter = opts.pid;
  const { groups, unclosed, crossThread, zeroLength } = groupRanges(c, pidFilter);
  let marks = 0;
  if (pidFilter === undefined) marks = c.marks;
  else for (let i = 0; i < c.count; i++) if (c.eventType[i] === 34 && c.pid[i] === pidFilter) marks++;
  for (const g of groups) rangesByDomain.set(g.domain, (rangesByDomain.get(g.domain) ?? 0) + g.buf.length);
  // Merge groups that print the same label (same domain name in several processes).
  const merged = new Map<string, { range: string; style: NvtxStyle; buf: DurationBuffer }>();
  for (const g of groups) {
    const range = nvtxRangeLabel(domains.get(g.domain) ?? null, g.text);
    const key = `${g.style}\u0000${range}`;
    const prev = merged.get(key);
    if (!prev) merged.set(key, { range, style: g.style, buf: g.buf });
    else for (const v of g.buf.view()) prev.buf.push(v);
  }
  const stats = [...merged.values()].map((g) => ({ range: g.range, style: g.style, ...durationStats(g.buf.view()) }));
  const grand = stats.reduce((a, s) => a + s.total, 0);
  const rows = stats
    .map((s) => ({ timePercent: percentOf(s.total, grand), ...s }))
    .sort((a, b) => b.total - a.total || a.count - b.count || (a.range < b.range ? -1 : a.range > b.range ? 1 : 0));
  const countsTable = c.invalidRows === 0 && c.unkeyedRanges === 0;
  return { summary: { rows, unclosedRanges: unclosed, crossThreadRanges: crossThread, maxTimestampNs: maxTs, marks, zeroLengthRanges: zeroLength }, rangesByDomain: countsTable ? rangesByDomain : null };
}

/** By NVTX_EVENTS event type: 0 not a range (`isNvtxRange`), 1 a push/pop range, 2 a start/end one (`nvtxStyleOf`). */
const RANGE_KIND = Uint8Array.from({ length: 256 }, (_, et) => (!isNvtxRange(et) ? 0 : nvtxStyleOf(et) === 'StartEnd' ? 2 : 1));

/**
 * The ranges' durations grouped by text index, then by style + (domain, pid), with what is
 * counted specially (unclosed ranges end at the latest timestamp, as in nsys). The event type and
 * the special cases are looked up and added, not branched on: start/end ranges and unclosed ones
 * come late in a capture, and code first run then would deoptimize the loop.
 *
 * The groups come in the order texts were first met, each text's in the order its (style, domain,
 * process) was: the order their values are merged and summed in. A text's groups are a small
 * array found by its index (nearly always one group), not maps looked up twice per range.
 */
function groupRanges(c: NvtxColumns, pidFilter: number | undefined): { groups: RangeGroup[]; unclosed: number; crossThread: number; zeroLength: number } {
  // By text index + 1 (0: no text); the texts in the order first met.
  const byText: (RangeGroup[] | undefined)[] = new Array(c.texts.length + 1);
  const textOrder: number[] = [];
  const rowsOfText = rowsPerText(c);
  const maxTs = c.maxTimestampNs;
  let unclosed = 0;
  let crossThread = 0;
  let zeroLength = 0;
  for (let i = 0; i < c.count; i++) {
    const et = c.eventType[i];
    const p = c.pid[i];
    if (pidFilter !== undefined && p !== pidFilter) continue;
    const kind = et >= 0 && et < RANGE_KIND.length ? RANGE_KIND[et] : 0;
    if (kind === 0) continue;
    const startEnd = kind === 2;
    const dom = domainKey(c.domainId[i], p);
    const sub = dom * 2 + (startEnd ? 1 : 0);
    const t = c.text[i];
    let list = byText[t + 1];
    if (!list) {
      byText[t + 1] = list = [];
      textOrder.push(t);
    }
    let g = list.length > 0 && list[0].sub === sub ? list[0] : groupOf(list, sub);
    // Sized for every row of the text: no doubling (memory touched twice); what a group leaves unused is never touched.
    if (!g) list.push((g = { sub, style: startEnd ? 'StartEnd' : 'PushPop', domain: dom, textId: null, text: t >= 0 ? c.texts[t] : null, buf: new DurationBuffer(rowsOfText[t + 1]) }));
    const s = c.start[i];
    const open = c.end[i] !== c.end[i];
    const e = open ? maxTs : c.end[i];
    unclosed += open ? 1 : 0;
    // An unclosed range is not zero-length, even at the end of time.
    zeroLength += !open && e === s ? 1 : 0;
    crossThread += c.endTid[i] === 2 ? 1 : 0;
    g.buf.push(e - s);
  }
  return { groups: textOrder.flatMap((t) => byText[t + 1]!), unclosed, crossThread, zeroLength };
}

/** Rows per text index + 1 (0: no text), whatever their kind: a bound on the ranges of each of the text's groups. */
function rowsPerText(c: NvtxColumns): Int32Array {
  const counts = new Int32Array(c.texts.length + 1);
  for (let i = 0; i < c.count; i++) counts[c.text[i] + 1]++;
  return counts;
}

/** The group of `sub` among a text's groups, if any. */
function groupOf(list: readonly RangeGroup[], sub: number): RangeGroup | undefined {
  for (let k = 0; k < list.length; k++) if (list[k].sub === sub) return list[k];
  return undefined;
}

/** What the NVTX summary counted specially, as one-line notes. */
export function nvtxSummaryNotes(summary: NvtxSummary): string[] {
  const notes: string[] = [];
  if (summary.unclosedRanges > 0) notes.push(`${summary.unclosedRanges} ranges were never closed; they end at the latest NVTX timestamp (${summary.maxTimestampNs} ns), as in nsys`);
  if (summary.crossThreadRanges > 0) notes.push(`${summary.crossThreadRanges} start/end ranges ended on another thread (counted in full, as in nsys)`);
  if (summary.zeroLengthRanges > 0) notes.push(`${summary.zeroLengthRanges} ranges have zero length (counted, duration 0)`);
  if (summary.marks > 0) notes.push(`${summary.marks} NVTX marks (instants) are not ranges and are not in this table`);
  return notes;
}
