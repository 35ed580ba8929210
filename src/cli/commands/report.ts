import { appendFileSync, writeFileSync } from 'node:fs';
import { extname } from 'node:path';
import type { Command } from 'commander';
import { crossRankFromExports } from '../../ranks/ranksFromExports.js';
import { expandExportArgs } from './ranks.js';
import { collect, nonNegativeInt } from './common.js';
import { withExport } from '../../export/openExport.js';
import { defaultCategoryClassifier, loadCategoryRules } from '../../categories/rules.js';
import { UsageError } from '../../errors.js';
import { DEFAULT_MIN_GAP_NS } from '../../gaps/analyze.js';
import { parseDurationNs } from '../../gaps/duration.js';
import { parseIterationRangeSpec } from '../../iterations/rangeSpec.js';
import { parseIterationLogFile } from '../../logs/parse.js';
import { buildReport } from '../../pipeline/buildReport.js';
import { resolveLogTimeZone } from '../../iterations/logTimestampWindows.js';
import { renderReport, REPORT_FORMATS, type ReportFormat } from '../../../reports/document/renderReport.js';
import { DEFAULT_REPORT_LAYOUT, type ReportData } from '../../pipeline/types.js';

export interface ReportCommandOptions {
  log?: string[];
  output?: string;
  format?: string;
  top: number;
  iterationRows: number;
  slowest: number;
  minGap: number;
  iterationRange?: string;
  firstIter?: number;
  profileRange?: string;
  categories?: string;
  logTz?: string;
  torchTrace?: string;
}



function checkFormat(value: string): ReportFormat {
  if (!(REPORT_FORMATS as readonly string[]).includes(value)) throw new UsageError(`--format must be one of ${REPORT_FORMATS.join(', ')} (got '${value}')`);
  return value as ReportFormat;
}

/** `--format`, else `.html`/`.htm` on `-o` means HTML, else Markdown. */
export function resolveReportFormat(opts: { format?: string; output?: string }): ReportFormat {
  if (opts.format !== undefined) return checkFormat(opts.format);
  const ext = opts.output ? extname(opts.output).toLowerCase() : '';
  return ext === '.html' || ext === '.htm' ? 'html' : 'md';
}

/** The `report` command's work without writing anything: option checks, analyses, rendering. */
export async function runReport(input: string | readonly string[], opts: Partial<ReportCommandOptions> = {}): Promise<{ format: ReportFormat; text: string; data: ReportData }> {
  // Option errors surface before the export is read.
  const format = resolveReportFormat(opts);
  // Several exports (one per rank): the sections describe the first, plus a cross-rank section.
  const files = typeof input === 'string' ? [input] : expandExportArgs(input);
  const file = files[0];
  const rangeSpec = opts.iterationRange !== undefined ? parseIterationRangeSpec(opts.iterationRange) : undefined;
  const classifier = opts.categories ? loadCategoryRules(opts.categories) : defaultCategoryClassifier();
  const logs = (opts.log ?? []).map(parseIterationLogFile);
  const data = withExport(file, (h) =>
    buildReport(h, { logs, rangeSpec, firstIter: opts.firstIter, profileRange: opts.profileRange, classifier, minGapNs: opts.minGap ?? DEFAULT_MIN_GAP_NS, logTz: opts.logTz, torchTrace: opts.torchTrace }),
  );
  if (files.length > 1) {
    data.crossRank = await crossRankFromExports(files, {
      logs,
      iterationRange: opts.iterationRange,
      firstIter: opts.firstIter,
      profileRange: opts.profileRange,
      categoryRules: opts.categories ? [...classifier.rules] : undefined,
    });
  }
  const text = await renderReport(data, format, {
    top: opts.top ?? DEFAULT_REPORT_LAYOUT.top,
    iterationRows: opts.iterationRows ?? DEFAULT_REPORT_LAYOUT.iterationRows,
    slowest: opts.slowest ?? DEFAULT_REPORT_LAYOUT.slowest,
  });
  return { format, text, data };
}

/**
 * `iterscope report <exports...> [--log FILE]... [-o report.md|report.html] [--format md|html]`:
 * everything in one document (run info, top kernels, time by category and phase, iterations, idle
 * gaps and causes, NVTX, GC/GIL, GPU metrics, coverage).
 */
export function registerReport(program: Command): void {
  program
    .command('report <exports...>')
    .description('one Markdown (PR comment / job summary) or self-contained HTML document with every analysis: run info, kernels, categories by phase, iterations, idle causes, NVTX, GC/GIL, metrics, coverage')
    .option('--log <file>', 'iteration log (same formats as `iterations --log`); repeatable', collect)
    .option('--format <format>', 'md | html (default: html when -o ends in .html, else md)', (v: string) => checkFormat(v))
    .option('-o, --output <file>', 'write to FILE instead of stdout')
    .option('--top <n>', 'rows in the top-kernels, top-gaps and NVTX tables (0: all)', nonNegativeInt('--top'), DEFAULT_REPORT_LAYOUT.top)
    .option('--iteration-rows <n>', 'list every iteration when there are at most N; else only the slowest', nonNegativeInt('--iteration-rows'), DEFAULT_REPORT_LAYOUT.iterationRows)
    .option('--slowest <n>', 'iterations listed (slowest wall time first) when there are more than --iteration-rows', nonNegativeInt('--slowest'), DEFAULT_REPORT_LAYOUT.slowest)
    .option('--min-gap <duration>', 'report idle gaps at least this long (ns, us, ms or s)', (v: string) => parseDurationNs(v, '--min-gap'), DEFAULT_MIN_GAP_NS)
    .option('--iteration-range <name|/regex/>', 'NVTX range that marks one iteration (default: [Executor] _forward_step, else TrtGptModelInflightBatching::forwardAsync)')
    .option('--first-iter <n>', 'number unnumbered iteration ranges from N', nonNegativeInt('--first-iter'))
    .option('--profile-range <A-B>', 'TLLM_PROFILE_START_STOP value, to number unnumbered iteration ranges')
    .option('--categories <rules.json>', 'kernel category rules replacing the default table')
    .option('--log-tz <zone>', "time zone of the logs' timestamps when they delimit iterations (no NVTX marker): UTC (default), local, IANA zone, +HH:MM", (v: string) => resolveLogTimeZone(v))
    .option('--torch-trace <file>', 'PyTorch profiler trace (TLLM_TORCH_PROFILE_TRACE) of the same run: section "Host side (PyTorch profiler)"')
    .action(async (inputs: string[], opts: ReportCommandOptions) => {
      const { format, text } = await runReport(inputs, opts);
      if (opts.output) writeFileSync(opts.output, text);
      else process.stdout.write(text);
      // CI job summaries: Markdown is appended where GitHub Actions asks for it.
      if (format === 'md' && process.env.GITHUB_STEP_SUMMARY) appendFileSync(process.env.GITHUB_STEP_SUMMARY, text);
    });
}
