import type { Command } from 'commander';
import { parseIterationLogFile } from '../../logs/parse.js';
import { metricsForExport, parseMetricsRequest, type MetricsCommandResult } from '../../metrics/metricsForExport.js';
import { metricsTable } from '../../../reports/metricsReport.js';
import { emit, note, type OutputOptions } from '../output.js';
import { withOutputOptions, collect } from './common.js';
import { expandExportArgs, tablesAcrossExports } from './ranks.js';

interface MetricsOptions extends OutputOptions {
  iters?: string;
  log?: string[];
  gpu?: string;
  metric?: string[];
  iterationRange?: string;
  firstIter?: string;
  profileRange?: string;
}



export type { MetricsCommandResult };

/** The `metrics` command's work on one export, without printing (tests call it too). */
export function runMetrics(file: string, opts: Omit<MetricsOptions, keyof OutputOptions>): MetricsCommandResult {
  const { log, ...request } = opts;
  return metricsForExport(file, { ...request, logs: (log ?? []).map(parseIterationLogFile) });
}

export function registerMetrics(program: Command): void {
  withOutputOptions(
    program
      .command('metrics <exports...>')
      .description('GPU metrics (nsys --gpu-metrics-devices): time-weighted mean, p50, p90, min, max of every metric over the capture or iterations A..B; several exports: one table with a Rank column')
      .option('--iters <A-B>', 'only the windows of these iterations (A-B, A, or a list: 3-5,9)')
      .option('--log <file>', 'iteration log, to number iterations like `iterations` does; repeatable', collect)
      .option('--gpu <id>', 'only this GPU (TARGET_INFO_GPU id; default: every sampled GPU)')
      .option('--metric <name>', "only this metric: nsys name or its base ('SMs Active'); repeatable", collect)
      .option('--iteration-range <name|/regex/>', 'NVTX range that marks one iteration (with --iters)')
      .option('--first-iter <n>', 'number unnumbered iteration ranges from N (with --iters)')
      .option('--profile-range <A-B>', 'TLLM_PROFILE_START_STOP value, to number unnumbered iteration ranges (with --iters)'),
  ).action(async (inputs: string[], opts: MetricsOptions) => {
    const files = expandExportArgs(inputs);
    if (files.length > 1) {
      const { log, format: _f, output: _o, ...request } = opts;
      parseMetricsRequest(request); // usage errors before any worker starts
      return tablesAcrossExports(files, 'metrics', { logs: (log ?? []).map(parseIterationLogFile), metrics: request }, opts, (r) => [{ ...metricsTable(r), notes: r.notes }]);
    }
    const result = runMetrics(files[0], opts);
    for (const n of result.notes) note(n);
    emit(opts, [{ ...metricsTable(result), notes: [] }], result);
  });
}
