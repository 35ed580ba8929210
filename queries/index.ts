/**
 * `iterscope/queries`: typed Kysely queries over Nsight Systems SQLite exports, for library users.
 * Open an export with `withExport`/`openExport` (from `iterscope`), build a query here and run it:
 *
 * ```ts
 * withExport('run.sqlite', (h) => { for (const k of iterateQuery(h, selectKernels(h, { pid: 42 }))) console.log(k.name, k.end - k.start); });
 * ```
 *
 * The names are listed one by one (no star re-exports): adding or removing one is a decision, pinned by
 * test/api/queries.test.ts. Left out on purpose: the statements that write (the PyTorch profiler
 * trace conversion, kinetoWriter.ts), the probe `openExport` runs before a handle exists
 * (probe.ts), the row checks' SQL fragments and counters (validRows.ts), and the expression helpers
 * the builders are made of (filters.ts, the globalPid helpers of globalIds.ts).
 */

// The schema: one interface per table; optional columns are the ones that differ across nsys versions.
export {
  NvtxEventType,
  NVTX_RANGE_EVENT_TYPES,
  RuntimeEventClass,
  type Database,
  type TableName,
  type Int64,
  type GpuActivityColumns,
  type KernelTable,
  type RuntimeTable,
  type MemcpyTable,
  type MemsetTable,
  type SynchronizationTable,
  type GraphTraceTable,
  type CudaGraphNodeEventsTable,
  type CudaGraphEventsTable,
  type NvtxEventsTable,
  type StringIdsTable,
  type ThreadNamesTable,
  type ProcessesTable,
  type TargetInfoGpuTable,
  type TargetInfoCudaDeviceTable,
  type TargetInfoSessionStartTimeTable,
  type MetaDataTable,
  type AnalysisDetailsTable,
  type OsrtApiTable,
  type EnumTable,
  type GpuMetricsTable,
  type TargetInfoGpuMetricsTable,
  type KinetoCpuOpsTable,
  type DiagnosticEventTable,
  type ProcessStreamsTable,
  type AnalysisFileTable,
  type CompositeEventsTable,
  type SchedEventsTable,
} from './schema.js';

// The handle queries run on, and running them: stream, collect, or call back per row.
export type { ExportHandle, ExportMetadata, QueryOptions } from './handle.js';
export { prepareQuery, iterateQuery, allRows, forEachRow, type StreamOptions } from './run.js';
export { pidOf, tidOf, threadKeyOf, type IdSource } from './globalIds.js';

// GPU work: kernels, copies, sets, graph launches, syncs, and all of them as one stream of GPU ops.
export { selectKernels, selectKernelDurations, loadKernelNames, type KernelQueryOptions } from './kernelEvents.js';
export { selectKernelsNamed, selectLaunchesOfKernelsNamed } from './kernelLaunches.js';
export { selectMemcpys } from './memcpy.js';
export { selectMemsets } from './memset.js';
export { selectGraphTraces, selectGraphTraceCount } from './graphTrace.js';
export { selectSynchronizations } from './sync.js';
export {
  selectGpuOps,
  selectGpuOpsOf,
  presentGpuOpSources,
  selectGpuOpProcessCount,
  GpuOpKind,
  GPU_OP_KIND_NAMES,
  GPU_OP_SOURCES,
  type GpuOpRow,
  type GpuOpSource,
  type GpuOpsQueryOptions,
} from './gpuOps.js';

// CUDA API calls and the launch calls among them.
export { selectRuntimeCalls, selectApiCallRows, stripApiVersion } from './runtime.js';
export { selectLaunchCalls, selectLaunchCallsPerThread, selectLastApiCallEnd, LAUNCH_NAME_PATTERNS } from './launchCalls.js';

// NVTX: events with resolved text and domain, ranges by name, the rows the GPU projection reads.
export { selectNvtxEvents, selectNvtxRangeRows, selectNvtxMarkCount, selectNvtxMaxTimestamp, selectNvtxRangeWithText, type NvtxQueryOptions } from './nvtxEvents.js';
export { selectNvtxColumnRows, selectNvtxHostCauseColumnRows, type GilHoldFilter } from './nvtxColumns.js';
export { selectNvtxDomainCreates, selectNvtxRangeCountsByDomain } from './nvtxDomains.js';
export { selectHostCauseRanges, selectNvtxRangesNamed, type HostCauseRangeFilter } from './hostRanges.js';
export { selectProjectionRanges, selectProjectionCalls, selectProjectionOps, selectNvtxLabelParts, selectIrregularLaunchId } from './nvtxProjection.js';

// Threads, processes, GPUs, the session and the capture.
export { selectThreads } from './threads.js';
export { selectProcesses } from './processes.js';
export { selectGpus } from './gpus.js';
export { selectSessionStart, selectSessionStartEpochNs, readSessionStartEpochNs, selectAnalysisDetails, selectCaptureMetadata } from './session.js';
export { selectRowIdBound, rowIdBound, selectActivitySpan, selectDeviceIds, selectApiCallerPids, selectKernelPids, selectGraphNodeKernel } from './capture.js';
export { selectStrings, selectStringIdsOf, loadStrings, stringLookup } from './strings.js';

// GPU metric samples (`--gpu-metrics-devices`).
export {
  hasGpuMetricTables,
  selectGpuMetricNames,
  selectGpuMetricSamples,
  selectAnyGpuMetricSample,
  selectMetricGpus,
  selectGpuMetricTypeHighBits,
  selectGpuMetricsOptions,
  selectCudaDeviceGpus,
  selectKernelDevicesByPid,
  gpuIdOfMetricsTypeId,
  GPU_METRICS_GPU_ID_MASK,
  type GpuMetricSampleFilter,
} from './gpuMetrics.js';

// PyTorch profiler CPU ops (a Kineto trace read into the nsys data model), and capture health.
export { selectKinetoCpuOps } from './kinetoCpuOps.js';
export { selectDiagnostics, selectProcessStreams, selectAnalysisFiles, selectActivityPerProcess, selectProfilerApiStart, type ProcessActivityTable } from './healthTables.js';
