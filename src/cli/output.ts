import { appendFileSync, statSync } from 'node:fs';
import type { Command } from 'commander';
import { extname } from 'node:path';
import { UsageError } from '../errors.js';
import { writeOutputFile } from '../outputFile.js';
import { oneLine } from '../../reports/controlChars.js';
import { OUTPUT_FORMATS, render, type DataTable, type OutputFormat } from '../../reports/index.js';

export interface OutputOptions {
  format?: string;
  output?: string;
}

/** Format from `--format`, else from `-o`'s extension, else table on a TTY and CSV otherwise. */
export function resolveFormat(opts: OutputOptions): OutputFormat {
  if (opts.format !== undefined) {
    if (!(OUTPUT_FORMATS as readonly string[]).includes(opts.format)) {
      throw new UsageError(`--format must be one of ${OUTPUT_FORMATS.join(', ')} (got '${opts.format}')`);
    }
    return opts.format as OutputFormat;
  }
  if (opts.output) {
    const ext = extname(opts.output).toLowerCase();
    if (ext === '.json') return 'json';
    if (ext === '.md' || ext === '.markdown') return 'md';
    if (ext === '.csv') return 'csv';
  }
  return process.stdout.isTTY && !opts.output ? 'table' : 'csv';
}

/** The formats of a command that also writes one HTML page (`engines`, `compare`). */
export const PAGE_FORMATS = [...OUTPUT_FORMATS, 'html'];

/** `--format html`, or `-o *.html` without `--format`: the page; anything else: the tables. */
export function isHtmlOutput(opts: OutputOptions): boolean {
  if (opts.format !== undefined) return opts.format === 'html';
  const ext = opts.output ? extname(opts.output).toLowerCase() : '';
  return ext === '.html' || ext === '.htm';
}

/** `--format` (the tables' formats or html) and `-o`, for a command with an HTML page. */
export function withPageOutputOptions(cmd: Command): Command {
  return cmd
    .option('--format <format>', `${PAGE_FORMATS.join(' | ')} (default: html when -o ends in .html, else table on a terminal, csv otherwise)`, (value: string) => {
      if (!PAGE_FORMATS.includes(value)) throw new UsageError(`--format must be one of ${PAGE_FORMATS.join(', ')} (got '${value}')`);
      return value;
    })
    .option('-o, --output <file>', 'write to FILE instead of stdout');
}

/** Renders and writes to `-o FILE` or stdout. */
export function emit(opts: OutputOptions, tables: DataTable[], data: unknown): void {
  const format = resolveFormat(opts);
  writeResult(opts.output, render(format, tables, data), format === 'md');
}

/**
 * Writes a command's result to `-o FILE` (whole or not at all: see `writeOutputFile`) or stdout,
 * and appends Markdown to the CI job summary (`GITHUB_STEP_SUMMARY`) when asked. Both targets were
 * checked against the inputs by `guardOutputs` before the command ran.
 */
export function writeResult(output: string | undefined, text: string, markdown: boolean): void {
  if (output) writeOutputFile(output, text);
  else process.stdout.write(text);
  const jobSummary = process.env.GITHUB_STEP_SUMMARY;
  if (markdown && jobSummary) appendFileSync(jobSummary, text);
}

/** A file's identity: the same file under any name (hard link, symlink, `./x`, a directory member). */
function fileIdentity(path: string): string | null {
  try {
    const st = statSync(path);
    return `${st.dev}:${st.ino}`;
  } catch {
    return null; // does not exist (yet): cannot be an input
  }
}

/**
 * Never write to an input file: every place a command writes (`-o`, the job summary) is compared
 * by device and inode with every file it reads (expanded exports and summaries, logs, rules).
 */
export function guardOutputs(inputs: readonly string[], outputs: readonly { what: string; path: string }[]): void {
  const inputIds = new Map<string, string>();
  for (const input of inputs) {
    const id = fileIdentity(input);
    if (id !== null && !inputIds.has(id)) inputIds.set(id, input);
  }
  for (const { what, path } of outputs) {
    const id = fileIdentity(path);
    const input = id === null ? undefined : inputIds.get(id);
    if (input === undefined) continue;
    const same = input === path ? '' : ` (the same file as input ${input})`;
    throw new UsageError(`${what} ${path} is one of the inputs${same}; iterscope never writes to an input file`);
  }
}

/** Longest message printed: a message quoting user or export text (a 2 MB regex) is cut. */
export const MAX_MESSAGE_CHARS = 2000;

/** A message as one stderr line: control characters become spaces, long text is cut. */
export function stderrLine(message: string): string {
  const line = oneLine(message);
  const cut = line.length > MAX_MESSAGE_CHARS ? `${line.slice(0, MAX_MESSAGE_CHARS)}... (${line.length - MAX_MESSAGE_CHARS} more characters)` : line;
  return `iterscope: ${cut}\n`;
}

/** Notes go to stderr so stdout stays machine-readable. */
export function note(message: string): void {
  process.stderr.write(stderrLine(message));
}
