import { readFileSync, writeFileSync, appendFileSync } from 'node:fs';
import type { Command } from 'commander';
import { readMoeRouting } from '../../compare/compareRuns.js';
import { InputError, UsageError } from '../../errors.js';
import { withExport } from '../../export/openExport.js';
import { findFindings, resolveThresholds } from '../../findings/findFindings.js';
import { findingsInputOf } from '../../pipeline/exportAnalysis.js';
import type { FindingThresholds, FindingsResult } from '../../findings/finding.js';
import { DEFAULT_MIN_GAP_NS } from '../../gaps/analyzeGaps.js';
import { parseIterationLogFile } from '../../logs/parse.js';
import { analyzeExport } from '../../pipeline/analyzeExport.js';
import type { AnalysisPart } from '../../pipeline/request.js';
import { findingsPerRank } from '../../ranks/ranksFromExports.js';
import { SUMMARY_PARTS, summarizeExport, summarizeRun } from '../../summary/runSummary.js';
import { renderFindings } from '../../../reports/findingsReport.js';
import { resolveFormat, type OutputOptions } from '../output.js';
import { collect, withOutputOptions, withSelectionOptions, selectionOf, logsOf, categoryRulesOf, logOption, minGapOption, withLayerOptions, layerOptionsOf, type CategoryOptions, type IterationCommandOptions, type LayerCommandOptions } from './options.js';
import { expandExportArgs } from './ranks.js';

export interface FindingsCommandOptions extends OutputOptions, IterationCommandOptions, CategoryOptions, LayerCommandOptions {
  minGap?: number;
  layers?: boolean;
  thresholds?: string;
  perfectRouter?: string;
  perfectRouterLog?: string[];
}

/** `--thresholds FILE.json`: an object of threshold overrides, checked against the known names. */
export function readThresholdsFile(path: string): FindingThresholds {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ENOENT') throw new InputError('E_INPUT_MISSING', path, 'no such file');
    throw new UsageError(`--thresholds ${path}: not valid JSON (${(err as Error).message.split('\n')[0]})`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new UsageError(`--thresholds ${path}: expected a JSON object of threshold names to numbers`);
  return resolveThresholds(parsed as Partial<FindingThresholds>, `--thresholds ${path}`);
}

/**
 * The `findings` command's work without writing: the pipeline's analysis of the first export (its
 * `findings` part), and with several exports each other export's own findings (`ranks`) and the
 * cross-rank view, with `--perfect-router` the MoE routing reading; the rules then read those too.
 */
export async function runFindings(inputs: readonly string[], opts: FindingsCommandOptions = {}): Promise<FindingsResult> {
  const thresholds = opts.thresholds ? readThresholdsFile(opts.thresholds) : undefined;
  const files = expandExportArgs(inputs);
  const request = { logs: logsOf(opts), selection: selectionOf(opts), categoryRules: categoryRulesOf(opts), minGapNs: opts.minGap ?? DEFAULT_MIN_GAP_NS, findingThresholds: thresholds, ...(opts.layers ? { layers: layerOptionsOf(opts) } : {}) };
  // With --perfect-router the base run is summarised too (its kernels and NVTX totals).
  const parts: AnalysisPart[] = opts.perfectRouter ? ['findings', ...SUMMARY_PARTS] : ['findings'];
  // Several exports: the first one's figures for the cross-rank view too.
  if (files.length > 1) parts.push('rankFigures');
  // --layers: the layer split's findings too (an outlier layer, time outside the layers, attention against KV).
  if (opts.layers) parts.push('layers');
  const analysis = withExport(files[0], (h) => analyzeExport(h, { ...request, parts, kernels: opts.perfectRouter ? { includeGraphs: true } : undefined }));
  if (files.length === 1 && !opts.perfectRouter) return analysis.findings!;
  const perRank = files.length > 1 ? await findingsPerRank(files, analysis, request) : undefined;
  let moeRouting = null;
  if (opts.perfectRouter) {
    if (!analysis.iterations) throw new UsageError(`--perfect-router needs iterations in ${files[0]} (${analysis.iterationError ?? 'none found'})`);
    const head = withExport(opts.perfectRouter, (h) => summarizeExport(h, { ...request, logs: (opts.perfectRouterLog ?? []).map(parseIterationLogFile) }));
    moeRouting = readMoeRouting(summarizeRun(analysis), head);
  }
  // The rules read the cross-rank view and the routing reading beside the analysis.
  const result = findFindings({ ...findingsInputOf(analysis)!, crossRank: perRank?.crossRank }, { thresholds, moeRouting });
  return perRank ? { ...result, ranks: perRank.ranks } : result;
}

/** `iterscope findings <exports...>`: what to fix first, ranked by recoverable time, with evidence and remedies. */
export function registerFindings(program: Command): void {
  withOutputOptions(
    withLayerOptions(withSelectionOptions(program.command('findings <exports...>')))
      .description('what to fix first: first what the capture cannot answer (no GPU work, a crash, lost events, no serving loop; warm-up, whole-graph rows, a cut iteration), then findings (GC pauses, GIL contention and its holder thread, launch-bound, host sync, late launches, memory traffic, phase outliers, stragglers, MoE routing, coverage) ranked by recoverable time, with evidence and remedies')
      .addOption(logOption('iteration log (same formats as `iterations --log`); repeatable'))
      .addOption(minGapOption('gaps at least this long are split by host cause (ns, us, ms or s)'))
      .option('--thresholds <file.json>', 'override rule thresholds, e.g. {"minIdleShare": 0.01, "outlierFactor": 3}')
      .option('--perfect-router <export>', 'the same workload run with ENABLE_PERFECT_ROUTER=1: adds the MoE routing finding')
      .option('--perfect-router-log <file>', 'iteration log of the --perfect-router run; repeatable', collect)
      .option('--categories <rules.json>', 'kernel category rules replacing the default table')
      .option('--layers', 'also the findings of the layer split: an outlier layer (MoE: routing imbalance), time outside the layers, attention growing with KV length'),
  ).action(async (inputs: string[], opts: FindingsCommandOptions) => {
    const format = resolveFormat(opts);
    const result = await runFindings(inputs, opts);
    const text = renderFindings(format, [result]);
    if (opts.output) writeFileSync(opts.output, text);
    else process.stdout.write(text);
    if (format === 'md' && process.env.GITHUB_STEP_SUMMARY) appendFileSync(process.env.GITHUB_STEP_SUMMARY, text);
  });
}
