import { resolveNsysReport } from '../../export/nsysRep.js';
import type { Command } from 'commander';
import type { GapsOptions } from './gaps.js';
import { loadCategoryRules } from '../../categories/rules.js';
import { UsageError } from '../../errors.js';
import { parseIterationRangeSpec } from '../../iterations/rangeSpec.js';
import { summarizeByPhase } from '../../iterations/summary.js';
import { addPhaseMetrics } from '../../iterations/gpuMetrics.js';
import { parseIterationLogFile } from '../../logs/parse.js';
import { expandInputs } from '../../ranks/expandInputs.js';
import { identifyRanks } from '../../ranks/identify.js';
import { analyzeMany, type ManyOptions } from '../../ranks/pool.js';
import { progress } from '../../ranks/progress.js';
import { crossRankFromExports } from '../../ranks/ranksFromExports.js';
import { mergeSummaryFiles } from '../../ranks/merge.js';
import { COMMUNICATION_CATEGORY } from '../../ranks/rankFigures.js';
import type { TaskName, TaskOptions, TaskResults } from '../../ranks/tasks.js';
import type { DataTable } from '../../../reports/table.js';
import { crossRankTables, stackRankTables } from '../../../reports/ranksReport.js';
import { iterationsTable, phaseSummaryTable } from '../../../reports/iterationsReport.js';
import { gapsTables, topGapsTable } from '../../../reports/gapsReport.js';
import { formatNs } from '../../../reports/units.js';
import { emit, note, type OutputOptions } from '../output.js';
import { withOutputOptions, collect, nonNegativeInt } from './common.js';



function positiveInt(option: string) {
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
function jobsOption(jobs: number | undefined): number | undefined {
  if (jobs !== undefined) return jobs;
  const env = process.env.ITERSCOPE_JOBS;
  return env && /^\d+$/.test(env) && Number(env) > 0 ? Number(env) : undefined;
}

/** analyzeMany with a progress bar on stderr (terminals only). */
function withProgress(n: number): ManyOptions & { finish: () => void } {
  const bar = progress('iterscope: analysing', n, { unit: 'exports' });
  return { onProgress: (done, _total, file) => bar.update(done, file), finish: () => bar.done() };
}

async function runMany<T extends Parameters<typeof analyzeMany>[1]>(files: string[], task: T, opts: TaskOptions, jobs?: number) {
  const p = withProgress(files.length);
  try {
    return await analyzeMany(files, task, { ...opts, jobs: jobsOption(jobs), onProgress: p.onProgress });
  } finally {
    p.finish();
  }
}

// ---------------------------------------------------------------------------------------------
// iterscope ranks / merge

interface RanksOptions extends OutputOptions {
  iterationRange?: string;
  firstIter?: number;
  profileRange?: string;
  categories?: string;
  commCategory?: string;
  jobs?: number;
  detail?: boolean;
}

export function registerRanks(program: Command): void {
  withOutputOptions(
    program
      .command('ranks <exports...>')
      .description('cross-rank view, one export per rank (files, directories, quoted globs): per iteration GPU busy spread, the straggler, collective and compute time, the wait inside collectives')
      .option('--iteration-range <name|/regex/>', 'NVTX range that marks one iteration (default: [Executor] _forward_step, else TrtGptModelInflightBatching::forwardAsync)')
      .option('--first-iter <n>', 'number unnumbered iteration ranges from N', nonNegativeInt('--first-iter'))
      .option('--profile-range <A-B>', 'TLLM_PROFILE_START_STOP value, to number unnumbered iteration ranges')
      .option('--categories <rules.json>', 'kernel category rules replacing the default table')
      .option('--comm-category <name>', 'category of the collective kernels', COMMUNICATION_CATEGORY)
      .option('--jobs <n>', 'worker threads (default: ITERSCOPE_JOBS, else one per core)', positiveInt('--jobs'))
      .option('--detail', 'add a table with one row per iteration and rank'),
  ).action(async (inputs: string[], opts: RanksOptions) => {
    if (opts.iterationRange !== undefined) parseIterationRangeSpec(opts.iterationRange); // usage errors before any work
    const categoryRules = opts.categories ? [...loadCategoryRules(opts.categories).rules] : undefined;
    const files = expandExportArgs(inputs);
    if (files.length < 2) note('one export: the cross-rank view needs one export per rank (pass them all, a directory or a quoted glob)');
    const p = withProgress(files.length);
    let view;
    try {
      view = await crossRankFromExports(files, {
        iterationRange: opts.iterationRange,
        firstIter: opts.firstIter,
        profileRange: opts.profileRange,
        categoryRules,
        communicationCategory: opts.commCategory,
        jobs: jobsOption(opts.jobs),
        onProgress: p.onProgress,
      });
    } finally {
      p.finish();
    }
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
// Several exports for `iterations` and `gaps` (called from their commands when given more than one)

/** The options `iterscope iterations` parses (same names). */
export interface IterationsManyOptions extends OutputOptions {
  log?: string[];
  summary?: boolean;
  iterationRange?: string;
  firstIter?: string | number;
  profileRange?: string;
  categories?: string;
  idleCauses?: boolean;
  jobs?: number;
}

function firstIterOption(v: string | number | undefined): number | undefined {
  if (v === undefined || typeof v === 'number') return v;
  return nonNegativeInt('--first-iter')(v);
}

/**
 * `iterscope iterations a.sqlite b.sqlite ...`: each export analysed in a worker thread, then one
 * table per kind with a Rank column (the logs given with --log apply to every rank). JSON:
 * `{ rankSource, ranks: [{ rank, file, ...analysis }] }`.
 */
export async function iterationsAcrossExports(files: string[], opts: IterationsManyOptions): Promise<void> {
  if (opts.iterationRange !== undefined) parseIterationRangeSpec(opts.iterationRange);
  const firstIter = firstIterOption(opts.firstIter);
  const categoryRules = opts.categories ? [...loadCategoryRules(opts.categories).rules] : undefined;
  const logs = (opts.log ?? []).map(parseIterationLogFile);
  const ids = identifyRanks(files);
  note(ids.note);
  const results = await runMany(files, 'iterations', { logs, iterationRange: opts.iterationRange, firstIter, profileRange: opts.profileRange, categoryRules, idleCauses: opts.idleCauses }, opts.jobs);
  const ranks = ids.inputs.map(({ rank, file }, i) => ({ rank, file, ...results[i] }));
  for (const r of ranks) for (const n of r.analysis.coverage.notes) note(`rank ${r.rank}: ${n}`);
  if (opts.summary) {
    const per = ranks.map((r) => {
      const phases = summarizeByPhase(r.analysis.iterations, r.analysis.categories);
      addPhaseMetrics(r.analysis, phases, r.metrics);
      return { rank: r.rank, file: r.file, categories: r.analysis.categories, phases, coverage: r.analysis.coverage, metricNames: r.analysis.metricNames };
    });
    const tables = stackRankTables(per.map((p) => ({ rank: p.rank, tables: [phaseSummaryTable(p.phases, p.categories, p.metricNames)] })), [`Iterations by phase, ${per.length} ranks`]);
    emit(opts, tables, { rankSource: ids.source, ranks: per.map(({ metricNames: _m, ...rest }) => rest) });
  } else {
    const tables = stackRankTables(
      ranks.map((r) => ({ rank: r.rank, tables: [{ ...iterationsTable(r.analysis), notes: [] }] })),
      [`Iterations, ${ranks.length} ranks`],
    );
    emit(opts, tables, { rankSource: ids.source, ranks: ranks.map((r) => ({ rank: r.rank, ...r.analysis, file: r.file })) });
  }
}

/** The options `iterscope gaps` parses, plus the worker count. */
export interface GapsManyOptions extends GapsOptions {
  jobs?: number;
}

/**
 * `iterscope gaps a.sqlite b.sqlite ...`: each export in a worker thread; the top-gaps table is the
 * longest `--top` gaps over all ranks, the other tables are stacked with a Rank column. JSON:
 * `{ rankSource, ranks: [{ rank, file, ...gapAnalysis }] }`.
 */
export async function gapsAcrossExports(files: string[], opts: GapsManyOptions): Promise<void> {
  if (opts.iterationRange !== undefined) parseIterationRangeSpec(opts.iterationRange);
  const logs = (opts.log ?? []).map(parseIterationLogFile);
  const ids = identifyRanks(files);
  note(ids.note);
  const results = await runMany(files, 'gaps', { logs, minGapNs: opts.minGap, deviceId: opts.device, iterationRange: opts.iterationRange, firstIter: opts.firstIter, profileRange: opts.profileRange }, opts.jobs);
  const ranks = ids.inputs.map(({ rank, file }, i) => ({ rank, file, analysis: results[i] }));
  for (const r of ranks) for (const n of r.analysis.notes) note(`rank ${r.rank}: ${n}`);
  const [top, ...rest] = stackRankTables(ranks.map((r) => ({ rank: r.rank, tables: [topGapsTable(r.analysis, 0), ...gapsTables(r.analysis, opts.top).slice(1)] })));
  const total = top.rows.length;
  top.rows.sort((a, b) => Number(b.durationNs) - Number(a.durationNs) || Number(a.__rank) - Number(b.__rank) || Number(a.startNs) - Number(b.startNs));
  if (opts.top > 0) top.rows.length = Math.min(top.rows.length, opts.top);
  top.title = `Top ${top.rows.length} of ${total} GPU idle gaps >= ${formatNs(opts.minGap)} over ${ranks.length} ranks`;
  for (const t of rest) t.title = `${t.title} (per rank)`;
  emit(opts, [top, ...rest], { rankSource: ids.source, ranks: ranks.map((r) => ({ rank: r.rank, ...r.analysis, file: r.file })) });
}

// ---------------------------------------------------------------------------------------------
// Several exports for the per-export summaries (`kernels`, `nvtx [--gpu]`, `metrics`)

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
  const ids = identifyRanks(files);
  note(ids.note);
  const results = await runMany(files, task, taskOpts);
  const perRank = ids.inputs.map(({ rank }, i) => {
    const tables = tablesOf(results[i]);
    for (const t of tables) for (const n of t.notes ?? []) note(`rank ${rank}: ${n}`);
    return { rank, tables: tables.map((t) => ({ ...t, notes: [] })) };
  });
  const stacked = stackRankTables(perRank);
  for (const t of stacked) t.title = t.title ? `${t.title} (${files.length} ranks)` : undefined;
  emit(opts, stacked, { rankSource: ids.source, ranks: ids.inputs.map(({ rank, file }, i) => ({ rank, file, ...results[i] })) });
}
