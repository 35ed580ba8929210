import type { Command } from 'commander';
import { metricsForExport, parseMetricsRequest, type MetricsCommandResult, type MetricsRequest } from '../../pipeline/metricsForExport.js';
import { metricsTable } from '../../../reports/metricsReport.js';
import { emit, note, type OutputOptions } from '../output.js';
import { withOutputOptions, collect, logOption, logsOf, withSelectionOptions, type LogOptions } from './options.js';
import { expandExportArgs, tablesAcrossExports } from './ranks.js';

/** The options `iterscope metrics` parses: the library's request, with `--log` files unparsed. */
interface MetricsOptions extends OutputOptions, LogOptions, Omit<MetricsRequest, 'logs'> {}

export type { MetricsCommandResult };

/** The `metrics` command's work on one export, without printing (tests call it too). */
export function runMetrics(file: string, opts: Omit<MetricsOptions, keyof OutputOptions>): MetricsCommandResult {
  const { log: _l, ...request } = opts;
  return metricsForExport(file, { ...request, logs: logsOf(opts) });
}

export function registerMetrics(program: Command): void {
  withOutputOptions(
    withSelectionOptions(
      program
        .command('metrics <exports...>')
        .description('GPU metrics (nsys --gpu-metrics-devices): time-weighted mean, p50, p90, min, max of every metric over the capture or iterations A..B; several exports: one table with a Rank column')
        .option('--iters <A-B>', 'only the windows of these iterations (A-B, A, or a list: 3-5,9)')
        .addOption(logOption('iteration log, to number iterations like `iterations` does; repeatable'))
        .option('--gpu <id>', 'only this GPU (TARGET_INFO_GPU id; default: every sampled GPU)')
        .option('--metric <name>', "only this metric: nsys name or its base ('SMs Active'); repeatable", collect),
      'with --iters',
    ),
  ).action(async (inputs: string[], opts: MetricsOptions) => {
    const files = expandExportArgs(inputs);
    if (files.length > 1) {
      const { log: _l, format: _f, output: _o, ...request } = opts;
      parseMetricsRequest(request); // usage errors before any worker starts
      return tablesAcrossExports(files, 'metrics', { logs: logsOf(opts), metrics: request }, opts, (r) => [{ ...metricsTable(r), notes: r.notes }]);
    }
    const result = runMetrics(files[0], opts);
    for (const n of result.notes) note(n);
    emit(opts, [{ ...metricsTable(result), notes: [] }], result);
  });
}
