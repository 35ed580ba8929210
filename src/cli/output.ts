import { writeFileSync, appendFileSync } from 'node:fs';
import { extname } from 'node:path';
import { UsageError } from '../errors.js';
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

/** Renders and writes to `-o FILE` or stdout. */
export function emit(opts: OutputOptions, tables: DataTable[], data: unknown): void {
  const format = resolveFormat(opts);
  const text = render(format, tables, data);
  if (opts.output) writeFileSync(opts.output, text);
  else process.stdout.write(text);
  // CI job summaries: Markdown output is appended where GitHub Actions asks for it.
  if (format === 'md' && process.env.GITHUB_STEP_SUMMARY) appendFileSync(process.env.GITHUB_STEP_SUMMARY, text);
}

/** Notes go to stderr so stdout stays machine-readable. */
export function note(message: string): void {
  process.stderr.write(`iterscope: ${message}\n`);
}
