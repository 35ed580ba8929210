/**
 * iterscope as a library: open an Nsight Systems export, run the one analysis (`analyzeExport`),
 * render its parts. Everything a command prints can be reproduced with these names:
 *
 * ```ts
 * const a = withExport('run.sqlite', (h) => analyzeExport(h, { parts: ['iterations', 'gaps'], logs: [parseIterationLogFile('iteration_log.txt')] }));
 * process.stdout.write(render('md', [iterationsTable(a.iterations!)], a.iterations));
 * ```
 *
 * Typed queries over the nsys schema are in `iterscope/queries`.
 */

// Errors and exit codes.
export { IterscopeError, UsageError, InputError, SchemaError, IterationError, KinetoTraceError, NsysReportError, EmptyCaptureError, exitCodeFor, EXIT_OK, EXIT_REGRESSION, EXIT_BAD_INPUT, type ErrorCode } from './errors.js';

// Opening exports.
export { openExport, openInput, withExport, type InputReadOptions } from './export/openExport.js';
export { detectInput, type InputKind } from './export/detectInput.js';
export type { ExportHandle, ExportMetadata } from '../queries/handle.js';

// The pipeline.
export { analyzeExport, type AnalysisProgress } from './pipeline/analyzeExport.js';
// The V8 policy for long loops when our threads fill every core: for the span of each analysis by
// default, for good after `loopCompilation.enable()` (the CLI), never after `loopCompilation.disable()`.
export { loopCompilation, type LoopCompilation } from './v8/loopCompilation.js';
// V8's young generation kept small and scavenged without helper threads for the span of each analysis
// that reads the GPU ops on the main thread (`--semi-space-growth-factor=1 --no-parallel-scavenge`, then
// V8's defaults back); never after `youngGeneration.disable()`.
export { youngGeneration, type YoungGeneration } from './v8/youngGeneration.js';
export type { StepCount } from './pipeline/stepProgress.js';
export { ANALYSIS_PARTS, REPORT_PARTS, type AnalysisPart, type AnalysisRequest, type NvtxReadMode } from './pipeline/request.js';
export { findingsInputOf, isReportData, type ExportAnalysis, type ReportData, type ReportLogFile } from './pipeline/exportAnalysis.js';
export type { CategoryTime, CategoryTotal } from './analysis/categoryTime.js';
export type { ReportCoverage, ReportNote } from './overview/reportCoverage.js';
export type { HostSummary, GcSummary, GilSummary, GilThreadSummary } from './gaps/hostSummary.js';

// Inputs of the pipeline: iteration logs, iteration selection, kernel categories.
export { parseIterationLogFile, parseIterationLogText, recordsByIter, type ParsedIterationLog, type IterationLogRecord, type MergedIterationRecord, type LogFormat } from './logs/index.js';
export { parseIterationSelection, type IterationSelection, type IterationSelectionOptions } from './iterations/selection.js';
export { parseIterationRangeSpec, parseProfileRanges, type IterationRangeSpec, type ProfileRange } from './iterations/rangeSpec.js';
export { detectEngine, DEFAULT_ITERATION_SOURCES } from './iterations/sources/index.js';
export type { Engine, IterationSource, IterationSourceId, PhaseBasis, PhaseRule, StepNumbering, StepNumberingContext } from './iterations/source.js';
export { DEFAULT_CATEGORY_RULES, compileCategoryRules, loadCategoryRules, parseCategoryRules, defaultCategoryClassifier, type CategoryRule, type CategoryClassifier } from './categories/rules.js';
export { DEFAULT_MIN_GAP_NS } from './gaps/analyzeGaps.js';
export { parseDurationNs } from './gaps/duration.js';

// The parts' types.
export type { ExportInfo } from './analysis/exportInfo.js';
export type { CaptureSettings, CaptureTracing } from './load/captureSettings.js';
export { describeCaptureHealth, type CaptureHealth, type NsysDiagnostic, type ProgramOutput, type ProgramCrash, type ProfiledProcess, type LaunchPhases } from './analysis/captureHealth.js';
export type { KernelSummary, KernelSummaryOptions, KernelSummaryRow } from './analysis/kernelSummary.js';
export type { MemoryTraffic } from './analysis/memoryTraffic.js';
export type { GilHolderAnalysis } from './gaps/gilHolders.js';
export type { NvtxSummary, NvtxSummaryRow } from './analysis/nvtxSummary.js';
export type { NvtxGpuProjection } from './analysis/nvtxGpuProjection.js';
export type { IterationAnalysis, IterationRow, IterationCoverage } from './iterations/types.js';
export type { Phase } from './iterations/phase.js';
export type { PhaseSummary } from './iterations/summary.js';
export type { GapAnalysis, GapRow, DeviceGapSummary, IterationGapSummary, PhaseGapSummary } from './gaps/analyzeGaps.js';
export type { IterationMetricsResult } from './metrics/iterationMetrics.js';

// Summaries, comparison and the CI gate.
export { summarizeRun, summarizeExport, summaryRequest, SUMMARY_PARTS, SUMMARY_SCHEMA, type RunSummary, type SummaryTokens } from './summary/runSummary.js';
export { loadRun, readSummaryFile } from './summary/loadRun.js';
export { compareRuns, type Comparison } from './compare/compareRuns.js';
export { compareEngines, type EngineComparison, type EngineFigures } from './compare/engineComparison.js';

// Engines side by side (`iterscope engines`): N captures, with or without iteration markers.
export { enginesFromExports, engineRows, type EngineRow, type EngineRows, type EngineInputs, type EnginesOptions } from './compare/engineRows.js';
export { engineCaptureOf, ENGINE_CAPTURE_PARTS, type EngineCapture, type ServingEngine } from './summary/engineCapture.js';
export { resolveEngineInputs, type ExportInputs, type EngineOptionValues } from './compare/engineInputs.js';
export { readBenchmarkFile, type BenchmarkResults, type TokenSource } from './compare/tokenSources.js';
export type { ServingSpan, ServingBoundary } from './analysis/servingSpan.js';

// Several exports (one per rank).
export { analyzeAcrossExports, longestGapsAcrossRanks, type RankResult, type ResultsAcrossExports } from './ranks/acrossExports.js';
export { crossRankFromExports, type ReportAcrossRanks } from './ranks/ranksFromExports.js';
export { mergeSummaryFiles } from './ranks/merge.js';
export type { CrossRankView } from './ranks/crossRank.js';
export type { RankFigures } from './iterations/rankIterationFigures.js';

// PyTorch profiler (Kineto) traces: read into the nsys data model, aten ops per iteration, dual mode.
export { analyzeAtenOps, attachTorchTrace, alignTorchClock, type AtenOpAnalysis, type TorchTraceAttachment, type TorchClockAlignment } from './kineto/index.js';
export { convertKinetoTraceSync, type ConvertedTrace } from './kineto/convert/convertSync.js';
export type { PytorchHostSide } from './kineto/pytorchHostSide.js';

// Findings: what to fix first, from the analysis.
export { findFindings, findHealthFindings, resolveThresholds } from './findings/findFindings.js';
export { FINDINGS_SCHEMA, type Evidence, type Finding, type FindingsOptions, type FindingsResult, type FindingsInput, type FindingThresholds, type RankFindings, type Severity } from './findings/finding.js';
export type { MoeRoutingReading } from './findings/moeRoutingReading.js';

// GPU metrics over iteration windows, and the Perfetto trace.
export { metricsForExport, type MetricsCommandResult, type MetricsRequest } from './pipeline/metricsForExport.js';
export { writeTrace, type TraceOptions, type TraceSummary } from './trace/writeTrace.js';
export type { Timeline, KernelNames } from './analysis/timeline.js';
export type { StepTimeline, TimelineStep, TimelineLayers, StepHostRange, StepReason } from './overview/stepTimeline.js';
export type { NumberedSpan } from './layers/spanPasses.js';

// Inside the step: kernel time per decoder layer and module kind (the `layers` part).
export type { LayersAnalysis, LayerOptions, LayerSource, LayerSourceOption, StepLayers, LayerFigures, PhaseLayers, OutlierLayer, PeriodFit, MarkerAgreement, ModuleKind, LayerSpan } from './layers/types.js';

// Presentation (pure): tables and documents from the analysis's parts.
export {
  render,
  OUTPUT_FORMATS,
  type OutputFormat,
  type DataTable,
  kernelSummaryTable,
  nvtxSummaryTable,
  nvtxGpuProjectionTable,
  exportInfoTables,
  iterationsTable,
  phaseSummaryTable,
  gapsTables,
  comparisonTables,
  summaryTables,
  renderReport,
  reportDocument,
  REPORT_FORMATS,
  DEFAULT_REPORT_LAYOUT,
  type ReportFormat,
  type ReportLayout,
} from '../reports/index.js';
export { crossRankTables } from '../reports/ranksReport.js';
export { metricsTable } from '../reports/metricsReport.js';
export { renderFindings } from '../reports/findingsReport.js';
export { enginesTables, enginesHtml } from '../reports/enginesReport.js';
export { comparisonHtml } from '../reports/compareReport.js';
