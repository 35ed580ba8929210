import { crossRankView, type CrossRankView } from './crossRank.js';
import { identifyRanks, type RankSource } from './identify.js';
import { analyzeMany, type ManyOptions } from './pool.js';
import type { TaskOptions } from './tasks.js';

/**
 * The cross-rank view from one export per rank, each analysed in a worker thread. Ranks come from
 * the file names (`rank<N>`), else the input order; an export holding several ranked processes
 * (one nsys capture of several local ranks) contributes one rank per process, and then ranks are
 * numbered in input order, process by process.
 */
export async function crossRankFromExports(files: readonly string[], opts: TaskOptions & ManyOptions = {}): Promise<CrossRankView> {
  const ids = identifyRanks(files);
  const perFile = await analyzeMany(files, 'rankFigures', opts);
  let source: RankSource = ids.source;
  let note = ids.note;
  const multi = perFile.some((f) => f.length > 1);
  const ranked = multi
    ? perFile.flat().map((figures, rank) => ({ rank, figures }))
    : perFile.flatMap((f, i) => f.map((figures) => ({ rank: ids.inputs[i].rank, figures })));
  if (multi) {
    source = 'input-order';
    note = `an export holds several processes with iterations: ranks are numbered in input order, process by process (PID order)`;
  }
  const view = crossRankView(ranked, { rankSource: source });
  view.notes.unshift(note);
  return view;
}
