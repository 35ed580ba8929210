import type { NvtxSummary } from '../src/analysis/nvtxSummary.js';
import type { DataTable } from './table.js';
import { nsysStatColumns } from './nsysColumns.js';

/** `nvtx_sum` columns, headers exactly as `nsys stats --format csv` prints them. */
export function nvtxSummaryTable(summary: NvtxSummary): DataTable {
  const notes: string[] = [];
  if (summary.unclosedRanges > 0) notes.push(`${summary.unclosedRanges} ranges were never closed; they end at the latest NVTX timestamp (${summary.maxTimestampNs} ns), as in nsys`);
  if (summary.crossThreadRanges > 0) notes.push(`${summary.crossThreadRanges} start/end ranges ended on another thread (counted in full, as in nsys)`);
  if (summary.zeroLengthRanges > 0) notes.push(`${summary.zeroLengthRanges} ranges have zero length (counted, duration 0)`);
  if (summary.marks > 0) notes.push(`${summary.marks} NVTX marks (instants) are not ranges and are not in this table`);
  return {
    title: 'NVTX range summary (nvtx_sum)',
    columns: [
      ...nsysStatColumns(),
      { key: 'style', header: 'Style', kind: 'text' },
      { key: 'range', header: 'Range', kind: 'text' },
    ],
    rows: summary.rows as unknown as DataTable['rows'],
    notes,
  };
}
