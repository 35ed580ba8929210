import { noteExcludedRows } from '../export/rowChecks.js';
import { countInvalidRows, validNvtxSql } from '../../queries/validRows.js';
import type { ExportHandle } from '../../queries/handle.js';
import { selectNvtxMarkCount, selectNvtxMaxTimestamp, selectNvtxRangeRows, type NvtxQueryOptions } from '../../queries/nvtx.js';
import { selectNvtxDomainCreates } from '../../queries/nvtxDomains.js';
import { allRows, forEachRow } from '../../queries/run.js';
import { loadStrings } from '../../queries/strings.js';
import { durationStats, Float64Buffer, percentOf, type DurationStats } from './durationStats.js';
import { requireContract } from '../export/contract.js';

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

/** The latest NVTX timestamp (where nsys ends unclosed ranges), or null without NVTX. */
export function nvtxEndOfTime(handle: ExportHandle): number | null {
  if (!handle.hasTable('NVTX_EVENTS')) return null;
  return allRows(handle, selectNvtxMaxTimestamp(handle))[0]?.maxTs ?? null;
}

/** Key of a (domainId, pid) pair; domain ids are small, pids 24-bit. */
export function domainKey(domainId: number | null, pid: number): number {
  return (domainId ?? 0) * 16777216 + pid;
}

/**
 * Names of NVTX domains per (domainId, pid): the text of each DomainCreate (eventType 75) row.
 * Domains whose creation row is missing (trimmed exports) have no entry.
 */
export function loadNvtxDomains(handle: ExportHandle): ReadonlyMap<number, string> {
  requireContract(handle, 'nvtx');
  // One scan of NVTX_EVENTS per export (a second of the 10x bench file), however many analyses
  // ask: the export is read-only, so the answer cannot change.
  let out = domainCache.get(handle);
  if (!out) domainCache.set(handle, (out = readNvtxDomains(handle)));
  return out;
}

const domainCache = new WeakMap<ExportHandle, ReadonlyMap<number, string>>();

function readNvtxDomains(handle: ExportHandle): Map<number, string> {
  const out = new Map<number, string>();
  if (!handle.hasTable('NVTX_EVENTS')) return out;
  // The earliest DomainCreate row of each (domain, process) names it; rows are compared by start
  // here rather than relying on row order through forEachRow's wrapping subquery.
  const first = new Map<number, { start: number; textId: number | null; text: string | null }>();
  forEachRow(
    handle,
    selectNvtxDomainCreates(handle),
    (domainId: number | null, pid: number, start: number, textId: number | null, text: string | null) => {
      const key = domainKey(domainId, pid);
      const prev = first.get(key);
      if (!prev || start < prev.start) first.set(key, { start, textId, text });
    },
  );
  const strings = loadStrings(handle, [...first.values()].flatMap((d) => (d.textId == null ? [] : [d.textId])));
  for (const [key, d] of first) {
    // As nsys: coalesce(StringIds.value via textId, text).
    const name = (d.textId != null ? strings.get(d.textId) : undefined) ?? d.text;
    if (name != null) out.set(key, name);
  }
  return out;
}

interface RangeGroup {
  style: NvtxStyle;
  domain: number;
  textId: number | null;
  text: string | null;
  buf: Float64Buffer;
}

/**
 * Reproduces `nsys stats -r nvtx_sum`: NVTX ranges grouped by (label, style); nested ranges are
 * not made exclusive, so a parent's time includes its children's. Rows are streamed from SQLite
 * as plain values and grouped by ids; labels are resolved once per group.
 */
export function summarizeNvtx(handle: ExportHandle, opts: Pick<NvtxQueryOptions, 'pid'> = {}): NvtxSummary {
  return summarizeNvtxWithDomains(handle, opts).summary;
}

/** Ranges per NVTX domain and process (`domainKey` -> count), as `describeExport` lists them. */
export type NvtxRangesByDomain = ReadonlyMap<number, number>;

/**
 * `summarizeNvtx`, plus the number of ranges of each (domain, process) counted in the same scan:
 * the pipeline hands them to `describeExport`, which then does not scan NVTX_EVENTS again.
 */
export function summarizeNvtxWithDomains(handle: ExportHandle, opts: Pick<NvtxQueryOptions, 'pid'> = {}): { summary: NvtxSummary; rangesByDomain: NvtxRangesByDomain } {
  const empty: NvtxSummary = { rows: [], unclosedRanges: 0, crossThreadRanges: 0, maxTimestampNs: null, marks: 0, zeroLengthRanges: 0 };
  const rangesByDomain = new Map<number, number>();
  if (!handle.hasTable('NVTX_EVENTS')) return { summary: empty, rangesByDomain };
  requireContract(handle, 'nvtx');
  // `nvtx` reads every range anyway: one more scan counts the rows excluded for unusable times.
  noteExcludedRows(handle, 'NVTX_EVENTS', countInvalidRows(handle, 'NVTX_EVENTS', validNvtxSql()));
  const maxTs = nvtxEndOfTime(handle) ?? 0;
  // Groups keyed by text id (registered strings) or by text, then by style + (domain, pid).
  const byTextId = new Map<number, Map<number, RangeGroup>>();
  const byText = new Map<string, Map<number, RangeGroup>>();
  let unclosed = 0;
  let crossThread = 0;
  let zeroLength = 0;
  const q = selectNvtxRangeRows(handle, opts);
  forEachRow(handle, q, (eventType: number, domainId: number | null, pid: number, textId: number | null, text: string | null, start: number, end: number | null, cross: number) => {
    const style = nvtxStyleOf(eventType);
    const dom = domainKey(domainId, pid);
    const sub = dom * 2 + (style === 'StartEnd' ? 1 : 0);
    let inner: Map<number, RangeGroup> | undefined;
    if (textId != null) {
      inner = byTextId.get(textId);
      if (!inner) byTextId.set(textId, (inner = new Map()));
    } else {
      const t = text ?? '';
      inner = byText.get(t);
      if (!inner) byText.set(t, (inner = new Map()));
    }
    let g = inner.get(sub);
    if (!g) inner.set(sub, (g = { style, domain: dom, textId, text, buf: new Float64Buffer() }));
    if (end == null) unclosed++;
    if (cross) crossThread++;
    if (end === start) zeroLength++;
    g.buf.push((end ?? maxTs) - start);
  });
  for (const inner of [...byTextId.values(), ...byText.values()]) {
    for (const g of inner.values()) rangesByDomain.set(g.domain, (rangesByDomain.get(g.domain) ?? 0) + g.buf.length);
  }
  const domains = loadNvtxDomains(handle);
  const strings = loadStrings(handle, byTextId.keys());
  // Merge groups that print the same label (same domain name in several processes).
  const merged = new Map<string, { range: string; style: NvtxStyle; buf: Float64Buffer }>();
  for (const inner of [...byTextId.values(), ...byText.values()]) {
    for (const g of inner.values()) {
      const text = g.textId != null ? (strings.get(g.textId) ?? g.text) : g.text;
      const range = nvtxRangeLabel(domains.get(g.domain) ?? null, text);
      const key = `${g.style}\u0000${range}`;
      const prev = merged.get(key);
      if (!prev) merged.set(key, { range, style: g.style, buf: g.buf });
      else for (const v of g.buf.view()) prev.buf.push(v);
    }
  }
  const stats = [...merged.values()].map((g) => ({ range: g.range, style: g.style, ...durationStats(g.buf.view()) }));
  const grand = stats.reduce((a, s) => a + s.total, 0);
  const rows = stats
    .map((s) => ({ timePercent: percentOf(s.total, grand), ...s }))
    .sort((a, b) => b.total - a.total || a.count - b.count || (a.range < b.range ? -1 : a.range > b.range ? 1 : 0));
  const marks = Number(allRows(handle, selectNvtxMarkCount(handle, opts))[0]?.n ?? 0);
  return { summary: { rows, unclosedRanges: unclosed, crossThreadRanges: crossThread, maxTimestampNs: maxTs, marks, zeroLengthRanges: zeroLength }, rangesByDomain };
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
