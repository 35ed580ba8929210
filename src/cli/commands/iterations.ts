import type { Command } from 'commander';
import { budgetLabel } from '../../memoryBudget.js';
import { withExport } from '../../export/openExport.js';
import { DEFAULT_CATEGORY_RULES, loadCategoryRules } from '../../categories/rules.js';
import { analyzeExport } from '../../pipeline/analyzeExport.js';
import type { AnalysisPart } from '../../pipeline/request.js';
import { progress } from '../../progress.js';
import { categoryRulesTable, iterationsTable, noIterationsTable, noPhasesTable, phaseSummaryTable } from '../../../reports/iterationsReport.js';
import { EmptyCaptureError, UsageError } from '../../errors.js';
import { stackRankTables } from '../../../reports/ranksReport.js';
import { hostSideTable } from '../../../reports/hostSideReport.js';
import { emit, note, type OutputOptions } from '../output.js';
import { withOutputOptions, withSelectionOptions, selectionOf, logsOf, categoryRulesOf, logOption, torchTraceOption, withLayerOptions, layerOptionsOf, type CategoryOptions, type IterationCommandOptions, type LayerCommandOptions, type TorchTraceOptions } from './options.js';
import { layerSpreadTable, phaseLayersTable, stepLayersWideTable } from '../../../reports/layersReport.js';
import { acrossExports, expandExportArgs } from './ranks.js';

interface IterationsOptions extends OutputOptions, IterationCommandOptions, TorchTraceOptions, CategoryOptions, LayerCommandOptions {
  summary?: boolean;
  idleCauses?: boolean;
  layers?: boolean;
}

export function registerIterations(program: Command): void {
  withOutputOptions(
    withLayerOptions(withSelectionOptions(
      program
        .command('iterations <exports...>')
        .description('per executor iteration: window, GPU busy/idle, kernel time by category, joined iteration-log record')
        .addOption(logOption('iteration log (trtllm-bench --iteration_log, --log_iteration_data, IterationStats JSON, PyTorch executor log, vLLM iteration details, SGLang batch lines); repeatable'))
        .option('--summary', 'aggregate by phase (context-only, mixed, generation-only)'),
    ))
      .option('--categories <rules.json>', 'kernel category rules replacing the default table: [{"category","pattern"}] in order')
      .option('--no-idle-causes', 'skip the idle-gap cause analysis (idleByCauseNs)')
      .addOption(torchTraceOption('PyTorch profiler trace (TLLM_TORCH_PROFILE_TRACE) of the same run: aten-op CPU time per iteration, the op each launch call was made in'))
      .option('--layers', 'also split each step by decoder layer and module kind (tables per step and layer, or per phase and layer with --summary; one export)'),
  ).action(async (inputs: string[], opts: IterationsOptions) => {
    const files = expandExportArgs(inputs);
    const request = { logs: logsOf(opts), selection: selectionOf(opts), categoryRules: categoryRulesOf(opts), torchTrace: opts.torchTrace, ...(opts.layers ? { layers: layerOptionsOf(opts) } : {}) };
    const parts: AnalysisPart[] = ['iterations', ...(opts.idleCauses === false ? [] : (['gaps'] as const)), 'metrics', 'pytorchHost', ...(opts.summary ? (['phases'] as const) : []), ...(opts.layers ? (['layers'] as const) : [])];

    // Several exports (or a directory / quoted glob): one worker thread per export, a Rank column.
    if (files.length > 1 && opts.layers) throw new UsageError('--layers takes one export (run `iterscope layers` on each)');
    if (files.length > 1) {
      // The per-phase summary only for --summary: every export's analysis skips it otherwise.
      const many = await acrossExports(files, 'iterations', { ...request, idleCauses: opts.idleCauses, phases: opts.summary === true });
      note(many.rankNote);
      for (const r of many.ranks) for (const n of r.result.analysis.coverage.notes) note(`rank ${r.rank}: ${n}`);
      if (opts.summary) {
        const tables = stackRankTables(
          many.ranks.map((r) => ({ rank: r.rank, tables: [phaseSummaryTable(r.result.phases, r.result.analysis.categories, r.result.analysis.metricNames)] })),
          [`Iterations by phase, ${many.ranks.length} ranks`],
        );
        const ranks = many.ranks.map((r) => ({ rank: r.rank, file: r.file, categories: r.result.analysis.categories, phases: r.result.phases, coverage: r.result.analysis.coverage }));
        return emit(opts, tables, { rankSource: many.rankSource, ranks });
      }
      const tables = stackRankTables(
        many.ranks.map((r) => ({ rank: r.rank, tables: [{ ...iterationsTable(r.result.analysis), notes: [] }] })),
        [`Iterations, ${many.ranks.length} ranks`],
      );
      return emit(opts, tables, { rankSource: many.rankSource, ranks: many.ranks.map((r) => ({ rank: r.rank, ...r.result.analysis, file: r.file })) });
    }

    // A bar on stderr for big exports, only when stderr is a terminal: the pipeline's timed steps (its parts', the loader's reads), counted as it goes.
    const bar = progress(`iterscope: iterations (${budgetLabel()})`, 0, { unit: 'steps' });
    let a;
    try {
      a = withExport(files[0], (h) => {
        try {
          return analyzeExport(h, { ...request, parts, requireIterations: true }, (step, count) => bar.update(count.done, `${step} done`, count.total));
        } finally {
          bar.done();
        }
      });
    } catch (err) {
      // Nothing ran on the GPU: an empty result and one line saying why (exit 0), as `kernels` and `gaps` do.
      if (!(err instanceof EmptyCaptureError)) throw err;
      note(`no GPU work was recorded: ${err.reason}`);
      return emit(opts, [opts.summary ? noPhasesTable() : noIterationsTable(files[0])], { file: files[0], iterations: [], noGpuWork: err.reason });
    }
    const analysis = a.iterations!;
    const host = a.pytorchHost;
    for (const n of analysis.coverage.notes) note(n);
    for (const n of host?.notes ?? []) note(n);
    // --layers: the layer split beside (tables after the command's own, `layers` in JSON).
    const layers = a.layers;
    for (const n of layers?.notes ?? []) note(n);
    const layerJson = layers ? { layers } : {};
    if (opts.summary) {
      const layerTables = layers ? [{ ...phaseLayersTable(layers), notes: [] }, layerSpreadTable(layers)] : [];
      emit(opts, [phaseSummaryTable(a.phases, analysis.categories, analysis.metricNames), ...layerTables], { file: analysis.file, categories: analysis.categories, phases: a.phases, coverage: analysis.coverage, ...layerJson });
    } else {
      // The host side from aten ops: the input is a PyTorch profiler trace, or one was given beside an export.
      const hostTables = host ? [{ ...hostSideTable(host.iterations), notes: [] }] : [];
      const layerTables = layers ? [stepLayersWideTable(layers)] : [];
      emit(opts, [{ ...iterationsTable(analysis), notes: [] }, ...hostTables, ...layerTables], host || layers ? { ...analysis, ...(host ? { hostSide: host } : {}), ...layerJson } : analysis);
    }
  });
}

export function registerCategories(program: Command): void {
  withOutputOptions(
    program
      .command('categories')
      .description('print the kernel-category table in force (first matching rule wins)')
      .option('--categories <rules.json>', 'show this rules file instead of the default table (validates it)'),
  ).action((opts: OutputOptions & { categories?: string }) => {
    const rules = opts.categories ? loadCategoryRules(opts.categories).rules : DEFAULT_CATEGORY_RULES;
    emit(opts, [categoryRulesTable(rules)], rules);
  });
}
