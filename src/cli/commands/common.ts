import type { Command } from 'commander';

/** `--format` and `-o` on every command that prints a result. */
export function withOutputOptions(cmd: Command): Command {
  return cmd
    .option('--format <format>', 'table | csv | md | json (default: table on a terminal, csv otherwise)')
    .option('-o, --output <file>', 'write to FILE instead of stdout');
}
