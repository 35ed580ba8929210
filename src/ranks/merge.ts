import { readSummaryFile } from '../summary/loadRun.js';
import type { RunSummary } from '../summary/runSummary.js';
import { crossRankView, type CrossRankView } from './crossRank.js';
import { identifyRanks } from './identify.js';
import { COMMUNICATION_CATEGORY, rankFiguresFromSummary } from './rankFigures.js';

export interface MergeOptions {
  /** Category holding the collectives (default `communication`). */
  communicationCategory?: string;
}

/**
 * The reduce step of the map/reduce over ranks: per-rank summaries (`iterscope summarize`, run
 * where each export lives) combined into the cross-rank view. Summaries carry per-iteration busy,
 * kernel and category time but no timestamps, so the straggler is inferred from collective time
 * (`stragglerBasis: 'collective-time'`) and `arrivalLagNs` is null; every other figure equals the
 * view built from the exports themselves. Ranks: `rank<N>` in the summary's file name, else in
 * the export it was made from (`run.file`), else the input order.
 */
export function mergeSummaries(inputs: readonly { file: string; summary: RunSummary }[], opts: MergeOptions = {}): CrossRankView {
  const category = opts.communicationCategory ?? COMMUNICATION_CATEGORY;
  const ids = identifyRanks(
    inputs.map((i) => i.file),
    inputs.map((i) => i.summary.run?.file ?? null),
  );
  const view = crossRankView(
    ids.inputs.map(({ rank }, i) => ({ rank, figures: rankFiguresFromSummary(inputs[i].summary, inputs[i].file, category) })),
    { rankSource: ids.source },
  );
  view.notes.unshift(ids.note);
  const missing = inputs.filter((i) => !i.summary.categories.includes(category)).map((i) => i.file);
  if (missing.length) view.notes.push(`no '${category}' category in ${missing.join(', ')}: collective time is 0 there`);
  return view;
}

/** Reads summary files (schema-checked; a bad file is a one-line error naming it) and merges them. */
export function mergeSummaryFiles(files: readonly string[], opts: MergeOptions = {}): CrossRankView {
  return mergeSummaries(files.map((file) => ({ file, summary: readSummaryFile(file) })), opts);
}
