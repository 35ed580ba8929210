import { Option, type Command } from 'commander';
import { resolveFormat } from '../output.js';
import { parseNonNegativeInt } from '../../optionValues.js';
import { loadCategoryRules, type CategoryRule } from '../../categories/rules.js';
import { DEFAULT_MIN_GAP_NS } from '../../gaps/analyzeGaps.js';
import { parseDurationNs } from '../../gaps/duration.js';
import { parseIterationRangeSpec, parseProfileRanges } from '../../iterations/rangeSpec.js';
import { resolveLogTimeZone } from '../../iterations/logTimestampWindows.js';
import { parseIterationSelection, type IterationSelection, type IterationSelectionOptions } from '../../iterations/selection.js';
import { parseIterationLogFile } from '../../logs/parse.js';
import type { ParsedIterationLog } from '../../logs/logRecords.js';
import type { LayerOptions, LayerSourceOption } from '../../layers/types.js';
import { UsageError } from '../../errors.js';

/**
 * The options several commands share, declared once: their types (what the action receives), and
 * their flags and parsers. A value is checked once, by its parser while commander reads the command
 * line, so a bad one fails before any export is read (and before any note); the parsers hand the
 * parsed value (a number, a range spec, a zone), which `selectionOf` takes as it is.
 */

export { parseNonNegativeInt };

/** `--log FILE`, repeatable: iteration logs, parsed by `logsOf` when the command runs. */
export interface LogOptions {
  log?: string[];
}

/**
 * The options of a command that finds iterations: `--log` and the iteration selection
 * (`--iteration-range`, `--first-iter`, `--profile-range`, `--log-tz`).
 */
export interface IterationCommandOptions extends LogOptions, IterationSelectionOptions {}

/** `--torch-trace FILE`: a PyTorch profiler trace of the same run, beside an nsys export. */
export interface TorchTraceOptions {
  torchTrace?: string;
}

/** `--categories rules.json`: kernel category rules replacing the default table. */
export interface CategoryOptions {
  categories?: string;
}

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

/** `--log FILE` (repeatable), with what the command uses the logs for. */
export function logOption(description: string): Option {
  return new Option('--log <file>', description).argParser(collect);
}

/** `--torch-trace FILE`, with what the command shows from it. */
export function torchTraceOption(description: string): Option {
  return new Option('--torch-trace <file>', description);
}

/** `--min-gap DURATION` (default 100us), with what the command does with shorter gaps. */
export function minGapOption(description: string): Option {
  return new Option('--min-gap <duration>', description).argParser((v: string) => parseDurationNs(v, '--min-gap')).default(DEFAULT_MIN_GAP_NS);
}

/**
 * `--iteration-range`, `--first-iter`, `--profile-range` and `--log-tz` on every command that finds
 * iterations (`purpose`: when they apply, e.g. `with --iters`).
 */
export function withSelectionOptions(cmd: Command, purpose = ''): Command {
  const why = purpose ? ` (${purpose})` : '';
  return cmd
    .option(
      '--iteration-range <name|/regex/>',
      `NVTX range that marks one iteration: exact text, or /regex/ (a first capture group of digits numbers it); default: [Executor] _forward_step, else TrtGptModelInflightBatching::forwardAsync, vLLM's execute_context_..., SGLang's scheduler.run_batch${why}`,
      (v: string) => parseIterationRangeSpec(v),
    )
    .option('--first-iter <n>', `number unnumbered iteration ranges from N${why}`, nonNegativeInt('--first-iter'))
    .option('--profile-range <A-B>', `TLLM_PROFILE_START_STOP value, to number unnumbered iteration ranges${why}`, (v: string) => parseProfileRanges(v))
    .option('--log-tz <zone>', "time zone the logs' timestamps were written in, when they delimit iterations (no NVTX marker, e.g. a PyTorch profiler trace): UTC (default), local, an IANA zone or +HH:MM", (v: string) =>
      resolveLogTimeZone(v),
    );
}

/** The pipeline's iteration selection from the options `withSelectionOptions` added (or a caller's text). */
export function selectionOf(opts: IterationSelectionOptions): IterationSelection {
  return parseIterationSelection(opts);
}

/** `--log` files, parsed. */
export function logsOf(opts: LogOptions): ParsedIterationLog[] {
  return (opts.log ?? []).map(parseIterationLogFile);
}

/** `--categories rules.json`: the rules (checked), or undefined for the built-in table. */
export function categoryRulesOf(opts: CategoryOptions): CategoryRule[] | undefined {
  return opts.categories ? [...loadCategoryRules(opts.categories).rules] : undefined;
}

/** `--layer-source` and `--outlier-ratio`: how the layer split is made (`layers`, `iterations --layers`). */
export interface LayerCommandOptions {
  layerSource?: LayerSourceOption;
  outlierRatio?: number;
}

/** Adds `--layer-source` alone (`trace --layers`, `compare --layers`: no outlier bar there). */
export function withLayerSourceOption(cmd: Command): Command {
  return cmd.addOption(
    new Option('--layer-source <source>', 'where layers come from: auto (layerwise NVTX markers where a step has them, else inferred from the repeating kernel sequence) or period (inferred only, markers ignored)')
      .choices(['auto', 'period'])
      .default('auto'),
  );
}

/** Adds the layer split's options. */
export function withLayerOptions(cmd: Command): Command {
  return withLayerSourceOption(cmd)
    .option('--outlier-ratio <x>', 'a layer is an outlier from this many times the median layer (default 1.5)', (v: string) => {
      const x = Number(v);
      if (!Number.isFinite(x) || x <= 1) throw new UsageError(`--outlier-ratio: a number above 1, got '${v}'`);
      return x;
    });
}

/** The layer options of the analysis request. */
export function layerOptionsOf(opts: LayerCommandOptions): LayerOptions {
  return { source: opts.layerSource ?? 'auto', ...(opts.outlierRatio ? { outlierRatio: opts.outlierRatio } : {}) };
}
