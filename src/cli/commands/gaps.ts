import type { Command } from 'commander';
import { withExport } from '../../export/openExport.js';
import { analyzeExport } from '../../pipeline/analyzeExport.js';
import { longestGapsAcrossRanks } from '../../ranks/acrossExports.js';
import { gapsTables, topGapsAcrossRanksTable } from '../../../reports/gapsReport.js';
import { stackRankTables } from '../../../reports/ranksReport.js';
import { emit, note, type OutputOptions } from '../output.js';
import { withOutputOptions, nonNegativeInt, withSelectionOptions, selectionOf, logsOf, logOption, minGapOption, type IterationCommandOptions } from './options.js';
import { acrossExports, expandExportArgs } from './ranks.js';
import { noGpuWorkLine } from '../../analysis/captureHealth.js';

/** The options `iterscope gaps` parses. */
export interface GapsOptions extends OutputOptions, IterationCommandOptions {
  minGap: number;
  top: number;
  device?: number;
}

/**
 * `iterscope gaps <exports...>`: GPU idle gaps per device and their host-side causes.
 * Option values are checked while commander parses them, before the export is opened.
 */
export function registerGaps(program: Command): void {
  withOutputOptions(
    withSelectionOptions(
      program
        .command('gaps <exports...>')
        .description('GPU idle gaps per device and what the host was doing meanwhile (gc, gil_wait, sync, launch_late, nvtx:<range>, unattributed)')
        .addOption(logOption("iteration log, to know each iteration's phase (same formats as `iterations --log`); repeatable"))
        .addOption(minGapOption('report gaps at least this long (ns, us, ms or s: 100us, 1ms, 0.5s); shorter gaps are summed as fragmented idle'))
        .option('--top <n>', 'rows in the top-gaps table (0: all; JSON always has every gap)', nonNegativeInt('--top'), 20)
        .option('--device <n>', 'only this CUDA device', nonNegativeInt('--device')),
    ),
  ).action(async (inputs: string[], opts: GapsOptions) => {
    const files = expandExportArgs(inputs);
    const request = { logs: logsOf(opts), selection: selectionOf(opts), minGapNs: opts.minGap, deviceId: opts.device };

    // Several exports (or a directory / quoted glob): one worker thread per export. The top-gaps
    // table is the longest `--top` gaps over all ranks; the other tables are stacked with a Rank column.
    if (files.length > 1) {
      const many = await acrossExports(files, 'gaps', request);
      note(many.rankNote);
      for (const r of many.ranks) for (const n of r.result.notes) note(`rank ${r.rank}: ${n}`);
      const total = many.ranks.reduce((a, r) => a + r.result.gaps.length, 0);
      const withSmActive = many.ranks.some((r) => r.result.gaps.some((g) => g.smActivePct != null));
      const top = topGapsAcrossRanksTable(longestGapsAcrossRanks(many.ranks, opts.top), { total, minGapNs: opts.minGap, ranks: many.ranks.length, withSmActive });
      const rest = stackRankTables(many.ranks.map((r) => ({ rank: r.rank, tables: gapsTables(r.result, opts.top).slice(1) })));
      for (const t of rest) t.title = `${t.title} (per rank)`;
      return emit(opts, [top, ...rest], { rankSource: many.rankSource, ranks: many.ranks.map((r) => ({ rank: r.rank, ...r.result, file: r.file })) });
    }

    const a = withExport(files[0], (h) => analyzeExport(h, { ...request, parts: ['iterations', 'gaps', 'health'] }));
    const analysis = a.gaps!;
    // Nothing on the GPU: one line saying why, not every cause that could not be looked for.
    const empty = noGpuWorkLine(a.health!);
    for (const n of empty ? [empty] : analysis.notes) note(n);
    emit(opts, gapsTables(analysis, opts.top), analysis);
  });
}
