import type { Command } from 'commander';
import { resolveFormat } from '../output.js';
import { UsageError } from '../../errors.js';
import { parseNonNegativeInt } from '../../optionValues.js';

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
