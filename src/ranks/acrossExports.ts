import type { GapAnalysis, GapRow } from '../gaps/analyzeGaps.js';
import { identifyRanks, type RankSource } from './identify.js';
import { analyzeMany, type ManyOptions } from './pool.js';
import type { TaskName, TaskOptions, TaskResults } from './tasks.js';

/** One export's result, with the rank it stands for. */
export interface RankResult<T> {
  rank: number;
  file: string;
  result: T;
}

/** A per-export task run on several exports (one per rank). */
export interface ResultsAcrossExports<T> {
  rankSource: RankSource;
  /** How the ranks were numbered, for the notes. */
  rankNote: string;
  ranks: RankResult<T>[];
}

/**
 * Runs `task` on every export, each in a worker thread (`analyzeMany`), and pairs the results with
 * the ranks the file names give (else the input order).
 */
export async function analyzeAcrossExports<T extends TaskName>(files: readonly string[], task: T, opts: TaskOptions & ManyOptions = {}): Promise<ResultsAcrossExports<TaskResults[T]>> {
  const ids = identifyRanks(files);
  const results = await analyzeMany(files, task, opts);
  return { rankSource: ids.source, rankNote: ids.note, ranks: ids.inputs.map(({ rank, file }, i) => ({ rank, file, result: results[i] })) };
}

/** A reported gap of one rank. */
export interface RankGap {
  rank: number;
  gap: GapRow;
}

/**
 * The longest gaps over every rank, longest first (ties: lower rank, then earlier start); `top` 0
 * keeps all.
 */
export function longestGapsAcrossRanks(ranks: readonly RankResult<GapAnalysis>[], top: number): RankGap[] {
  const all = ranks.flatMap((r) => r.result.gaps.map((gap) => ({ rank: r.rank, gap })));
  all.sort((a, b) => b.gap.durationNs - a.gap.durationNs || a.rank - b.rank || a.gap.startNs - b.gap.startNs);
  return top > 0 ? all.slice(0, top) : all;
}
