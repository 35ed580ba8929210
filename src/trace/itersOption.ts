import { UsageError } from '../errors.js';
import { compactRanges } from '../formatRanges.js';
import type { IterationRow } from '../iterations/types.js';

/** `--iters A-B` (or `--iters A`): inclusive iteration numbers. */
export interface IterRange {
  first: number;
  last: number;
}

export function parseItersOption(value: string, option = '--iters'): IterRange {
  const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(value);
  if (!m) throw new UsageError(`${option} expects A-B or A, iteration numbers (got '${value}')`);
  const first = Number(m[1]);
  const last = m[2] === undefined ? first : Number(m[2]);
  if (last < first) throw new UsageError(`${option} ${value} ends before it starts`);
  return { first, last };
}

/** The iterations numbered A..B (any process) and the time window they span: [start of the first, end of the last). */
export function selectIterations(rows: readonly IterationRow[], range: IterRange): { rows: IterationRow[]; startNs: number; endNs: number } {
  const picked = rows.filter((r) => r.iter >= range.first && r.iter <= range.last);
  if (picked.length === 0) {
    const found = [...new Set(rows.map((r) => r.iter))].sort((a, b) => a - b);
    throw new UsageError(`--iters ${range.first}-${range.last}: no such iteration in the export (found ${found.length ? compactRanges(found) : 'none'})`);
  }
  let startNs = Infinity;
  let endNs = -Infinity;
  for (const r of picked) {
    if (r.startNs < startNs) startNs = r.startNs;
    if (r.endNs > endNs) endNs = r.endNs;
  }
  return { rows: picked, startNs, endNs };
}
