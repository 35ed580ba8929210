import type { Command } from 'commander';
import { IterscopeError, UsageError } from '../../errors.js';
import { readBenchmarkFile } from '../../compare/tokenSources.js';
import { parseNonNegativeInt } from '../../optionValues.js';
import type { SummaryTokens } from '../../summary/runSummary.js';
import type { Comparison } from '../../compare/compareRuns.js';
import { withExport } from '../../export/openExport.js';
import { parseIterationLogFile } from '../../logs/parse.js';
import { summarizeExport } from '../../summary/runSummary.js';
import { loadRun } from '../../summary/loadRun.js';
import { compareRuns } from '../../compare/compareRuns.js';
import { parseThreshold } from '../../compare/threshold.js';
import { parseDurationNs } from '../../gaps/duration.js';
import { toJsonNumberRows } from '../../../reports/json.js';
import { comparisonHtml, comparisonTables, summaryTables } from '../../../reports/compareReport.js';
import { emit, isHtmlOutput, note, withPageOutputOptions, writeResult, type OutputOptions } from '../output.js';
import { collect, withSelectionOptions, selectionOf, logsOf, logOption, withLayerSourceOption, layerOptionsOf, type IterationCommandOptions, type LayerCommandOptions } from './options.js';


export function registerSummarize(program: Command): void {
  withSelectionOptions(
    program
      .command('summarize <export>')
      .description('compact, versioned JSON summary of a run (what compare needs); small enough to keep in git as a CI baseline')
      .addOption(logOption('iteration log; repeatable')),
  )
    .option('--tokens <n>', 'generated tokens of the captured run (figures per token without iteration markers)')
    .option('--benchmark <file>', 'benchmark results JSON of the captured run (its actual_tokens: the generated tokens)')
    .option('-o, --output <file>', 'write the JSON here (default: stdout)')
    .option('--format <format>', 'json (default) | table | md | csv')
    .option('--layers', 'also keep the layer split\'s samples (kernel ns per step by layer and module kind, per phase) for `compare --layers`')
    .action((file: string, opts: OutputOptions & IterationCommandOptions & { tokens?: string; benchmark?: string; layers?: boolean }) => {
      const tokens = tokensOf(opts.tokens, opts.benchmark, '');
      const summary = withExport(file, (h) => summarizeExport(h, { logs: logsOf(opts), selection: selectionOf(opts), ...(opts.layers ? { layers: { source: 'auto' as const } } : {}) }, tokens));
      if (opts.format === undefined || opts.format === 'json') {
        writeResult(opts.output, toJsonNumberRows(summary), false);
      } else emit(opts, summaryTables(summary), summary);
    });
}

/** A token count from `--tokens N` or a benchmark file's actual_tokens (`--benchmark`); both given is a usage error. */
function tokensOf(count: string | undefined, benchmark: string | undefined, prefix: string): SummaryTokens | null {
  if (count !== undefined && benchmark !== undefined) throw new UsageError(`--${prefix}tokens and --${prefix}benchmark: give one`);
  if (count !== undefined) return { count: parseNonNegativeInt(count, `--${prefix}tokens`), source: 'user' };
  if (benchmark !== undefined) return { count: readBenchmarkFile(benchmark).actualTokens, source: 'benchmark' };
  return null;
}

interface CompareOptions extends OutputOptions, LayerCommandOptions {
  layers?: boolean;
  baseTokens?: string;
  headTokens?: string;
  baseBenchmark?: string;
  headBenchmark?: string;
  failOnInconclusive?: boolean;
  threshold?: string;
  minDelta?: string;
  baseLog?: string[];
  headLog?: string[];
  perfectRouterHead?: boolean;
}

export function registerCompare(program: Command): void {
  withPageOutputOptions(withLayerSourceOption(
    program
      .command('compare <base> <head>')
      .description('base vs head (each an export or a summary.json): per-iteration means by phase and category; exit 1 when a gated metric regresses')
      .option('--threshold <pct>', 'relative regression threshold', '5%')
      .option('--min-delta <duration>', 'absolute noise floor per iteration', '10us')
      .option('--base-log <file>', 'iteration log for an export given as base; repeatable', collect)
      .option('--head-log <file>', 'iteration log for an export given as head; repeatable', collect)
      .option('--base-tokens <n>', 'generated tokens of the base run (span figures per token without iteration markers)')
      .option('--head-tokens <n>', 'generated tokens of the head run')
      .option('--base-benchmark <file>', 'benchmark results JSON of the base run (its actual_tokens)')
      .option('--head-benchmark <file>', 'benchmark results JSON of the head run')
      .option('--fail-on-inconclusive', 'exit 3 when a gated metric is inconclusive (too few samples or too wide an interval) and none regressed')
      .option('--perfect-router-head', 'head is an ENABLE_PERFECT_ROUTER=1 run: print the MoE routing reading (detected from the capture environment when recorded)')
      .option('--layers', 'also compare per phase, per decoder layer and per module kind: kernel ns per step, and outside any layer (exports, or summaries written with `summarize --layers`)'),
  )).action(async (basePath: string, headPath: string, opts: CompareOptions) => {
    const threshold = parseThreshold(opts.threshold ?? '5%');
    const minDeltaNs = parseDurationNs(opts.minDelta ?? '10us', '--min-delta');
    const baseTokens = tokensOf(opts.baseTokens, opts.baseBenchmark, 'base-');
    const headTokens = tokensOf(opts.headTokens, opts.headBenchmark, 'head-');
    const layers = opts.layers ? { layers: layerOptionsOf(opts) } : {};
    const base = loadRun(basePath, { logs: (opts.baseLog ?? []).map(parseIterationLogFile), ...layers }, baseTokens);
    const head = loadRun(headPath, { logs: (opts.headLog ?? []).map(parseIterationLogFile), ...layers }, headTokens);
    const comparison = compareRuns(base, head, { threshold, minDeltaNs, perfectRouterHead: opts.perfectRouterHead, layers: opts.layers });
    for (const n of comparison.comparability) note(`comparability: ${n}`);
    if (comparison.moeRouting) note(`MoE routing check: ${comparison.moeRouting.reading}`);
    for (const f of comparison.findings?.appeared ?? []) note(`new finding in head: ${f.title} [${f.id}]`);
    for (const f of comparison.findings?.disappeared ?? []) note(`finding gone in head: ${f.title} [${f.id}]`);
    // A regression is the headline (its one line ends the output); inconclusive metrics are in the tables then.
    if (!comparison.regressions.length) for (const line of inconclusiveLines(comparison)) note(line);
    if (isHtmlOutput(opts)) writeResult(opts.output, await comparisonHtml(comparison), false);
    else emit(opts, comparisonTables(comparison), comparison);
    gateOutcome(comparison, opts.failOnInconclusive === true);
  });
}

const metricName = (m: Comparison['metrics'][number]) => `${m.metric} [${m.scope}]`;

/** One line per inconclusive metric; those of a scope with too few samples share one line (same counts, same reason). */
function inconclusiveLines(c: Comparison): string[] {
  const few = new Map<string, string[]>();
  const lines: string[] = [];
  for (const m of c.inconclusive) {
    if (!m.note?.startsWith('too few samples')) lines.push(`inconclusive: ${metricName(m)}: ${m.note}`);
    else (few.get(`${m.scope}\u0000${m.note}`) ?? few.set(`${m.scope}\u0000${m.note}`, []).get(`${m.scope}\u0000${m.note}`)!).push(m.metric);
  }
  for (const [key, metrics] of few) {
    const [scope, note] = key.split('\u0000');
    lines.unshift(`inconclusive: ${metrics.length === 1 ? metrics[0] : `${metrics.length} metrics (${metrics.join(', ')})`} [${scope}]: ${note}`);
  }
  return lines;
}
const signed = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;

/** Exit 1 on a regression; exit 3 on an inconclusive gated metric when asked (`--fail-on-inconclusive`); else 0. */
function gateOutcome(c: Comparison, failOnInconclusive: boolean): void {
  if (c.regressions.length) {
    const names = c.regressions.map((r) => `${metricName(r)} ${r.relative == null ? '' : signed(r.relative)}${r.interval ? ` (${signed(r.interval.lo)}..${signed(r.interval.hi)})` : ''}`.trim());
    throw new IterscopeError('E_REGRESSION', `regression: ${names.join('; ')}`);
  }
  if (failOnInconclusive && c.inconclusive.length) {
    throw new IterscopeError('E_INCONCLUSIVE', `inconclusive: ${c.inconclusive.length} gated metrics cannot tell noise from change: ${c.inconclusive.map((m) => `${metricName(m)} (${m.samples?.base ?? 0} vs ${m.samples?.head ?? 0} samples)`).join('; ')}`);
  }
}
