import type { Command } from 'commander';
import { withExport } from '../../export/openExport.js';
import { analyzeIterations } from '../../iterations/analyze.js';
import { summarizeByPhase } from '../../iterations/summary.js';
import { addIdleCauses } from '../../iterations/idleCauses.js';
import { loadGpuOpColumns } from '../../analysis/gpuOpColumns.js';
import { loadApiCallColumns } from '../../analysis/apiCallColumns.js';
import { addGpuMetrics, addPhaseMetrics } from '../../iterations/gpuMetrics.js';
import { parseIterationRangeSpec } from '../../iterations/rangeSpec.js';
import { parseIterationLogFile } from '../../logs/parse.js';
import { defaultCategoryClassifier, DEFAULT_CATEGORY_RULES, loadCategoryRules } from '../../categories/rules.js';
import { UsageError } from '../../errors.js';
import { categoryRulesTable, iterationsTable, phaseSummaryTable } from '../../../reports/iterationsReport.js';
import { emit, note, type OutputOptions } from '../output.js';
import { withOutputOptions, collect, parseNonNegativeInt } from './common.js';
import { expandExportArgs, iterationsAcrossExports } from './ranks.js';
import { progress } from '../../ranks/progress.js';
import { resolveLogTimeZone } from '../../iterations/logTimestampWindows.js';
import { analyzeAtenOps } from '../../kineto/atenOps.js';
import { attachTorchTrace } from '../../kineto/attachTorchTrace.js';
import { hostSideTable } from '../../../reports/hostSideReport.js';

interface IterationsOptions extends OutputOptions {
  log?: string[];
  summary?: boolean;
  iterationRange?: string;
  firstIter?: string;
  profileRange?: string;
  categories?: string;
  idleCauses?: boolean;
  logTz?: string;
  torchTrace?: string;
}



export function registerIterations(program: Command): void {
  withOutputOptions(
    program
      .command('iterations <exports...>')
      .description('per executor iteration: window, GPU busy/idle, kernel time by category, joined iteration-log record')
      .option('--log <file>', 'iteration log (trtllm-bench --iteration_log, --log_iteration_data, IterationStats JSON, PyTorch executor log); repeatable', collect)
      .option('--summary', 'aggregate by phase (context-only, mixed, generation-only)')
      .option('--iteration-range <name|/regex/>', 'NVTX range that marks one iteration: exact text, or /regex/ (a first capture group of digits numbers it); default: [Executor] _forward_step, else TrtGptModelInflightBatching::forwardAsync')
      .option('--first-iter <n>', 'number unnumbered iteration ranges from N')
      .option('--profile-range <A-B>', 'TLLM_PROFILE_START_STOP value, to number unnumbered iteration ranges')
      .option('--categories <rules.json>', 'kernel category rules replacing the default table: [{"category","pattern"}] in order')
      .option('--no-idle-causes', 'skip the idle-gap cause analysis (idleByCauseNs)')
      .option('--log-tz <zone>', "time zone the logs' timestamps were written in, when they delimit iterations (no NVTX marker, e.g. a PyTorch profiler trace): UTC (default), local, an IANA zone or +HH:MM")
      .option('--torch-trace <file>', 'PyTorch profiler trace (TLLM_TORCH_PROFILE_TRACE) of the same run: aten-op CPU time per iteration, the op each launch call was made in'),
  ).action(async (inputs: string[], opts: IterationsOptions) => {
    // Several exports (or a directory / quoted glob): one worker thread per export, a Rank column.
    const files = expandExportArgs(inputs);
    if (files.length > 1) return iterationsAcrossExports(files, opts);
    const file = files[0];
    const rangeSpec = opts.iterationRange !== undefined ? parseIterationRangeSpec(opts.iterationRange) : undefined;
    const firstIter = opts.firstIter !== undefined ? parseNonNegativeInt(opts.firstIter, '--first-iter') : undefined;
    const classifier = opts.categories ? loadCategoryRules(opts.categories) : defaultCategoryClassifier();
    const logs = (opts.log ?? []).map(parseIterationLogFile);
    const logTz = opts.logTz !== undefined ? resolveLogTimeZone(opts.logTz) : undefined;
    // A bar on stderr for big exports, only when stderr is a terminal.
    const bar = progress('iterscope: iterations', 5, { unit: 'steps' });
    const result = withExport(file, (h) => {
      try {
        // One scan of the GPU ops and of the API calls serves the attribution and the gap analysis.
        const gpuOps = loadGpuOpColumns(h);
        bar.tick(1, 'GPU ops read');
        const apiCalls = loadApiCallColumns(h);
        bar.tick(1, 'CUDA API calls read');
        const a = analyzeIterations(h, { logs, rangeSpec, firstIter, profileRange: opts.profileRange, classifier, gpuOps, apiCalls, logTz });
        bar.tick(1, 'iterations attributed');
        if (opts.idleCauses !== false) addIdleCauses(h, a, { gpuOps, apiCalls });
        bar.tick(1, 'idle causes found');
        const m = addGpuMetrics(h, a);
        bar.tick(1, 'GPU metrics read');
        // The host side from aten ops: a PyTorch profiler trace given as the input, or beside an export.
        const host = opts.torchTrace ? attachTorchTrace(h, opts.torchTrace, a.iterations, { gpuOps }) : h.hasTable('KINETO_CPU_OPS') ? analyzeAtenOps(h, a.iterations, { gpuOps }) : null;
        return { a, m, host };
      } finally {
        bar.done();
      }
    });
    const { a: analysis, m: metrics, host } = result;
    for (const n of analysis.coverage.notes) note(n);
    for (const n of host?.notes ?? []) note(n);
    const hostTables = host ? [{ ...hostSideTable(host.iterations), notes: [] }] : [];
    if (opts.summary) {
      const phases = summarizeByPhase(analysis.iterations, analysis.categories);
      addPhaseMetrics(analysis, phases, metrics);
      emit(opts, [phaseSummaryTable(phases, analysis.categories, analysis.metricNames)], { file: analysis.file, categories: analysis.categories, phases, coverage: analysis.coverage });
    } else {
      const table = iterationsTable(analysis);
      emit(opts, [{ ...table, notes: [] }, ...hostTables], host ? { ...analysis, hostSide: host } : analysis);
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
