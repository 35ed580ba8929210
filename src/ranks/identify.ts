import { basename, dirname, resolve } from 'node:path';
import { UsageError } from '../errors.js';

/** Where a rank number came from. */
export type RankSource = 'file-name' | 'input-order';

export interface RankedInput {
  rank: number;
  file: string;
}

/** `rank3`, `rank_3`, `rank-3`, `rank.3`, `RANK3` (not `frank3`). */
const RANK_RE = /(?:^|[^a-z])rank[-_.]?(\d+)/i;

/**
 * The rank a path names: in the file name, else in its directory's name
 * (`run/rank3/trace.sqlite`). Null when neither says.
 */
export function rankFromPath(path: string): number | null {
  const abs = resolve(path);
  for (const name of [basename(abs), basename(dirname(abs))]) {
    const m = RANK_RE.exec(name);
    if (m) return Number(m[1]);
  }
  return null;
}

/**
 * Rank of each input. Exports do not reliably say which rank they are (nsys records no rank, and
 * the logs of both pytorch-tp2 ranks print `global_rank 0`), so:
 * - when every path names a rank (`rank(\d+)` in the file name or a parent directory name) and
 *   the numbers are distinct, those are the ranks;
 * - otherwise the ranks are the input order, 0..n-1 (after directory/glob expansion, which sorts
 *   names naturally), and `source` says so.
 * `hints` lets callers offer a second name per input (e.g. the export a summary was made from).
 */
export function identifyRanks(files: readonly string[], hints: readonly (string | null)[] = []): { inputs: RankedInput[]; source: RankSource; note: string } {
  const named = files.map((f, i) => rankFromPath(f) ?? (hints[i] ? rankFromPath(hints[i]!) : null));
  const distinct = new Set(named.filter((r) => r != null));
  if (files.length > 0 && named.every((r) => r != null) && distinct.size === files.length) {
    return { inputs: files.map((file, i) => ({ rank: named[i]!, file })), source: 'file-name', note: `ranks from the file names (rank<N>): ${named.join(', ')}` };
  }
  let why = 'not every file name says rank<N>';
  if (named.every((r) => r != null)) {
    const dup = named.find((r, i) => named.indexOf(r) !== i);
    why = `rank ${dup} is named twice`;
  }
  return { inputs: files.map((file, i) => ({ rank: i, file })), source: 'input-order', note: `ranks are the input order 0..${files.length - 1} (${why})` };
}

/** A usage error when the same rank appears twice with explicit numbers (never silently merged). */
export function assertDistinctRanks(inputs: readonly RankedInput[]): void {
  const seen = new Map<number, string>();
  for (const { rank, file } of inputs) {
    const prev = seen.get(rank);
    if (prev !== undefined) throw new UsageError(`rank ${rank} given twice: ${prev} and ${file}`);
    seen.set(rank, file);
  }
}
