import type { Command } from 'commander';
import { resolveFormat } from '../output.js';

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
