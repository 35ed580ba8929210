import type { Command } from 'commander';
import { withSelectionOptions, selectionOf, logsOf, categoryRulesOf, logOption, minGapOption, withLayerSourceOption, layerOptionsOf, type CategoryOptions, type IterationCommandOptions, type LayerCommandOptions } from './options.js';
import type { AnalysisPart } from '../../pipeline/request.js';
import { withExport } from '../../export/openExport.js';
import { compileCategoryRules } from '../../categories/rules.js';
import { analyzeExport } from '../../pipeline/analyzeExport.js';
import { UsageError } from '../../errors.js';
import { formatBytes } from '../../trace/format.js';
import { parseItersOption, type IterRange } from '../../trace/itersOption.js';
import type { KernelNames } from '../../analysis/timeline.js';
import { writeTrace } from '../../trace/writeTrace.js';
import { note } from '../output.js';

interface TraceCliOptions extends IterationCommandOptions, CategoryOptions, LayerCommandOptions {
  layers?: boolean;
  output: string;
  iters?: IterRange;
  minGap: number;
  kernelNames: KernelNames;
}

/**
 * `iterscope trace <export> -o trace.json`: an annotated Chrome trace-event JSON for
 * ui.perfetto.dev (iteration slices, GPU streams, idle gaps by cause, batch counters).
 * Option values are checked while commander parses them, before the export is opened.
 */
export function registerTrace(program: Command): void {
  withLayerSourceOption(withSelectionOptions(program.command('trace <export>')))
    .description('write a Chrome trace-event JSON for ui.perfetto.dev: iteration slices named by batch composition, GPU work per device and stream, idle gaps coloured by cause, context-token and active-request counters')
    .requiredOption('-o, --output <file>', 'the trace file to write (JSON; large exports: see --iters)')
    .addOption(logOption('iteration log to name iterations by batch composition (same formats as `iterations --log`); repeatable'))
    .option('--iters <A-B>', 'only iterations A..B, and the GPU ops and gaps overlapping [start of A, end of B)', (v: string) => parseItersOption(v))
    .addOption(minGapOption('idle gaps at least this long become slices (ns, us, ms or s)'))
    .option('--kernel-names <short|demangled>', 'kernel slice names: nsys short names, or full demangled signatures (much larger file)', (v: string): KernelNames => {
      if (v !== 'short' && v !== 'demangled') throw new UsageError(`--kernel-names must be short or demangled (got '${v}')`);
      return v;
    }, 'short')
    .option('--layers', 'also a track per GPU with each step split by decoder layer (slices L0..Ln and outside layers; args: ns by module kind, source, fit)')
    .option('--categories <rules.json>', 'kernel category rules replacing the default table (slice args and iteration category ns)')
    .action((file: string, opts: TraceCliOptions) => {
      const { iters, kernelNames } = opts;
      const categoryRules = categoryRulesOf(opts);
      const request = { logs: logsOf(opts), selection: selectionOf(opts), categoryRules, minGapNs: opts.minGap, kernelNames, ...(opts.layers ? { layers: { ...layerOptionsOf(opts), spans: true } } : {}) };
      const parts: AnalysisPart[] = ['iterations', 'gaps', 'timeline', ...(opts.layers ? (['layers'] as const) : [])];
      // Iterations are optional unless --iters (or --layers: steps are what is split) asks for them.
      const analysis = withExport(file, (h) => analyzeExport(h, { ...request, parts, requireIterations: !!iters || opts.layers === true }));
      const summary = writeTrace(opts.output, analysis, { iters, layers: opts.layers, classifier: categoryRules ? compileCategoryRules(categoryRules) : undefined });
      for (const n of summary.notes) note(n);
      note(`wrote ${opts.output} (${formatBytes(summary.bytes)}, ${summary.events} events, ${summary.tracks} tracks): open it in https://ui.perfetto.dev`);
    });
}
