import { extname } from 'node:path';
import { budgetLabel } from '../../memoryBudget.js';
import { progress } from '../../progress.js';
import type { Command } from 'commander';
import { reportAcrossRanks, type ReportAcrossRanks } from '../../ranks/ranksFromExports.js';
import { expandExportArgs } from './ranks.js';
import { nonNegativeInt, withSelectionOptions, selectionOf, logsOf, categoryRulesOf, logOption, minGapOption, torchTraceOption, withLayerOptions, layerOptionsOf, type CategoryOptions, type IterationCommandOptions, type LayerCommandOptions, type TorchTraceOptions } from './options.js';
import { withExport } from '../../export/openExport.js';
import { UsageError } from '../../errors.js';
import { writeResult, type OutputOptions } from '../output.js';
import { DEFAULT_MIN_GAP_NS } from '../../gaps/analyzeGaps.js';
import { analyzeExport } from '../../pipeline/analyzeExport.js';
import { REPORT_PARTS } from '../../pipeline/request.js';
import { isReportData } from '../../pipeline/exportAnalysis.js';
import { renderReport, REPORT_FORMATS, type ReportFormat } from '../../../reports/document/renderReport.js';
import { DEFAULT_REPORT_LAYOUT } from '../../../reports/document/layout.js';

/** The options `iterscope report` parses (`--format`: md or html). */
export interface ReportCommandOptions extends OutputOptions, IterationCommandOptions, TorchTraceOptions, CategoryOptions, LayerCommandOptions {
  /** Adds the section "Layers inside the step" (the `layers` part). */
  layers?: boolean;
  top: number;
  iterationRows: number;
  slowest: number;
  minGap: number;
}

function checkFormat(value: string): ReportFormat {
  if (!(REPORT_FORMATS as readonly string[]).includes(value)) throw new UsageError(`--format must be one of ${REPORT_FORMATS.join(', ')} (got '${value}')`);
  return value as ReportFormat;
}

/** `--format`, else `.html`/`.htm` on `-o` means HTML, else Markdown. */
export function resolveReportFormat(opts: { format?: string; output?: string }): ReportFormat {
  if (opts.format !== undefined) return checkFormat(opts.format);
  const ext = opts.output ? extname(opts.output).toLowerCase() : '';
  return ext === '.html' || ext === '.htm' ? 'html' : 'md';
}

/** The `report` command's work without writing anything: option checks, the pipeline, rendering. */
export async function runReport(input: string | readonly string[], opts: Partial<ReportCommandOptions> = {}): Promise<{ format: ReportFormat; text: string; data: ReportAcrossRanks }> {
  // Option errors surface before the export is read.
  const format = resolveReportFormat(opts);
  // Several exports (one per rank): the sections describe the first, plus a cross-rank section.
  const files = typeof input === 'string' ? [input] : expandExportArgs(input);
  const request = {
    logs: logsOf(opts),
    selection: selectionOf(opts),
    categoryRules: categoryRulesOf(opts),
    minGapNs: opts.minGap ?? DEFAULT_MIN_GAP_NS,
    torchTrace: opts.torchTrace,
    // HTML: with the layers' spans per step, which the step timeline draws as a lane per GPU.
    ...(opts.layers ? { layers: { ...layerOptionsOf(opts), ...(format === 'html' ? { spans: true } : {}) } } : {}),
  };
  // Several exports: the first one's figures for the cross-rank view too.
  // HTML draws a few steps at kernel level too (`stepTimeline`); Markdown has no use for them.
  const parts = [...REPORT_PARTS, ...(files.length > 1 ? ['rankFigures' as const] : []), ...(format === 'html' ? ['stepTimeline' as const] : []), ...(opts.layers ? ['layers' as const] : [])];
  // A bar on stderr (terminals only): the pipeline's timed steps, and the memory limit in force.
  const bar = progress(`iterscope: report (${budgetLabel()})`, 0, { unit: 'steps' });
  const first = withExport(files[0], (h) => {
    try {
      return analyzeExport(h, { ...request, parts }, (step, count) => bar.update(count.done, `${step} done`, count.total));
    } finally {
      bar.done();
    }
  });
  if (!isReportData(first)) throw new Error(`report: the pipeline did not return every report part (${first.parts.join(', ')})`);
  const analysis = files.length > 1 ? await reportAcrossRanks(files, first, request) : first;
  const text = await renderReport(analysis, format, {
    top: opts.top ?? DEFAULT_REPORT_LAYOUT.top,
    iterationRows: opts.iterationRows ?? DEFAULT_REPORT_LAYOUT.iterationRows,
    slowest: opts.slowest ?? DEFAULT_REPORT_LAYOUT.slowest,
  });
  return { format, text, data: analysis };
}

/**
 * `iterscope report <exports...> [--log FILE]... [-o report.md|report.html] [--format md|html]`:
 * everything in one document (run info, top kernels, time by category and phase, iterations, idle
 * gaps and causes, NVTX, GC/GIL, GPU metrics, coverage).
 */
export function registerReport(program: Command): void {
  withLayerOptions(withSelectionOptions(program.command('report <exports...>')))
    .description('one Markdown (PR comment / job summary) or self-contained HTML document with every analysis: run info, kernels, categories by phase, iterations, idle causes, NVTX, GC/GIL, metrics, coverage')
    .addOption(logOption('iteration log (same formats as `iterations --log`); repeatable'))
    .option('--format <format>', 'md | html (default: html when -o ends in .html, else md)', (v: string) => checkFormat(v))
    .option('-o, --output <file>', 'write to FILE instead of stdout')
    .option('--top <n>', 'rows in the top-kernels, top-gaps and NVTX tables (0: all)', nonNegativeInt('--top'), DEFAULT_REPORT_LAYOUT.top)
    .option('--iteration-rows <n>', 'list every iteration when there are at most N; else only the slowest', nonNegativeInt('--iteration-rows'), DEFAULT_REPORT_LAYOUT.iterationRows)
    .option('--slowest <n>', 'iterations listed (slowest wall time first) when there are more than --iteration-rows', nonNegativeInt('--slowest'), DEFAULT_REPORT_LAYOUT.slowest)
    .addOption(minGapOption('report idle gaps at least this long (ns, us, ms or s)'))
    .option('--categories <rules.json>', 'kernel category rules replacing the default table')
    .addOption(torchTraceOption('PyTorch profiler trace (TLLM_TORCH_PROFILE_TRACE) of the same run: section "Host side (PyTorch profiler)"'))
    .option('--layers', 'add the section "Layers inside the step": time per decoder layer and module kind by phase, spread and outlier layers')
    .action(async (inputs: string[], opts: ReportCommandOptions) => {
      const { format, text } = await runReport(inputs, opts);
      // -o whole or not at all; Markdown also to the CI job summary (both guarded against the inputs).
      writeResult(opts.output, text, format === 'md');
    });
}
