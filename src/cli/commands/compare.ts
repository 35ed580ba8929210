import type { Command } from 'commander';
import { IterscopeError } from '../../errors.js';
import { withExport } from '../../export/openExport.js';
import { parseIterationLogFile } from '../../logs/parse.js';
import { summarizeExport } from '../../summary/runSummary.js';
import { loadRun } from '../../compare/loadRun.js';
import { compareRuns } from '../../compare/compareRuns.js';
import { parseThreshold } from '../../compare/threshold.js';
import { parseDurationNs } from '../../gaps/duration.js';
import { toJson } from '../../../reports/json.js';
import { comparisonTables, summaryTables } from '../../../reports/compareReport.js';
import { emit, note, writeResult, type OutputOptions } from '../output.js';
import { withOutputOptions, collect, withSelectionOptions, selectionOf, logsOf, logOption, type IterationCommandOptions } from './options.js';


export function registerSummarize(program: Command): void {
  withSelectionOptions(
    program
      .command('summarize <export>')
      .description('compact, versioned JSON summary of a run (what compare needs); small enough to keep in git as a CI baseline')
      .addOption(logOption('iteration log; repeatable')),
  )
    .option('-o, --output <file>', 'write the JSON here (default: stdout)')
    .option('--format <format>', 'json (default) | table | md | csv')
    .action((file: string, opts: OutputOptions & IterationCommandOptions) => {
      const summary = withExport(file, (h) => summarizeExport(h, { logs: logsOf(opts), selection: selectionOf(opts) }));
      if (opts.format === undefined || opts.format === 'json') {
        writeResult(opts.output, toJson(summary), false);
      } else emit(opts, summaryTables(summary), summary);
    });
}

interface CompareOptions extends OutputOptions {
  threshold?: string;
  minDelta?: string;
  baseLog?: string[];
  headLog?: string[];
  perfectRouterHead?: boolean;
}

export function registerCompare(program: Command): void {
  withOutputOptions(
    program
      .command('compare <base> <head>')
      .description('base vs head (each an export or a summary.json): per-iteration means by phase and category; exit 1 when a gated metric regresses')
      .option('--threshold <pct>', 'relative regression threshold', '5%')
      .option('--min-delta <duration>', 'absolute noise floor per iteration', '10us')
      .option('--base-log <file>', 'iteration log for an export given as base; repeatable', collect)
      .option('--head-log <file>', 'iteration log for an export given as head; repeatable', collect)
      .option('--perfect-router-head', 'head is an ENABLE_PERFECT_ROUTER=1 run: print the MoE routing reading (detected from the capture environment when recorded)'),
  ).action((basePath: string, headPath: string, opts: CompareOptions) => {
    const threshold = parseThreshold(opts.threshold ?? '5%');
    const minDeltaNs = parseDurationNs(opts.minDelta ?? '10us', '--min-delta');
    const base = loadRun(basePath, { logs: (opts.baseLog ?? []).map(parseIterationLogFile) });
    const head = loadRun(headPath, { logs: (opts.headLog ?? []).map(parseIterationLogFile) });
    const comparison = compareRuns(base, head, { threshold, minDeltaNs, perfectRouterHead: opts.perfectRouterHead });
    if (comparison.moeRouting) note(`MoE routing check: ${comparison.moeRouting.reading}`);
    for (const f of comparison.findings?.appeared ?? []) note(`new finding in head: ${f.title} [${f.id}]`);
    for (const f of comparison.findings?.disappeared ?? []) note(`finding gone in head: ${f.title} [${f.id}]`);
    emit(opts, comparisonTables(comparison), comparison);
    if (comparison.regressions.length) {
      const names = comparison.regressions.map((r) => `${r.metric} [${r.scope}] ${r.relative == null ? '' : `+${(r.relative * 100).toFixed(1)}%`}`.trim());
      throw new IterscopeError('E_REGRESSION', `regression: ${names.join('; ')}`);
    }
  });
}
