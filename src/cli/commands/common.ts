import type { Command } from 'commander';
import { resolveFormat } from '../output.js';
import { parseNonNegativeInt } from '../../optionValues.js';
import { loadCategoryRules, type CategoryRule } from '../../categories/rules.js';
import { parseIterationRangeSpec, parseProfileRanges } from '../../iterations/rangeSpec.js';
import { resolveLogTimeZone } from '../../iterations/logTimestampWindows.js';
import { parseIterationSelection, type IterationSelection, type IterationSelectionOptions } from '../../iterations/selection.js';
import { parseIterationLogFile } from '../../logs/parse.js';
import type { ParsedIterationLog } from '../../logs/types.js';

export { parseNonNegativeInt };

/**
 * `--format` and `-o` on every command that prints a result. `--format` is checked while the
 * options are parsed, so a bad value fails before the export is read (and before any note).
 */
export function withOutputOptions(cmd: Command): Command {
  return cmd
    .option('--format <format>', 'table | csv | md | json (default: table on a terminal, csv otherwise)', (value: string) => {
      resolveFormat({ format: value }); // throws the UsageError for an unknown format
      return value;
    })
    .option('-o, --output <file>', 'write to FILE instead of stdout');
}

/** Commander accumulator for repeatable options (`--log a --log b`). */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** Commander option parser for a non-negative integer option. */
export function nonNegativeInt(option: string): (value: string) => number {
  return (value: string) => parseNonNegativeInt(value, option);
}

/**
 * `--iteration-range`, `--first-iter`, `--profile-range` and `--log-tz` on every command that finds
 * iterations. Values are checked while commander parses them (a bad one fails before any export is
 * read); `selectionOf` turns them into the pipeline's `IterationSelection`.
 */
export function withSelectionOptions(cmd: Command, purpose = ''): Command {
  const why = purpose ? ` (${purpose})` : '';
  return cmd
    .option(
      '--iteration-range <name|/regex/>',
      `NVTX range that marks one iteration: exact text, or /regex/ (a first capture group of digits numbers it); default: [Executor] _forward_step, else TrtGptModelInflightBatching::forwardAsync, vLLM's execute_context_..., SGLang's scheduler.run_batch${why}`,
      (v: string) => {
        parseIterationRangeSpec(v);
        return v;
      },
    )
    .option('--first-iter <n>', `number unnumbered iteration ranges from N${why}`, nonNegativeInt('--first-iter'))
    .option('--profile-range <A-B>', `TLLM_PROFILE_START_STOP value, to number unnumbered iteration ranges${why}`, (v: string) => {
      parseProfileRanges(v);
      return v;
    })
    .option('--log-tz <zone>', "time zone the logs' timestamps were written in, when they delimit iterations (no NVTX marker, e.g. a PyTorch profiler trace): UTC (default), local, an IANA zone or +HH:MM", (v: string) => {
      resolveLogTimeZone(v);
      return v;
    });
}

/** The pipeline's iteration selection from the options `withSelectionOptions` added. */
export function selectionOf(opts: IterationSelectionOptions): IterationSelection {
  return parseIterationSelection(opts);
}

/** `--log` files, parsed. */
export function logsOf(opts: { log?: string[] }): ParsedIterationLog[] {
  return (opts.log ?? []).map(parseIterationLogFile);
}

/** `--categories rules.json`: the rules (checked), or undefined for the built-in table. */
export function categoryRulesOf(opts: { categories?: string }): CategoryRule[] | undefined {
  return opts.categories ? [...loadCategoryRules(opts.categories).rules] : undefined;
}
