import { withExport } from '../export/openExport.js';
import { UsageError } from '../errors.js';
import { compactRanges } from '../formatRanges.js';
import { parseProfileRanges } from '../iterations/rangeSpec.js';
import { parseIterationSelection, type IterationSelectionOptions } from '../iterations/selection.js';
import { analyzeExport } from './analyzeExport.js';
import type { ParsedIterationLog } from '../logs/logRecords.js';
import { readMetricCatalog } from '../metrics/catalog.js';
import { LoadedExport } from '../load/loadedExport.js';
import { metricsOverCapture, metricsOverIntervals, type MetricsSummary } from '../metrics/distribution.js';
import { parseNonNegativeInt } from '../optionValues.js';

/**
 * What `iterscope metrics` is asked, as typed on the command line (structured-clone safe); the
 * iteration selection (with `--iters`) as every command takes it.
 */
export interface MetricsRequest extends IterationSelectionOptions {
  /** `--iters A-B`: only the windows of these iterations. */
  iters?: string;
  /** Parsed `--log` files, to number iterations like `iterations` does. */
  logs?: ParsedIterationLog[];
  gpu?: string;
  metric?: string[];
}

export interface MetricsCommandResult extends MetricsSummary {
  /** Iterations whose windows were used (`--iters`), else null. */
  iterations: number[] | null;
}

/**
 * The request's option values checked and parsed: a UsageError naming the option for a bad one.
 * Called before any export is read (by the CLI too, before it starts workers).
 */
export function parseMetricsRequest(opts: Omit<MetricsRequest, 'logs'>) {
  return {
    ranges: opts.iters !== undefined ? parseProfileRanges(opts.iters, '--iters') : undefined,
    gpu: opts.gpu !== undefined ? parseNonNegativeInt(opts.gpu, '--gpu') : undefined,
    selection: parseIterationSelection(opts),
    metrics: opts.metric?.length ? opts.metric : undefined,
  };
}

/**
 * The `metrics` command's work on one export: every metric over the capture, or over the windows
 * of the `--iters` iterations. Option errors surface before the export is read.
 */
export function metricsForExport(file: string, opts: MetricsRequest): MetricsCommandResult {
  const { ranges, gpu, selection, metrics } = parseMetricsRequest(opts);
  return withExport(file, (h) => {
    const loaded = new LoadedExport(h);
    const catalog = readMetricCatalog(loaded);
    if (!catalog.available || !ranges) return { ...metricsOverCapture(loaded, { catalog, gpu, metrics }), iterations: null };
    const analysis = analyzeExport(h, { parts: ['iterations'], logs: opts.logs, selection, requireIterations: true }).iterations!;
    const inRange = (iter: number) => ranges.some((r) => iter >= r.first && iter <= r.last);
    const selected = analysis.iterations.filter((r) => inRange(r.iter));
    if (selected.length === 0) {
      const found = [...new Set(analysis.iterations.map((r) => r.iter))].sort((a, b) => a - b);
      throw new UsageError(`--iters ${opts.iters}: no such iterations in ${file} (found ${found.length ? compactRanges(found) : 'none'})`);
    }
    const summary = metricsOverIntervals(loaded, selected, { catalog, gpu, metrics });
    const iters = [...new Set(selected.map((r) => r.iter))].sort((a, b) => a - b);
    return { ...summary, notes: [`over the windows of iterations ${compactRanges(iters)}`, ...summary.notes], iterations: iters };
  });
}
