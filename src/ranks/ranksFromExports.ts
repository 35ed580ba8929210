import { IterationError } from '../errors.js';
import { findFindings } from '../findings/findFindings.js';
import type { RankFindings } from '../findings/finding.js';
import { findingsInputOf, type ExportAnalysis, type ReportData } from '../pipeline/exportAnalysis.js';
import { crossRankView, type CrossRankView } from './crossRank.js';
import { identifyRanks, type RankSource } from './identify.js';
import { analyzeMany, type ManyOptions } from './pool.js';
import type { RankFigures } from './rankFigures.js';
import type { TaskOptions } from './tasks.js';

/**
 * The cross-rank view from one export per rank, each analysed in a worker thread. Ranks come from
 * the file names (`rank<N>`), else the input order; an export holding several ranked processes
 * (one nsys capture of several local ranks) contributes one rank per process, and then ranks are
 * numbered in input order, process by process.
 */
export async function crossRankFromExports(files: readonly string[], opts: TaskOptions & ManyOptions = {}): Promise<CrossRankView> {
  return crossRankFromFigures(files, await analyzeMany(files, 'rankFigures', opts)).view;
}

/** The cross-rank view from each export's figures (in input order), and the ranks each export holds in it. */
function crossRankFromFigures(files: readonly string[], perFile: readonly RankFigures[][]): { view: CrossRankView; ranksOfFile: number[][] } {
  const ids = identifyRanks(files);
  let source: RankSource = ids.source;
  let note = ids.note;
  const multi = perFile.some((f) => f.length > 1);
  let next = 0;
  const ranksOfFile = perFile.map((f, i) => f.map(() => (multi ? next++ : ids.inputs[i].rank)));
  const ranked = perFile.flatMap((f, i) => f.map((figures, k) => ({ rank: ranksOfFile[i][k], figures })));
  if (multi) {
    source = 'input-order';
    note = `an export holds several processes with iterations: ranks are numbered in input order, process by process (PID order)`;
  }
  const view = crossRankView(ranked, { rankSource: source });
  view.notes.unshift(note);
  return { view, ranksOfFile };
}

/**
 * `findings` and `report` over one export per rank: `first` is the first export's analysis (made
 * by the caller with its `findings` and `rankFigures`); the others are analysed in worker threads
 * for theirs. Returns the cross-rank view and each export's own findings, in input order (the
 * findings across ranks are the caller's: the first export's rules with the view).
 */
export async function findingsPerRank(
  files: readonly string[],
  first: ExportAnalysis,
  opts: TaskOptions & ManyOptions = {},
): Promise<{ crossRank: CrossRankView; ranks: RankFindings[] }> {
  // As the rankFigures task would have failed on it: the cross-rank view needs every rank's iterations.
  if (!first.rankFigures || !first.findings) throw new IterationError(first.iterationError ?? 'no iterations found', first.file);
  const others = await analyzeMany(files.slice(1), 'rankFindings', opts);
  const { view, ranksOfFile } = crossRankFromFigures(files, [first.rankFigures, ...others.map((o) => o.rankFigures)]);
  const ranks = [first.findings, ...others.map((o) => o.findings)].map(({ file, engine, basis, findings }, i) => ({ file, ranks: ranksOfFile[i], engine, basis, findings }));
  return { crossRank: view, ranks };
}

/**
 * The report over one export per rank: the first export's sections (`first`, its report analysis
 * with `rankFigures`), its findings read with the cross-rank view too (stragglers, collective
 * wait) and each rank's own findings beside them, and the cross-rank view.
 */
export type ReportAcrossRanks = ReportData & { crossRank?: CrossRankView | null };

/** `report` over one export per rank: a new report value from the first export's and the others' (see `findingsPerRank`). */
export async function reportAcrossRanks(files: readonly string[], first: ReportData, opts: TaskOptions & ManyOptions = {}): Promise<ReportAcrossRanks> {
  const perRank = await findingsPerRank(files, first, opts);
  const findings = { ...findFindings({ ...findingsInputOf(first)!, crossRank: perRank.crossRank }), ranks: perRank.ranks };
  return { ...first, findings, crossRank: perRank.crossRank };
}
