import type { Command } from 'commander';
import { resolveEngineInputs, type EngineOptionValues } from '../../compare/engineInputs.js';
import { enginesFromExports } from '../../compare/engineRows.js';
import { enginesHtml, enginesTables } from '../../../reports/enginesReport.js';
import { emit, isHtmlOutput, note, withPageOutputOptions, writeResult, type OutputOptions } from '../output.js';
import { withProgressBar, expandExportArgs, jobsOption, positiveInt } from './ranks.js';
import { categoryRulesOf, collect, type CategoryOptions } from './options.js';

/** The options `iterscope engines` parses: per-export values (`--log EXPORT=FILE`, ...), no iteration selection (steps are numbered in capture order). */
interface EnginesCommandOptions extends OutputOptions, EngineOptionValues, CategoryOptions {
  jobs?: number;
}

/**
 * `iterscope engines <exports...>`: several engines' captures side by side, one row each, per
 * generated token (or per second of the serving span without a token count).
 */
export function registerEngines(program: Command): void {
  withPageOutputOptions(program
    .command('engines <exports...>')
    .description('engines side by side, one row per capture (files, directories, quoted globs), with or without iteration markers: kernel time per generated and per context token in the serving span, kernels per token, kernel time by category, GPU busy/idle, H2D/D2H copies and allocations, measured throughput; the capture health of each')
    .option('--label <NAME=EXPORT>', "a capture's name in the table (default: its engine, else its folder); repeatable", collect)
    .option('--log <[EXPORT=]FILE>', "an export's iteration log (the generated tokens of its captured steps); without EXPORT=, the export in FILE's folder; repeatable", collect)
    .option('--benchmark <[EXPORT=]FILE>', 'benchmark results JSON {"results": [{"actual_tokens", "latency_s", ...}]} of the run the export captured (its actual_tokens summed); without EXPORT=, the export in its folder; repeatable', collect)
    .option('--tokens <[EXPORT=]N>', 'the generated tokens of a capture, as given; repeatable', collect)
    .option('--categories <rules.json>', 'kernel category rules replacing the default table')
    .option('--jobs <n>', 'worker threads (default: ITERSCOPE_JOBS, else one per core)', positiveInt('--jobs')))
    .action(async (inputs: string[], opts: EnginesCommandOptions) => {
      const categoryRules = categoryRulesOf(opts);
      const files = expandExportArgs(inputs);
      const perExport = resolveEngineInputs(files, opts); // usage errors before any export is read
      const table = await withProgressBar(files.length, (onProgress) => enginesFromExports(files, perExport, { categoryRules, jobs: jobsOption(opts.jobs), onProgress }));
      for (const n of table.notes) note(n);
      for (const r of table.rows) for (const n of r.notes) note(`${r.label}: ${n}`);
      if (isHtmlOutput(opts)) writeResult(opts.output, await enginesHtml(table), false);
      else emit(opts, enginesTables(table), table);
    });
}
