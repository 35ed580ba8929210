import type { Command } from 'commander';
import { withExport } from '../../export/openExport.js';
import { analyzeIterations, compactRanges } from '../../iterations/analyze.js';
import { parseIterationRangeSpec, parseProfileRanges } from '../../iterations/rangeSpec.js';
import { parseIterationLogFile } from '../../logs/parse.js';
import { readMetricCatalog } from '../../metrics/catalog.js';
import { metricsOverCapture, metricsOverIntervals, type MetricsSummary } from '../../metrics/distribution.js';
import { UsageError } from '../../errors.js';
import { metricsTable } from '../../../reports/metricsReport.js';
import { emit, note, type OutputOptions } from '../output.js';
import { withOutputOptions, collect, parseNonNegativeInt } from './common.js';

interface MetricsOptions extends OutputOptions {
  iters?: string;
  log?: string[];
  gpu?: string;
  metric?: string[];
  iterationRange?: string;
  firstIter?: string;
  profileRange?: string;
}



export interface MetricsCommandResult extends MetricsSummary {
  /** Iterations whose windows were used (`--iters`), else null. */
  iterations: number[] | null;
}

/** The `metrics` command's work, without printing (tests call it too). */
export function runMetrics(file: string, opts: Omit<MetricsOptions, keyof OutputOptions>): MetricsCommandResult {
  // Option errors surface before the export is read.
  const ranges = opts.iters !== undefined ? parseProfileRanges(opts.iters, '--iters') : undefined;
  const gpu = opts.gpu !== undefined ? parseNonNegativeInt(opts.gpu, '--gpu') : undefined;
  const firstIter = opts.firstIter !== undefined ? parseNonNegativeInt(opts.firstIter, '--first-iter') : undefined;
  const rangeSpec = opts.iterationRange !== undefined ? parseIterationRangeSpec(opts.iterationRange) : undefined;
  const logs = (opts.log ?? []).map(parseIterationLogFile);
  const metrics = opts.metric?.length ? opts.metric : undefined;
  return withExport(file, (h) => {
    const catalog = readMetricCatalog(h);
    if (!catalog.available || !ranges) return { ...metricsOverCapture(h, { catalog, gpu, metrics }), iterations: null };
    const analysis = analyzeIterations(h, { logs, rangeSpec, firstIter, profileRange: opts.profileRange });
    const inRange = (iter: number) => ranges.some((r) => iter >= r.first && iter <= r.last);
    const selected = analysis.iterations.filter((r) => inRange(r.iter));
    if (selected.length === 0) {
      const found = [...new Set(analysis.iterations.map((r) => r.iter))].sort((a, b) => a - b);
      throw new UsageError(`--iters ${opts.iters}: no such iterations in ${file} (found ${found.length ? compactRanges(found) : 'none'})`);
    }
    const summary = metricsOverIntervals(h, selected, { catalog, gpu, metrics });
    const iters = [...new Set(selected.map((r) => r.iter))].sort((a, b) => a - b);
    return { ...summary, notes: [`over the windows of iterations ${compactRanges(iters)}`, ...summary.notes], iterations: iters };
  });
}

export function registerMetrics(program: Command): void {
  withOutputOptions(
    program
      .command('metrics <export>')
      .description('GPU metrics (nsys --gpu-metrics-devices): time-weighted mean, p50, p90, min, max of every metric over the capture or iterations A..B')
      .option('--iters <A-B>', 'only the windows of these iterations (A-B, A, or a list: 3-5,9)')
      .option('--log <file>', 'iteration log, to number iterations like `iterations` does; repeatable', collect)
      .option('--gpu <id>', 'only this GPU (TARGET_INFO_GPU id; default: every sampled GPU)')
      .option('--metric <name>', "only this metric: nsys name or its base ('SMs Active'); repeatable", collect)
      .option('--iteration-range <name|/regex/>', 'NVTX range that marks one iteration (with --iters)')
      .option('--first-iter <n>', 'number unnumbered iteration ranges from N (with --iters)')
      .option('--profile-range <A-B>', 'TLLM_PROFILE_START_STOP value, to number unnumbered iteration ranges (with --iters)'),
  ).action((file: string, opts: MetricsOptions) => {
    const result = runMetrics(file, opts);
    for (const n of result.notes) note(n);
    emit(opts, [{ ...metricsTable(result), notes: [] }], result);
  });
}
