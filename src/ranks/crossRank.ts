import type { ColumnTable } from 'arquero';
import { aq, op } from '../math/arqueroOps.js';
import { compactRanges } from '../formatRanges.js';
import type { RankSource } from './identify.js';
import type { RankFigures } from './rankFigures.js';

/** Bumped when a field of the cross-rank view changes meaning. */
export const CROSS_RANK_SCHEMA = 'iterscope.ranks/1';

/** Session clocks whose collective ends differ by more than this (median) are re-aligned on the ends. */
export const MAX_CLOCK_SKEW_NS = 20_000;

/** One rank in one iteration. */
export interface RankCell {
  rank: number;
  gpuBusyNs: number;
  kernelNs: number;
  /** Time in collective kernels (the communication category). */
  communicationNs: number;
  /** kernelNs - communicationNs. */
  computeNs: number;
  /** communicationNs minus the least communicationNs of any rank in this iteration. */
  collectiveWaitNs: number;
  /** Sum over the iteration's collectives of how much later this rank started it than the first rank (null: not measured). */
  arrivalLagNs: number | null;
}

/**
 * How the straggler was found:
 * - `arrival`: measured, the rank that started the iteration's collectives latest (largest summed
 *   arrival lag on the aligned clocks);
 * - `collective-time`: inferred, the rank with the least time inside collectives (no timestamps,
 *   e.g. from summaries, or collectives that do not match one to one across ranks): since every
 *   rank leaves a collective when the last one has arrived, the last to arrive spends least in it;
 * - `compute`: the iteration has no collectives: the rank with the most compute time.
 */
export type StragglerBasis = 'arrival' | 'collective-time' | 'compute';

export interface CrossRankIteration {
  iter: number;
  /** One cell per rank, in rank order. */
  ranks: RankCell[];
  gpuBusyMinNs: number;
  gpuBusyMaxNs: number;
  /** gpuBusyMaxNs - gpuBusyMinNs. */
  gpuBusySpreadNs: number;
  /** The rank the others waited for in this iteration's collectives. */
  straggler: number;
  stragglerBasis: StragglerBasis;
  communicationMinNs: number;
  communicationMaxNs: number;
  maxCollectiveWaitNs: number;
  /** Sum of every rank's collective wait. */
  totalCollectiveWaitNs: number;
  /** Collectives matched across ranks for the arrival estimate (null when not measured). */
  collectives: number | null;
}

export interface RankTotals {
  rank: number;
  file: string;
  pid: number | null;
  source: RankFigures['source'];
  /** Iterations of this rank found in every rank (the ones in the view). */
  iterations: number;
  meanGpuBusyNs: number;
  meanCommunicationNs: number;
  meanComputeNs: number;
  meanCollectiveWaitNs: number;
  totalCollectiveWaitNs: number;
  /** Iterations in which this rank was the straggler. */
  stragglerIterations: number;
}

export interface ClockAlignment {
  /**
   * `session-utc`: each export's `TARGET_INFO_SESSION_START_TIME.utcEpochNs`;
   * `collective-ends`: offsets that make the ranks' collective ends coincide (median), used when the
   * session clocks disagree by more than MAX_CLOCK_SKEW_NS or are missing; `none`: no timestamps.
   */
  basis: 'session-utc' | 'collective-ends' | 'none';
  /** Per rank: ns to add to its session times to get the common clock. */
  offsetsNs: { rank: number; offsetNs: number }[];
  /** Median |end(rank) - end(first rank)| over the matched collectives, after alignment. */
  medianEndSkewNs: number | null;
  matchedCollectives: number;
}

export interface CrossRankView {
  schema: typeof CROSS_RANK_SCHEMA;
  communicationCategory: string;
  rankSource: RankSource;
  ranks: RankTotals[];
  /** Iterations present in every rank, ascending. */
  iterations: CrossRankIteration[];
  /** Iteration numbers some ranks have and others do not (left out of `iterations`). */
  iterationsNotOnAllRanks: number[];
  clock: ClockAlignment;
  notes: string[];
}

export interface RankedFigures {
  rank: number;
  figures: RankFigures;
}

function median(values: number[]): number {
  if (values.length === 0) return 0;
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Collectives of iteration-row `k` of one rank, as [start, end] subarrays. */
function collectivesOf(f: RankFigures, k: number): { s: Float64Array; e: Float64Array } | null {
  const c = f.collectives;
  if (!c) return null;
  return { s: c.startNs.subarray(c.offsets[k], c.offsets[k + 1]), e: c.endNs.subarray(c.offsets[k], c.offsets[k + 1]) };
}

/**
 * Offsets putting every rank on one clock. Session UTC starts when every export has one and the
 * collective ends then agree (median within MAX_CLOCK_SKEW_NS; ranks leave a collective together,
 * so their ends should coincide); otherwise each rank's offset is the median difference between the
 * first rank's collective ends and its own.
 */
function alignClocks(ranks: RankedFigures[], rowsOf: number[][]): { clock: ClockAlignment; offsets: number[] | null; notes: string[] } {
  const notes: string[] = [];
  const none: ClockAlignment = { basis: 'none', offsetsNs: [], medianEndSkewNs: null, matchedCollectives: 0 };
  if (ranks.length < 2 || ranks.some((r) => !r.figures.collectives)) return { clock: none, offsets: null, notes };
  // Matched collectives: iterations where every rank has the same number.
  const pairs: { k: number; rowPerRank: number[] }[] = [];
  for (let i = 0; i < rowsOf[0].length; i++) {
    const rows = rowsOf.map((r) => r[i]);
    const counts = rows.map((row, j) => collectivesOf(ranks[j].figures, row)!.s.length);
    if (counts[0] > 0 && counts.every((c) => c === counts[0])) pairs.push({ k: counts[0], rowPerRank: rows });
  }
  const matched = pairs.reduce((a, p) => a + p.k, 0);
  if (matched === 0) return { clock: { ...none, matchedCollectives: 0 }, offsets: null, notes };
  const endDiffs = (offsets: number[], j: number): number[] => {
    const out: number[] = [];
    for (const p of pairs) {
      const e0 = collectivesOf(ranks[0].figures, p.rowPerRank[0])!.e;
      const ej = collectivesOf(ranks[j].figures, p.rowPerRank[j])!.e;
      for (let k = 0; k < p.k; k++) out.push(ej[k] + offsets[j] - (e0[k] + offsets[0]));
    }
    return out;
  };
  const skewOf = (offsets: number[]) => median(ranks.slice(1).flatMap((_, j) => endDiffs(offsets, j + 1).map(Math.abs)));
  let basis: ClockAlignment['basis'] = 'collective-ends';
  let offsets: number[] | null = null;
  const utc = ranks.map((r) => r.figures.sessionStartUtcNs);
  if (utc.every((u) => u != null)) {
    const base = utc.reduce((a, b) => (b! < a! ? b : a))!;
    const byUtc = utc.map((u) => Number(u! - base));
    const skew = skewOf(byUtc);
    if (skew <= MAX_CLOCK_SKEW_NS) {
      basis = 'session-utc';
      offsets = byUtc;
    } else notes.push(`session clocks disagree: collective ends differ by a median ${(skew / 1000).toFixed(1)} us across ranks; ranks aligned on their collective ends instead`);
  } else notes.push('not every export records its session start time: ranks aligned on their collective ends');
  if (!offsets) {
    offsets = ranks.map(() => 0);
    for (let j = 1; j < ranks.length; j++) offsets[j] = -median(endDiffs(offsets, j));
  }
  const medianEndSkewNs = skewOf(offsets);
  return { clock: { basis, offsetsNs: ranks.map((r, j) => ({ rank: r.rank, offsetNs: offsets![j] })), medianEndSkewNs, matchedCollectives: matched }, offsets, notes };
}

/** Iterations aligned by number across ranks (rank j = position in `ranks`). */
interface IterationAlignment {
  /** Iteration numbers every rank has, ascending. */
  common: number[];
  /** Iteration numbers some ranks have and others do not, ascending. */
  partial: number[];
  /** rowsOf[j][i]: the row of `common[i]` in rank j's iterations (the first row with that number). */
  rowsOf: number[][];
  /** Per rank: iteration numbers found on more than one row, ascending. */
  repeated: number[][];
}

/**
 * Every rank's iteration rows as one long (rank, iter, row) table: the first row of each number per
 * rank, the numbers every rank has, and those rows pivoted to one column per rank.
 */
function alignIterations(ranks: readonly RankedFigures[]): IterationAlignment {
  const rank: number[] = [];
  const iter: number[] = [];
  const row: number[] = [];
  ranks.forEach(({ figures }, j) =>
    figures.iterations.forEach((r, i) => {
      rank.push(j);
      iter.push(r.iter);
      row.push(i);
    }),
  );
  if (iter.length === 0) return { common: [], partial: [], rowsOf: ranks.map(() => []), repeated: ranks.map(() => []) };
  const firstRows = aq.table({ rank, iter, row }).groupby('rank', 'iter').rollup({ row: op.min('row'), rows: op.count() });
  const repeated = ranks.map((_, j) =>
    numbers(firstRows.params({ j }).filter((d: { rank: number; rows: number }, $: { j: number }) => d.rank === $.j && d.rows > 1).orderby('iter'), 'iter'),
  );
  const ranksPerIter = firstRows.groupby('iter').rollup({ ranks: op.count() }).params({ n: ranks.length }).orderby('iter');
  const commonIters = ranksPerIter.filter((d: { ranks: number }, $: { n: number }) => d.ranks === $.n);
  const common = numbers(commonIters, 'iter');
  const partial = numbers(ranksPerIter.filter((d: { ranks: number }, $: { n: number }) => d.ranks < $.n), 'iter');
  if (common.length === 0) return { common, partial, rowsOf: ranks.map(() => []), repeated };
  const aligned = firstRows.semijoin(commonIters, 'iter').groupby('iter').pivot('rank', 'row').orderby('iter');
  return { common, partial, rowsOf: ranks.map((_, j) => numbers(aligned, String(j))), repeated };
}

/** A column as a plain number array (in the table's order). */
const numbers = (table: ColumnTable, name: string): number[] => Array.from(table.array(name) as ArrayLike<number>);

/**
 * The cross-rank view: iterations aligned by iteration number (those every rank has), and for each
 * the GPU busy time per rank (min / max / spread), collective and compute time per rank, the
 * estimated wait inside collectives (a rank's collective time minus the least of any rank in the
 * same iteration: the fastest rank's time is transfer, the excess is waiting for the others) and
 * the straggler, the rank the others waited for (see `StragglerBasis`).
 *
 * With timestamps (exports), the straggler is measured: collectives are matched across ranks by
 * their order within the iteration (NCCL requires every rank to issue them in the same order),
 * each rank's lateness at each one is summed on the aligned clocks, and the latest is the
 * straggler. Its collective wait is then the smallest because all ranks leave a collective at the
 * same time (ends agree within `clock.medianEndSkewNs`); iterations where that fails are noted.
 */
export function crossRankView(input: readonly RankedFigures[], opts: { rankSource?: RankSource } = {}): CrossRankView {
  const ranks = [...input].sort((a, b) => a.rank - b.rank);
  const notes: string[] = [];
  const category = ranks[0]?.figures.communicationCategory ?? 'communication';
  const { common, partial, rowsOf, repeated } = alignIterations(ranks);
  ranks.forEach(({ rank }, j) => {
    if (repeated[j].length) notes.push(`rank ${rank}: iteration numbers repeated (first kept): ${compactRanges(repeated[j])}`);
  });
  if (partial.length) notes.push(`iterations not found on every rank (left out): ${compactRanges(partial)}`);
  for (const r of ranks) if (r.figures.iterations.length === 0) notes.push(`rank ${r.rank} (${r.figures.file}): no iterations`);
  const { clock, offsets, notes: clockNotes } = alignClocks(ranks, rowsOf);
  notes.push(...clockNotes);

  const unexplained: number[] = [];
  const unmatched: number[] = [];
  const iterations = common.map((iter, i) => iterationAcrossRanks(ranks, rowsOf, i, iter, offsets, { unmatched, unexplained }));
  if (unmatched.length) notes.push(`collectives differ in number across ranks in iterations ${compactRanges(unmatched)}: straggler inferred from collective time there`);
  if (unexplained.length) {
    notes.push(`in iterations ${compactRanges(unexplained)} the latest-arriving rank is not the one with the least collective time: the ranks do not leave those collectives together (check the clock alignment and the category rules)`);
  }
  const totals = rankTotals(ranks, iterations);
  for (const r of ranks) notes.push(...r.figures.notes);
  if (iterations.length) {
    const byBasis = new Map<StragglerBasis, number>();
    for (const it of iterations) byBasis.set(it.stragglerBasis, (byBasis.get(it.stragglerBasis) ?? 0) + 1);
    notes.push(`${iterations.length} iterations on all ${ranks.length} ranks (${compactRanges(common)}); straggler by ${[...byBasis].map(([b, c]) => `${b} in ${c}`).join(', ')}`);
  }
  if (clock.basis !== 'none' && clock.medianEndSkewNs != null) {
    notes.push(`clocks aligned by ${clock.basis}: ${clock.matchedCollectives} collectives matched, their ends differ by a median ${Math.round(clock.medianEndSkewNs)} ns across ranks`);
  }
  return {
    schema: CROSS_RANK_SCHEMA,
    communicationCategory: category,
    rankSource: opts.rankSource ?? 'input-order',
    ranks: totals,
    iterations,
    iterationsNotOnAllRanks: partial,
    clock,
    notes,
  };
}

/**
 * Aligned iteration `i` (number `iter`) across the ranks: per rank its figures and collective wait,
 * the arrival lags when the collectives match, the straggler. Iterations whose collectives cannot
 * be matched, or whose latest arrival is not the least collective time, are added to `flagged`.
 */
function iterationAcrossRanks(
  ranks: readonly RankedFigures[],
  rowsOf: number[][],
  i: number,
  iter: number,
  offsets: number[] | null,
  flagged: { unmatched: number[]; unexplained: number[] },
): CrossRankIteration {
  const cells: RankCell[] = ranks.map(({ rank, figures }, j) => {
    const f = figures.iterations[rowsOf[j][i]];
    return { rank, gpuBusyNs: f.gpuBusyNs, kernelNs: f.kernelNs, communicationNs: f.communicationNs, computeNs: f.kernelNs - f.communicationNs, collectiveWaitNs: 0, arrivalLagNs: null };
  });
  const comm = cells.map((c) => c.communicationNs);
  const commMin = Math.min(...comm);
  for (const c of cells) c.collectiveWaitNs = c.communicationNs - commMin;
  const busy = cells.map((c) => c.gpuBusyNs);
  // Arrival lag, when every rank's collectives of this iteration can be matched one to one.
  let collectives: number | null = null;
  if (offsets) {
    collectives = setArrivalLags(ranks, rowsOf, i, offsets, cells);
    if (collectives == null && comm.some((x) => x > 0)) flagged.unmatched.push(iter);
  }
  const { s, basis } = straggler(cells, collectives != null);
  if (basis === 'arrival' && cells[s].collectiveWaitNs !== 0) flagged.unexplained.push(iter);
  const waits = cells.map((c) => c.collectiveWaitNs);
  return {
    iter,
    ranks: cells,
    gpuBusyMinNs: Math.min(...busy),
    gpuBusyMaxNs: Math.max(...busy),
    gpuBusySpreadNs: Math.max(...busy) - Math.min(...busy),
    straggler: cells[s].rank,
    stragglerBasis: basis,
    communicationMinNs: commMin,
    communicationMaxNs: Math.max(...comm),
    maxCollectiveWaitNs: Math.max(...waits),
    totalCollectiveWaitNs: waits.reduce((a, b) => a + b, 0),
    collectives,
  };
}

/**
 * Each cell's arrival lag: over the iteration's collectives, matched by order, the sum of the
 * rank's start (on the aligned clock) minus the earliest rank's. Returns the collectives matched,
 * or null (lags left null) when the ranks have none or differ in their number.
 */
function setArrivalLags(ranks: readonly RankedFigures[], rowsOf: number[][], i: number, offsets: number[], cells: RankCell[]): number | null {
  const colls = ranks.map((r, j) => collectivesOf(r.figures, rowsOf[j][i])!);
  const n = colls[0].s.length;
  if (!(n > 0 && colls.every((c) => c.s.length === n))) return null;
  const lag = new Float64Array(ranks.length);
  for (let k = 0; k < n; k++) {
    let first = Infinity;
    for (let j = 0; j < ranks.length; j++) first = Math.min(first, colls[j].s[k] + offsets[j]);
    for (let j = 0; j < ranks.length; j++) lag[j] += colls[j].s[k] + offsets[j] - first;
  }
  cells.forEach((c, j) => (c.arrivalLagNs = Math.round(lag[j])));
  return n;
}

/**
 * The cell of the rank the others waited for, and on what basis: the latest arrival when the
 * collectives were matched (ties: least collective time, then lowest rank), else the least
 * collective time, else (no collective) the most compute.
 */
function straggler(cells: readonly RankCell[], matched: boolean): { s: number; basis: StragglerBasis } {
  let s = 0;
  if (matched) {
    for (let j = 1; j < cells.length; j++) {
      const a = cells[j].arrivalLagNs!;
      const b = cells[s].arrivalLagNs!;
      if (a > b || (a === b && cells[j].communicationNs < cells[s].communicationNs)) s = j;
    }
    return { s, basis: 'arrival' };
  }
  if (cells.some((c) => c.communicationNs > 0)) {
    for (let j = 1; j < cells.length; j++) if (cells[j].communicationNs < cells[s].communicationNs) s = j;
    return { s, basis: 'collective-time' };
  }
  for (let j = 1; j < cells.length; j++) if (cells[j].computeNs > cells[s].computeNs) s = j;
  return { s, basis: 'compute' };
}

/** Per rank, its means over the aligned iterations and the iterations it straggled in. */
function rankTotals(ranks: readonly RankedFigures[], iterations: readonly CrossRankIteration[]): RankTotals[] {
  return ranks.map(({ rank, figures }, j) => {
    const n = iterations.length || 1;
    const sum = (f: (c: RankCell) => number) => iterations.reduce((a, it) => a + f(it.ranks[j]), 0);
    const wait = sum((c) => c.collectiveWaitNs);
    return {
      rank,
      file: figures.file,
      pid: figures.pid,
      source: figures.source,
      iterations: iterations.length,
      meanGpuBusyNs: sum((c) => c.gpuBusyNs) / n,
      meanCommunicationNs: sum((c) => c.communicationNs) / n,
      meanComputeNs: sum((c) => c.computeNs) / n,
      meanCollectiveWaitNs: wait / n,
      totalCollectiveWaitNs: wait,
      stragglerIterations: iterations.filter((it) => it.straggler === rank).length,
    };
  });
}
