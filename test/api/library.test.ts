/**
 * The library's public surface (`src/index.ts`): the names it exports, their types, and that they
 * reproduce a command. Adding or removing a public name is a decision: change the list here.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, expectTypeOf, it } from 'vitest';
import * as iterscope from '../../src/index.js';
import type { AnalysisRequest, ExportAnalysis, ExportHandle, GapAnalysis, IterationAnalysis, KernelSummary, ParsedIterationLog } from '../../src/index.js';
import { runCli } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';

const PUBLIC_VALUES = [
  'ANALYSIS_PARTS', 'FINDINGS_SCHEMA', 'findFindings', 'findingsInputOf', 'resolveThresholds', 'renderFindings', 'KinetoTraceError', 'NsysReportError', 'alignTorchClock', 'analyzeAtenOps', 'attachTorchTrace', 'convertKinetoTraceSync', 'detectInput', 'openInput', 'DEFAULT_CATEGORY_RULES', 'DEFAULT_ITERATION_SOURCES', 'compareEngines', 'detectEngine', 'DEFAULT_MIN_GAP_NS', 'DEFAULT_REPORT_LAYOUT', 'EXIT_BAD_INPUT', 'EXIT_OK', 'EXIT_REGRESSION',
  'EmptyCaptureError', 'describeCaptureHealth', 'InputError', 'IterationError', 'IterscopeError', 'OUTPUT_FORMATS', 'REPORT_FORMATS', 'REPORT_PARTS', 'SUMMARY_PARTS', 'SUMMARY_SCHEMA',
  'SchemaError', 'UsageError', 'analyzeAcrossExports', 'analyzeExport', 'compareRuns', 'comparisonTables', 'compileCategoryRules',
  'crossRankFromExports', 'crossRankTables', 'defaultCategoryClassifier', 'exitCodeFor', 'exportInfoTables', 'gapsTables', 'isReportData',
  'iterationsTable', 'kernelSummaryTable', 'loadCategoryRules', 'loadRun', 'longestGapsAcrossRanks', 'mergeSummaryFiles', 'metricsForExport',
  'metricsTable', 'nvtxGpuProjectionTable', 'nvtxSummaryTable', 'openExport', 'parseCategoryRules', 'parseDurationNs', 'parseIterationLogFile',
  'parseIterationLogText', 'parseIterationRangeSpec', 'parseIterationSelection', 'parseProfileRanges', 'phaseSummaryTable', 'readSummaryFile',
  'recordsByIter', 'render', 'renderReport', 'reportDocument', 'summarizeExport', 'summarizeRun', 'summaryRequest', 'summaryTables',
  'withExport', 'writeTrace', 'enginesFromExports', 'engineRows', 'engineCaptureOf', 'ENGINE_CAPTURE_PARTS', 'resolveEngineInputs', 'readBenchmarkFile',
  'findHealthFindings', 'enginesTables', 'enginesHtml', 'comparisonHtml', 'loopCompilation', 'youngGeneration',
].sort();

describe('src/index.ts', () => {
  it('exports exactly the curated names (no internals)', () => {
    expect(Object.keys(iterscope).sort()).toEqual(PUBLIC_VALUES);
  });

  it('types the pipeline: a request in, one analysis out, parts typed', () => {
    expectTypeOf(iterscope.analyzeExport).parameters.toEqualTypeOf<[ExportHandle, AnalysisRequest, iterscope.AnalysisProgress?]>();
    expectTypeOf(iterscope.analyzeExport).returns.toEqualTypeOf<ExportAnalysis>();
    expectTypeOf<ExportAnalysis['iterations']>().toEqualTypeOf<IterationAnalysis | null>();
    expectTypeOf<ExportAnalysis['gaps']>().toEqualTypeOf<GapAnalysis | null>();
    expectTypeOf<ExportAnalysis['kernels']>().toEqualTypeOf<KernelSummary | null>();
    expectTypeOf<ExportAnalysis['health']>().toEqualTypeOf<iterscope.CaptureHealth | null>();
    expectTypeOf<AnalysisRequest['parts']>().toEqualTypeOf<readonly iterscope.AnalysisPart[]>();
    expectTypeOf<AnalysisRequest['logs']>().toEqualTypeOf<ParsedIterationLog[] | undefined>();
    expectTypeOf(iterscope.iterationsTable).parameter(0).toEqualTypeOf<IterationAnalysis>();
    expectTypeOf(iterscope.render).returns.toEqualTypeOf<string>();
    // The trace is written from the analysis alone (its `timeline` part), never from the export.
    expectTypeOf(iterscope.writeTrace).parameters.toEqualTypeOf<[string, ExportAnalysis, iterscope.TraceOptions?]>();
    expectTypeOf<ExportAnalysis['timeline']>().toEqualTypeOf<iterscope.Timeline | null>();
  });

  it("reproduces a command: analyzeExport + a renderer print what `iterscope iterations --format csv` prints", () => {
    const file = fixture('pytorch-dense', 'trace.sqlite');
    const log = fixture('pytorch-dense', 'iteration_log.txt');
    const a = iterscope.withExport(file, (h) => iterscope.analyzeExport(h, { parts: ['iterations', 'gaps', 'metrics'], logs: [iterscope.parseIterationLogFile(log)], requireIterations: true }));
    const csv = iterscope.render('csv', [{ ...iterscope.iterationsTable(a.iterations!), notes: [] }], a.iterations);
    const cli = runCli(['iterations', file, '--log', log, '--format', 'csv']);
    expect(cli.status).toBe(0);
    expect(csv).toBe(cli.stdout);
    expect(a.iterations!.iterations).toHaveLength(120);
  });

  it('the CLI JSON of iterations and gaps, and the report, are the pipeline result rendered', async () => {
    const file = fixture('pytorch-moe-window', 'trace.sqlite');
    const log = fixture('pytorch-moe-window', 'iteration_log.txt');
    const logs = [iterscope.parseIterationLogFile(log)];
    const it = iterscope.withExport(file, (h) => iterscope.analyzeExport(h, { parts: ['iterations', 'gaps', 'metrics'], logs, requireIterations: true }));
    expect(runCli(['iterations', file, '--log', log, '--format', 'json']).stdout).toBe(iterscope.render('json', [], it.iterations));
    const gaps = iterscope.withExport(file, (h) => iterscope.analyzeExport(h, { parts: ['iterations', 'gaps'], logs }));
    expect(runCli(['gaps', file, '--log', log, '--format', 'json']).stdout).toBe(iterscope.render('json', [], gaps.gaps));
    const report = iterscope.withExport(file, (h) => iterscope.analyzeExport(h, { parts: iterscope.REPORT_PARTS, logs }));
    expect(iterscope.isReportData(report)).toBe(true);
    if (!iterscope.isReportData(report)) return;
    expect(runCli(['report', file, '--log', log]).stdout).toBe(await iterscope.renderReport(report, 'md'));
  });

  it("the CLI's trace file is writeTrace over the pipeline's iterations, gaps and timeline", () => {
    const file = fixture('pytorch-moe-window', 'trace.sqlite');
    const log = fixture('pytorch-moe-window', 'iteration_log.txt');
    const dir = mkdtempSync(join(tmpdir(), 'iterscope-api-trace-'));
    try {
      const analysis = iterscope.withExport(file, (h) => iterscope.analyzeExport(h, { parts: ['iterations', 'gaps', 'timeline'], logs: [iterscope.parseIterationLogFile(log)] }));
      const summary = iterscope.writeTrace(join(dir, 'lib.json'), analysis);
      expect(runCli(['trace', file, '--log', log, '-o', join(dir, 'cli.json')]).status).toBe(0);
      // Byte for byte, with Buffer.equals: toEqual walks the 9 MB element by element (~95 s on the 2-core machine, past the timeout).
      expect(readFileSync(join(dir, 'cli.json')).equals(readFileSync(join(dir, 'lib.json'))), 'the CLI trace and writeTrace differ').toBe(true);
      expect(summary.gpuOps.ops).toBe(analysis.timeline!.gpuOps.count);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the CLI's engine table is enginesFromExports rendered, and engineRows over the pipeline's engine captures", async () => {
    const files = [fixture('fieldguide-vllm', 'trace.sqlite'), fixture('plain-fieldguide', 'trace.sqlite')];
    const [log, bench] = [fixture('fieldguide-vllm', 'vllm.log'), fixture('plain-fieldguide', 'benchmark_results.json')];
    const inputs = iterscope.resolveEngineInputs(files, { log: [log], benchmark: [bench] });
    const rows = await iterscope.enginesFromExports(files, inputs, { inProcess: true });
    expect(runCli(['engines', ...files, '--log', log, '--benchmark', bench, '--format', 'json']).stdout).toBe(iterscope.render('json', [], rows));
    expect(runCli(['engines', ...files, '--log', log, '--benchmark', bench, '--format', 'md']).stdout).toBe(iterscope.render('md', iterscope.enginesTables(rows), rows));
    const logs = [[iterscope.parseIterationLogFile(log)], []];
    const captures = files.map((f, i) => iterscope.withExport(f, (h) => iterscope.engineCaptureOf(iterscope.analyzeExport(h, { parts: iterscope.ENGINE_CAPTURE_PARTS, logs: logs[i], selection: { unnumberedInCaptureOrder: true } }))));
    expect(iterscope.engineRows(captures, [{}, { benchmark: iterscope.readBenchmarkFile(bench) }])).toEqual(rows);
  });
});
