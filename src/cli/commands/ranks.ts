import { resolveNsysReport } from '../../export/nsysRep.js';
import { budgetLabel } from '../../memoryBudget.js';
import type { Command } from 'commander';
import { UsageError } from '../../errors.js';
import { analyzeAcrossExports, type ResultsAcrossExports } from '../../ranks/acrossExports.js';
import { expandInputs } from '../../ranks/expandInputs.js';
import { progress } from '../../progress.js';
import { crossRankFromExports } from '../../ranks/ranksFromExports.js';
import { mergeSummaryFiles } from '../../ranks/merge.js';
import { COMMUNICATION_CATEGORY } from '../../ranks/rankFigures.js';
import type { TaskName, TaskOptions, TaskResults } from '../../ranks/tasks.js';
import type { DataTable } from '../../../reports/table.js';
import { crossRankTables, stackRankTables } from '../../../reports/ranksReport.js';
import { emit, note, type OutputOptions } from '../output.js';
import { withOutputOptions, withSelectionOptions, selectionOf, categoryRulesOf, type CategoryOptions } from './options.js';
import type { IterationSelectionOptions } from '../../iterations/selection.js';

export function positiveInt(option: string) {
  return (value: string): number => {
    if (!/^\d+$/.test(value.trim()) || Number(value.trim()) < 1) throw new UsageError(`${option} expects a positive integer (got '${value}')`);
    return Number(value.trim());
  };
}

/** Export arguments: files, directories (their *.sqlite) and quoted globs (`'run/rank*.sqlite'`). */
export function expandExportArgs(inputs: readonly string[]): string[] {
  // .nsys-rep reports become their SQLite exports here, once, before any worker opens them.
  return expandInputs(inputs, { extensions: ['.sqlite'], what: 'nsys exports' }).map((f) => resolveNsysReport(f));
}

/** Worker threads for several exports: `--jobs`, else ITERSCOPE_JOBS, else one per core. */
export function jobsOption(jobs: number | undefined): number | undefined {
  if (jobs !== undefined) return jobs;
  const env = process.env.ITERSCOPE_JOBS;
  return env && /^\d+$/.test(env) && Number(env) > 0 ? Number(env) : undefined;
}

/** A progress bar on stderr (terminals only) while `fn` analyses `n` exports. */
export async function withProgressBar<T>(n: number, fn: (onProgress: (done: number, total: number, file: string) => void) => Promise<T>): Promise<T> {
  const bar = progress(`iterscope: analysing (${budgetLabel()})`, n, { unit: 'exports' });
  try {
    return await fn((done, _total, file) => bar.update(done, file));
  } finally {
    bar.done();
  }
}

/** `analyzeAcrossExports` with the CLI's worker count and a progress bar. */
export function acrossExports<T extends TaskName>(files: string[], task: T, opts: TaskOptions, jobs?: number): Promise<ResultsAcrossExports<TaskResults[T]>> {
  return withProgressBar(files.length, (onProgress) => analyzeAcrossExports(files, task, { ...opts, jobs: jobsOption(jobs), onProgress }));
}

// ---------------------------------------------------------------------------------------------
// iterscope ranks / merge

interface RanksOptions extends OutputOptions, IterationSelectionOptions, CategoryOptions {
  commCategory?: string;
  jobs?: number;
  detail?: boolean;
}

export function registerRanks(program: Command): void {
  withOutputOptions(
    withSelectionOptions(
      program
        .command('ranks <exports...>')
        .description('cross-rank view, one export per rank (files, directories, quoted globs): per iteration GPU busy spread, the straggler, collective and compute time, the wait inside collectives'),
    )
      .option('--categories <rules.json>', 'kernel category rules replacing the default table')
      .option('--comm-category <name>', 'category of the collective kernels', COMMUNICATION_CATEGORY)
      .option('--jobs <n>', 'worker threads (default: ITERSCOPE_JOBS, else one per core)', positiveInt('--jobs'))
      .option('--detail', 'add a table with one row per iteration and rank'),
  ).action(async (inputs: string[], opts: RanksOptions) => {
    const selection = selectionOf(opts); // usage errors before any work
    const categoryRules = categoryRulesOf(opts);
    const files = expandExportArgs(inputs);
    if (files.length < 2) note('one export: the cross-rank view needs one export per rank (pass them all, a directory or a quoted glob)');
    const view = await withProgressBar(files.length, (onProgress) =>
      crossRankFromExports(files, { selection, categoryRules, communicationCategory: opts.commCategory, jobs: jobsOption(opts.jobs), onProgress }),
    );
    for (const n of view.notes) note(n);
    emit(opts, crossRankTables(view, { detail: opts.detail }), view);
  });
}

export function registerMerge(program: Command): void {
  withOutputOptions(
    program
      .command('merge <summaries...>')
      .description('the cross-rank view from per-rank summary.json files (iterscope summarize, run where each export lives): the reduce step of a SLURM array or mpirun job')
      .option('--comm-category <name>', 'category of the collective kernels', COMMUNICATION_CATEGORY)
      .option('--detail', 'add a table with one row per iteration and rank'),
  ).action((inputs: string[], opts: OutputOptions & { commCategory?: string; detail?: boolean }) => {
    const files = expandInputs(inputs, { extensions: ['.json'], what: 'summary JSON files' });
    const view = mergeSummaryFiles(files, { communicationCategory: opts.commCategory });
    for (const n of view.notes) note(n);
    emit(opts, crossRankTables(view, { detail: opts.detail }), view);
  });
}

// ---------------------------------------------------------------------------------------------
// Several exports for the per-export summaries (`kernels`, `nvtx [--gpu]`, `info`, `metrics`)

/**
 * A per-export command on several exports: each export analysed in a worker thread by `task`,
 * its tables (`tablesOf`) stacked into one per kind with a Rank column, its notes on stderr
 * prefixed with the rank. JSON: `{ rankSource, ranks: [{ rank, file, ...result }] }`.
 */
export async function tablesAcrossExports<T extends TaskName>(
  files: string[],
  task: T,
  taskOpts: TaskOptions,
  opts: OutputOptions,
  tablesOf: (result: TaskResults[T]) => DataTable[],
): Promise<void> {
  const many = await acrossExports(files, task, taskOpts);
  note(many.rankNote);
  const perRank = many.ranks.map(({ rank, result }) => {
    const tables = tablesOf(result);
    for (const t of tables) for (const n of t.notes ?? []) note(`rank ${rank}: ${n}`);
    return { rank, tables: tables.map((t) => ({ ...t, notes: [] })) };
  });
  const stacked = stackRankTables(perRank);
  for (const t of stacked) t.title = t.title ? `${t.title} (${files.length} ranks)` : undefined;
  emit(opts, stacked, { rankSource: many.rankSource, ranks: many.ranks.map(({ rank, file, result }) => ({ rank, file, ...result })) });
}
