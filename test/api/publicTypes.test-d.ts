/**
 * The public types, pinned. Type-checked, not run: `tsc -p tsconfig.test.json` (part of `npm test`)
 * fails when one of these types changes, with the line of the pin that broke. Changing a public
 * type is a decision: change its pin here with it.
 *
 * The entries: `iterscope` (src/index.ts) and `iterscope/queries` (queries/index.ts). The names
 * each exports are pinned by library.test.ts and queries.test.ts.
 */
import { expectTypeOf } from 'vitest';
import type { Kysely } from 'kysely';
import type BetterSqlite3 from 'better-sqlite3';
import * as iterscope from '../../src/index.js';
import * as queries from '../../queries/index.js';
import type {
  AnalysisPart,
  AnalysisProgress,
  AnalysisRequest,
  CaptureHealth,
  CaptureSettings,
  CategoryRule,
  CategoryTime,
  ExportAnalysis,
  ExportHandle,
  ExportInfo,
  ExportMetadata,
  Finding,
  FindingThresholds,
  FindingsInput,
  FindingsResult,
  GapAnalysis,
  GapRow,
  HostSummary,
  IterationAnalysis,
  IterationMetricsResult,
  IterationRangeSpec,
  IterationRow,
  IterationSelection,
  IterationSelectionOptions,
  KernelNames,
  KernelSummary,
  KernelSummaryRow,
  MetricsCommandResult,
  MetricsRequest,
  NvtxGpuProjection,
  NvtxReadMode,
  NvtxSummary,
  ParsedIterationLog,
  PhaseSummary,
  StepCount,
  ProfileRange,
  PytorchHostSide,
  RankFigures,
  ReportCoverage,
  ReportLogFile,
  RunSummary,
  SummaryTokens,
  ServingSpan,
  Timeline,
  LayerOptions,
  LayersAnalysis,
} from '../../src/index.js';
import type { CrossRankView } from '../../src/index.js';
// Reachable from the public types: named by the index too.
import type { Evidence, FindingsOptions, GilHolderAnalysis, InputReadOptions, KernelSummaryOptions, MemoryTraffic, RankFindings, Severity } from '../../src/index.js';
import type { Engine as FindingsEngine } from '../../src/iterations/source.js';

// ---------------------------------------------------------------------------------------------
// Opening an export and the one pipeline

expectTypeOf(iterscope.openExport).parameters.toEqualTypeOf<[string]>();
expectTypeOf(iterscope.openExport).returns.toEqualTypeOf<ExportHandle>();
expectTypeOf(iterscope.openInput).parameters.toEqualTypeOf<[string, InputReadOptions?]>();
expectTypeOf(iterscope.withExport<ExportAnalysis>).parameters.toEqualTypeOf<[string, (handle: ExportHandle) => ExportAnalysis, InputReadOptions?]>();
expectTypeOf(iterscope.withExport<number>).returns.toEqualTypeOf<number>();
expectTypeOf<InputReadOptions>().toEqualTypeOf<{ tables?: readonly string[] }>();

expectTypeOf(iterscope.analyzeExport).parameters.toEqualTypeOf<[ExportHandle, AnalysisRequest, AnalysisProgress?]>();
expectTypeOf(iterscope.analyzeExport).returns.toEqualTypeOf<ExportAnalysis>();
expectTypeOf<AnalysisProgress>().toEqualTypeOf<(step: string, count: StepCount) => void>();
expectTypeOf<StepCount>().toEqualTypeOf<{ done: number; total: number }>();
// A callback written for the step name alone still fits.
expectTypeOf<(step: string) => void>().toMatchTypeOf<AnalysisProgress>();
expectTypeOf(iterscope.ANALYSIS_PARTS).toEqualTypeOf<readonly AnalysisPart[]>();
expectTypeOf(iterscope.REPORT_PARTS).toEqualTypeOf<readonly AnalysisPart[]>();
expectTypeOf<AnalysisPart>().toEqualTypeOf<
  | 'info' | 'kernels' | 'nvtx' | 'nvtxGpu' | 'iterations' | 'phases' | 'gaps' | 'metrics' | 'host' | 'categories' | 'coverage' | 'health' | 'rankFigures' | 'servingSpan'
  | 'pytorchHost' | 'gilHolders' | 'memory' | 'findings' | 'timeline' | 'stepTimeline' | 'layers'
>();

expectTypeOf<AnalysisRequest>().toEqualTypeOf<{
  parts: readonly AnalysisPart[];
  logs?: ParsedIterationLog[];
  selection?: IterationSelection;
  categoryRules?: readonly CategoryRule[];
  requireIterations?: boolean;
  minGapNs?: number;
  deviceId?: number;
  kernels?: Pick<KernelSummaryOptions, 'nameBy' | 'includeGraphs'>;
  spanSamples?: boolean;
  communicationCategory?: string;
  findingThresholds?: Partial<FindingThresholds>;
  kernelNames?: KernelNames;
  torchTrace?: string;
  nvtxRead?: NvtxReadMode;
  layers?: LayerOptions;
}>();
expectTypeOf<LayerOptions>().toEqualTypeOf<{ source?: 'auto' | 'period'; outlierRatio?: number; spans?: boolean }>();
expectTypeOf<NvtxReadMode>().toEqualTypeOf<'auto' | 'background' | 'inline' | 'release'>();
expectTypeOf<KernelNames>().toEqualTypeOf<'short' | 'demangled'>();

// ---------------------------------------------------------------------------------------------
// The analysis: every part, null where not asked for

expectTypeOf<ExportAnalysis>().toEqualTypeOf<{
  file: string;
  parts: AnalysisPart[];
  metadata: ExportMetadata;
  capture: CaptureSettings;
  info: ExportInfo | null;
  kernels: KernelSummary | null;
  nvtx: NvtxSummary | null;
  projection: NvtxGpuProjection | null;
  iterations: IterationAnalysis | null;
  iterationError: string | null;
  phases: PhaseSummary[];
  metrics: IterationMetricsResult | null;
  gaps: GapAnalysis | null;
  host: HostSummary | null;
  categories: CategoryTime | null;
  coverage: ReportCoverage | null;
  health: CaptureHealth | null;
  gilHolders: GilHolderAnalysis[] | null;
  memory: MemoryTraffic | null;
  findings: FindingsResult | null;
  pytorchHost: PytorchHostSide | null;
  timeline: Timeline | null;
  stepTimeline?: iterscope.StepTimeline | null;
  rankFigures: RankFigures[] | null;
  servingSpan: ServingSpan | null;
  logs: ReportLogFile[];
  timingsMs: Record<string, number>;
  layers?: LayersAnalysis;
}>();
// One export per rank (`report`): the first export's report analysis with the cross-rank view, composed by src/ranks.
expectTypeOf<iterscope.ReportAcrossRanks>().toEqualTypeOf<iterscope.ReportData & { crossRank?: CrossRankView | null }>();
expectTypeOf<ReportLogFile>().toEqualTypeOf<{ file: string; records: number; skippedLines: number; formats: Partial<Record<iterscope.LogFormat, number>> }>();

// The parts' fields (names; their types are the parts' own).
expectTypeOf<keyof IterationAnalysis>().toEqualTypeOf<'file' | 'categories' | 'noGpuWork' | 'metricNames' | 'iterations' | 'coverage'>();
expectTypeOf<keyof IterationRow>().toEqualTypeOf<
  | 'iter' | 'pid' | 'startNs' | 'endNs' | 'wallNs' | 'gpuBusyNs' | 'gpuIdleNs' | 'kernelNs' | 'kernelCount' | 'categoryNs' | 'memcpyNs' | 'memcpyCount' | 'memsetNs' | 'memsetCount'
  | 'graphLaunches' | 'otherThreadOps' | 'label' | 'labelCounts' | 'contextRequests' | 'contextTokens' | 'generationRequests' | 'generationTokens' | 'phase' | 'phaseBasis'
  | 'captureOrder' | 'log' | 'matched' | 'labelMatchesLog' | 'idleByCauseNs' | 'metrics' | 'tokenDetail' | 'kvTokens' | 'attentionNsPer1kKvTokens'
>();
expectTypeOf<Pick<IterationRow, 'iter' | 'startNs' | 'endNs' | 'gpuBusyNs' | 'gpuIdleNs' | 'categoryNs' | 'phase'>>().toEqualTypeOf<{
  iter: number;
  startNs: number;
  endNs: number;
  gpuBusyNs: number;
  gpuIdleNs: number;
  categoryNs: Record<string, number>;
  phase: iterscope.Phase;
}>();
expectTypeOf<keyof GapAnalysis>().toEqualTypeOf<'file' | 'minGapNs' | 'gcTraced' | 'gilTraced' | 'iterationsFound' | 'devices' | 'gaps' | 'idleByCauseNs' | 'iterations' | 'phases' | 'threads' | 'syncApis' | 'notes'>();
expectTypeOf<keyof GapRow>().toEqualTypeOf<'deviceId' | 'pid' | 'startNs' | 'endNs' | 'durationNs' | 'iter' | 'phase' | 'cause' | 'causes' | 'before' | 'after' | 'launchCall' | 'smActivePct'>();
expectTypeOf<keyof KernelSummary>().toEqualTypeOf<'rows' | 'graphTraceRows' | 'graphsIncluded' | 'kernelTablePresent' | 'nullNameKernels' | 'unknownNameKernels'>();
expectTypeOf<KernelSummaryRow>().toEqualTypeOf<{ timePercent: number; name: string; total: number; count: number; avg: number; med: number; min: number; max: number; stdDev: number }>();
expectTypeOf<keyof NvtxSummary>().toEqualTypeOf<'rows' | 'unclosedRanges' | 'crossThreadRanges' | 'maxTimestampNs' | 'marks' | 'zeroLengthRanges'>();
expectTypeOf<keyof CaptureHealth>().toEqualTypeOf<
  'command' | 'tracing' | 'recorded' | 'nvtx' | 'diagnostics' | 'eventLoss' | 'incompleteCollection' | 'output' | 'crash' | 'noGpuWork' | 'processes' | 'launches' | 'kineto'
>();
expectTypeOf<keyof ExportInfo>().toEqualTypeOf<
  | 'file' | 'productVersion' | 'schemaVersion' | 'metadataTable' | 'sessionStartUtc' | 'sessionStartEpochNs' | 'durationNs' | 'activityStartNs' | 'activityEndNs' | 'gpus'
  | 'activeDevices' | 'processes' | 'rowCounts' | 'nvtxDomains' | 'graphTraceModeConfigured' | 'graphTraceMode' | 'gilTraced' | 'gcTraced' | 'profilerApiGated'
  | 'profileStartStop' | 'environment' | 'engine'
>();
expectTypeOf<keyof RunSummary>().toEqualTypeOf<'schema' | 'createdBy' | 'run' | 'categories' | 'overall' | 'phases' | 'iterations' | 'kernels' | 'nvtx' | 'findings' | 'basis' | 'capture' | 'gate' | 'iterationRowsOmitted'>();

// ---------------------------------------------------------------------------------------------
// Findings

expectTypeOf(iterscope.findingsInputOf).parameters.toEqualTypeOf<[ExportAnalysis]>();
expectTypeOf(iterscope.findingsInputOf).returns.toEqualTypeOf<FindingsInput | null>();
expectTypeOf(iterscope.findFindings).parameters.toEqualTypeOf<[FindingsInput, FindingsOptions?]>();
expectTypeOf(iterscope.findFindings).returns.toEqualTypeOf<FindingsResult>();
expectTypeOf<FindingsResult>().toEqualTypeOf<{
  schema: 'iterscope.findings/1';
  file: string;
  engine: FindingsEngine;
  basis: { iterations: number; wallNs: number; wallSource: 'iterations' | 'gpu-span' | 'none' };
  thresholds: FindingThresholds;
  findings: Finding[];
  ranks?: RankFindings[];
}>();
expectTypeOf<FindingsEngine>().toEqualTypeOf<'tensorrt-llm' | 'vllm' | 'sglang' | 'unknown'>();
expectTypeOf<Finding>().toEqualTypeOf<{
  id: string;
  title: string;
  severity: Severity;
  recoverableNs: number;
  recoverableShare: number | null;
  estimate: string;
  restsOnNs: number;
  evidence: Evidence[];
  remedy: string;
  section: string;
  confidence: { level: 'measured' | 'inferred' | 'not-traced'; traced: string[]; notTraced: string[] };
  hides?: string[];
  health?: 'blocking' | 'caveat';
}>();
expectTypeOf<Severity>().toEqualTypeOf<'high' | 'medium' | 'low' | 'info'>();

// ---------------------------------------------------------------------------------------------
// Options: the iteration selection (parsed, and as typed), the metrics request

expectTypeOf<IterationSelection>().toEqualTypeOf<{ rangeSpec?: IterationRangeSpec; firstIter?: number; profileRanges?: ProfileRange[]; logTz?: string; unnumberedInCaptureOrder?: boolean }>();
expectTypeOf<IterationSelectionOptions>().toEqualTypeOf<{
  iterationRange?: string | IterationRangeSpec;
  firstIter?: string | number;
  profileRange?: string | ProfileRange[];
  logTz?: string;
}>();
expectTypeOf(iterscope.parseIterationSelection).parameters.toEqualTypeOf<[IterationSelectionOptions?]>();
expectTypeOf(iterscope.parseIterationSelection).returns.toEqualTypeOf<IterationSelection>();
expectTypeOf<ProfileRange>().toEqualTypeOf<{ first: number; last: number }>();
expectTypeOf<IterationRangeSpec>().toEqualTypeOf<{ kind: 'pytorch' } | { kind: 'cpp'; name: string } | { kind: 'name'; name: string } | { kind: 'regex'; regex: RegExp; source: string }>();
// `.branded`: an interface compared with an intersection, property by property.
expectTypeOf<MetricsRequest>().branded.toEqualTypeOf<IterationSelectionOptions & { iters?: string; logs?: ParsedIterationLog[]; gpu?: string; metric?: string[] }>();
expectTypeOf(iterscope.metricsForExport).parameters.toEqualTypeOf<[string, MetricsRequest]>();
expectTypeOf(iterscope.metricsForExport).returns.toEqualTypeOf<MetricsCommandResult>();
expectTypeOf(iterscope.summarizeExport).parameters.toEqualTypeOf<[ExportHandle, Omit<AnalysisRequest, 'parts'>?, (SummaryTokens | null)?]>();
expectTypeOf(iterscope.summarizeExport).returns.toEqualTypeOf<RunSummary>();
expectTypeOf(iterscope.parseIterationLogFile).parameters.toEqualTypeOf<[string]>();
expectTypeOf(iterscope.parseIterationLogFile).returns.toEqualTypeOf<ParsedIterationLog>();

// ---------------------------------------------------------------------------------------------
// iterscope/queries: the handle, running builders, the schema, a builder's rows

expectTypeOf<queries.ExportHandle>().toEqualTypeOf<ExportHandle>();
expectTypeOf<ExportHandle>().toEqualTypeOf<{
  readonly path: string;
  readonly sqlite: BetterSqlite3.Database;
  readonly db: Kysely<queries.Database>;
  readonly metadata: ExportMetadata;
  hasTable(table: queries.TableName | string): boolean;
  hasColumn(table: queries.TableName | string, column: string): boolean;
  columnsOf(table: queries.TableName | string): readonly string[];
  declaredTypeOf?(table: queries.TableName | string, column: string): string | null;
  close(): void;
}>();
expectTypeOf<queries.QueryOptions>().toEqualTypeOf<{ pid?: number; deviceId?: number; startNs?: number; endNs?: number }>();
expectTypeOf<queries.StreamOptions>().toEqualTypeOf<{ safeIntegers?: boolean; raw?: boolean }>();
expectTypeOf<queries.KernelQueryOptions>().branded.toEqualTypeOf<queries.QueryOptions & { nameBy?: 'demangled' | 'short' }>();

/** The rows `iterateQuery` streams from `selectKernels`: typed by the builder. */
type KernelRow = ReturnType<typeof kernelRows> extends Generator<infer R> ? R : never;
function kernelRows(h: ExportHandle) {
  return queries.iterateQuery(h, queries.selectKernels(h));
}
expectTypeOf<KernelRow>().toEqualTypeOf<{
  start: number;
  end: number;
  deviceId: number;
  contextId: number;
  streamId: number;
  correlationId: number | null;
  globalPid: number | null;
  nameId: number;
  name: string | null;
}>();
expectTypeOf(queries.allRows(null as unknown as ExportHandle, queries.selectKernels(null as unknown as ExportHandle))).toEqualTypeOf<KernelRow[]>();
expectTypeOf(queries.forEachRow).parameters.toMatchTypeOf<[ExportHandle, unknown, (...values: any[]) => void, { safeIntegers?: boolean }?]>();
expectTypeOf(queries.forEachRow).returns.toEqualTypeOf<number>();
expectTypeOf<keyof queries.Database>().toEqualTypeOf<
  | 'CUPTI_ACTIVITY_KIND_KERNEL' | 'CUPTI_ACTIVITY_KIND_RUNTIME' | 'CUPTI_ACTIVITY_KIND_MEMCPY' | 'CUPTI_ACTIVITY_KIND_MEMSET' | 'CUPTI_ACTIVITY_KIND_SYNCHRONIZATION'
  | 'CUPTI_ACTIVITY_KIND_GRAPH_TRACE' | 'CUDA_GRAPH_NODE_EVENTS' | 'CUDA_GRAPH_EVENTS' | 'NVTX_EVENTS' | 'StringIds' | 'ThreadNames' | 'PROCESSES' | 'TARGET_INFO_GPU'
  | 'TARGET_INFO_CUDA_DEVICE' | 'TARGET_INFO_SESSION_START_TIME' | 'META_DATA_EXPORT' | 'EXPORT_META_DATA' | 'META_DATA_CAPTURE' | 'ANALYSIS_DETAILS' | 'OSRT_API'
  | 'ENUM_NSYS_EVENT_TYPE' | 'ENUM_NSYS_EVENT_CLASS' | 'ENUM_CUDA_MEMCPY_OPER' | 'ENUM_CUDA_MEM_KIND' | 'ENUM_CUPTI_SYNC_TYPE' | 'ENUM_CUDA_KERNEL_LAUNCH_TYPE' | 'GPU_METRICS'
  | 'DIAGNOSTIC_EVENT' | 'ENUM_DIAGNOSTIC_SEVERITY_LEVEL' | 'ProcessStreams' | 'ANALYSIS_FILE' | 'COMPOSITE_EVENTS' | 'SCHED_EVENTS' | 'TARGET_INFO_GPU_METRICS' | 'KINETO_CPU_OPS'
>();
expectTypeOf<queries.Database['CUPTI_ACTIVITY_KIND_KERNEL']>().toEqualTypeOf<queries.KernelTable>();
expectTypeOf<queries.Database['NVTX_EVENTS']>().toEqualTypeOf<queries.NvtxEventsTable>();
expectTypeOf(queries.selectNvtxEvents).parameters.toEqualTypeOf<[ExportHandle, queries.NvtxQueryOptions?]>();
expectTypeOf(queries.selectGpuOps).parameters.toEqualTypeOf<[ExportHandle, queries.GpuOpsQueryOptions?]>();
expectTypeOf(queries.pidOf).parameters.toEqualTypeOf<[queries.IdSource]>();
