import type { Command } from 'commander';
import { withExport } from '../../export/openExport.js';
import { analyzeGaps, DEFAULT_MIN_GAP_NS } from '../../gaps/analyze.js';
import { parseDurationNs } from '../../gaps/duration.js';
import { parseIterationRangeSpec } from '../../iterations/rangeSpec.js';
import { parseIterationLogFile } from '../../logs/parse.js';
import { UsageError } from '../../errors.js';
import { gapsTables } from '../../../reports/gapsReport.js';
import { emit, note, type OutputOptions } from '../output.js';
import { withOutputOptions, collect, nonNegativeInt } from './common.js';
import { expandExportArgs, gapsAcrossExports } from './ranks.js';

/** The options `iterscope gaps` parses. */
export interface GapsOptions extends OutputOptions {
  log?: string[];
  minGap: number;
  top: number;
  device?: number;
  iterationRange?: string;
  firstIter?: number;
  profileRange?: string;
}



/**
 * `iterscope gaps <export>`: GPU idle gaps per device and their host-side causes.
 * Option values are checked while commander parses them, before the export is opened.
 */
export function registerGaps(program: Command): void {
  withOutputOptions(
    program
      .command('gaps <exports...>')
      .description('GPU idle gaps per device and what the host was doing meanwhile (gc, gil_wait, sync, launch_late, nvtx:<range>, unattributed)')
      .option('--log <file>', 'iteration log, to know each iteration\'s phase (same formats as `iterations --log`); repeatable', collect)
      .option('--min-gap <duration>', 'report gaps at least this long (ns, us, ms or s: 100us, 1ms, 0.5s); shorter gaps are summed as fragmented idle', (v: string) => parseDurationNs(v, '--min-gap'), DEFAULT_MIN_GAP_NS)
      .option('--top <n>', 'rows in the top-gaps table (0: all; JSON always has every gap)', nonNegativeInt('--top'), 20)
      .option('--device <n>', 'only this CUDA device', nonNegativeInt('--device'))
      .option('--iteration-range <name|/regex/>', 'NVTX range that marks one iteration (default: [Executor] _forward_step, else TrtGptModelInflightBatching::forwardAsync)')
      .option('--first-iter <n>', 'number unnumbered iteration ranges from N', nonNegativeInt('--first-iter'))
      .option('--profile-range <A-B>', 'TLLM_PROFILE_START_STOP value, to number unnumbered iteration ranges'),
  ).action(async (inputs: string[], opts: GapsOptions) => {
    // Several exports (or a directory / quoted glob): one worker thread per export, a Rank column.
    const files = expandExportArgs(inputs);
    if (files.length > 1) return gapsAcrossExports(files, opts);
    const file = files[0];
    const rangeSpec = opts.iterationRange !== undefined ? parseIterationRangeSpec(opts.iterationRange) : undefined;
    const logs = (opts.log ?? []).map(parseIterationLogFile);
    const analysis = withExport(file, (h) =>
      analyzeGaps(h, {
        minGapNs: opts.minGap,
        deviceId: opts.device,
        iterationOptions: { logs, rangeSpec, firstIter: opts.firstIter, profileRange: opts.profileRange },
      }),
    );
    for (const n of analysis.notes) note(n);
    emit(opts, gapsTables(analysis, opts.top), analysis);
  });
}
