/**
 * Kysely `Database` interface for the Nsight Systems SQLite export tables iterscope reads.
 *
 * Column sets follow NVIDIA's "SQLite Schema Reference" and the real exports in
 * ../shared/fixtures (nsys 2021.x to 2026.2). Columns that appear or disappear across nsys versions
 * are optional (`?`); always check `ExportHandle.hasColumn` before selecting one. All times are
 * integer nanoseconds from session start. Ids that pack several fields (`globalTid`, `globalPid`)
 * can exceed 2^53 on Windows/VM exports: they are typed `number | bigint` because the reader
 * decides (safeIntegers) per statement.
 */

/** A 64-bit integer column: `bigint` when read with safeIntegers, else `number`. */
export type Int64 = number | bigint;

/** Shared by every GPU activity table (kernel, memcpy, memset, sync, graph trace). */
export interface GpuActivityColumns {
  start: number;
  end: number;
  deviceId: number;
  contextId: number;
  /** Added by nsys 2024.5 (schema 3.13). */
  greenContextId?: number | null;
  streamId: number;
  /** The CUDA API call that launched it; unique per process only. */
  correlationId: number | null;
  /** Launching process: `globalTid & ~0xFFFFFF` of the API call. */
  globalPid: Int64 | null;
}

export interface KernelTable extends GpuActivityColumns {
  demangledName: number;
  shortName: number;
  /** Absent before nsys 2022.1. */
  mangledName?: number | null;
  launchType?: number | null;
  cacheConfig?: number | null;
  registersPerThread: number;
  gridX: number;
  gridY: number;
  gridZ: number;
  blockX: number;
  blockY: number;
  blockZ: number;
  staticSharedMemory: number;
  dynamicSharedMemory: number;
  localMemoryPerThread: number;
  localMemoryTotal: number;
  gridId: number;
  sharedMemoryExecuted?: number | null;
  /** Set for kernels that ran as CUDA-graph nodes (node-level graph trace). */
  graphNodeId?: number | null;
  sharedMemoryLimitConfig?: number | null;
  /** Added by nsys 2025.5. */
  graphId?: number | null;
}

export interface RuntimeTable {
  start: number;
  end: number;
  /** 0 runtime API, 1 driver API, 67 CUDA backtrace duplicate (2022.x): see ENUM_NSYS_EVENT_CLASS. */
  eventClass: number;
  globalTid: Int64 | null;
  correlationId: number | null;
  nameId: number;
  returnValue: number;
  callchainId?: number | null;
}

export interface MemcpyTable extends GpuActivityColumns {
  bytes: number;
  copyKind: number;
  srcKind?: number | null;
  dstKind?: number | null;
  srcDeviceId?: number | null;
  dstDeviceId?: number | null;
  graphNodeId?: number | null;
  copyCount?: number | null;
}

export interface MemsetTable extends GpuActivityColumns {
  value: number;
  bytes: number;
  graphNodeId?: number | null;
  memKind?: number | null;
}

export interface SynchronizationTable extends GpuActivityColumns {
  /** Not comparable across nsys versions: classify by the runtime API name instead. */
  syncType: number;
  deprecatedSyncType?: number | null;
  eventId: number;
  eventSyncId?: number | null;
}

/** One row per whole-graph launch under `--cuda-graph-trace graph`. */
export interface GraphTraceTable extends GpuActivityColumns {
  graphId: number;
  graphExecId: number;
}

export interface CudaGraphNodeEventsTable {
  start: number;
  end: number;
  eventClass: number;
  globalTid: Int64 | null;
  nameId: number;
  graphNodeId: number;
  originalGraphNodeId: number | null;
}

/** 2022.x layout has `graphNodeId, originalGraphNodeId`; 2025.x has `graphId, originalGraphId, graphExecId`. */
export interface CudaGraphEventsTable {
  start: number;
  end: number;
  eventClass: number;
  globalTid: Int64 | null;
  nameId: number;
  graphId?: number | null;
  originalGraphId?: number | null;
  graphExecId?: number | null;
  graphNodeId?: number | null;
  originalGraphNodeId?: number | null;
}

export interface NvtxEventsTable {
  start: number;
  /** NULL for marks, domain rows and ranges never closed. */
  end: number | null;
  /** 59 push/pop, 60 start/end, 34 mark, 33 category, 39 thread name, 75/76 domain create/destroy. */
  eventType: number;
  rangeId: number | null;
  category: number | null;
  color: number | null;
  /** Plain (unregistered) text. */
  text: string | null;
  globalTid: Int64 | null;
  /** Thread that ended a start/end range; NULL when it ended on the starting thread. */
  endGlobalTid: Int64 | null;
  /** Registered string: StringIds.id. */
  textId: number | null;
  domainId: number | null;
  uint64Value?: Int64 | null;
  int64Value?: Int64 | null;
  doubleValue?: number | null;
  uint32Value?: number | null;
  int32Value?: number | null;
  floatValue?: number | null;
  jsonTextId?: number | null;
  jsonText?: string | null;
  /** Added by nsys 2024.6. */
  binaryData?: string | null;
  /** Added by schema 3.28. */
  eventId?: number;
}

export interface StringIdsTable {
  id: number;
  value: string;
}

export interface ThreadNamesTable {
  nameId: number;
  priority: number | null;
  globalTid: Int64 | null;
}

export interface ProcessesTable {
  globalPid: Int64 | null;
  pid: number | null;
  name: string | null;
}

export interface TargetInfoGpuTable {
  vmId: number;
  id: number;
  name: string | null;
  busLocation: string | null;
  totalMemory: number | null;
  memoryBandwidth: number | null;
  clockRate: number | null;
  smCount: number | null;
  uuid: string | null;
  chipName: string | null;
  cuDevice: number | null;
  computeMajor: number | null;
  computeMinor: number | null;
}

export interface TargetInfoCudaDeviceTable {
  gpuId: number | null;
  cudaId: number;
  pid: number;
  uuid?: string | null;
  numMultiprocessors?: number | null;
}

export interface TargetInfoSessionStartTimeTable {
  /** Exceeds 2^53: always read as bigint. */
  utcEpochNs: Int64 | null;
  utcTime: string | null;
  localTime: string | null;
  /** Added by schema 3.24.14. */
  systemClockNs?: Int64 | null;
}

/** name/value metadata: `META_DATA_EXPORT` (schema >= 3.4) or `EXPORT_META_DATA` (older). */
export interface MetaDataTable {
  name: string;
  value: string | null;
}

export interface AnalysisDetailsTable {
  globalVid: Int64;
  /** Session length; for a time-trimmed export it can describe the original capture. */
  duration: number;
  startTime: Int64;
  stopTime: Int64;
}

export interface OsrtApiTable {
  start: number;
  end: number;
  eventClass: number;
  globalTid: Int64 | null;
  nameId: number;
  returnValue: number;
  nestingLevel: number | null;
  callchainId: number | null;
}

/** Every ENUM_* table: `(id, name, label)`; there is no `value` column. */
export interface EnumTable {
  id: number;
  name: string | null;
  label: string | null;
}

/**
 * `GPU_METRICS`: one row per sampled metric value (`nsys profile --gpu-metrics-devices=...`).
 * No index: scans are full-table. Rows come in time order on the exports seen so far, but that
 * is not documented; readers must not rely on it (see `src/load/metricScan.ts`).
 */
export interface GpuMetricsTable {
  /** Raw device timestamp before conversion to session time (present in 2025.x exports; may be absent). */
  rawTimestamp?: Int64;
  /** Session time (ns). */
  timestamp: number;
  /**
   * Serialized GlobalId of the event type: `vmId | (1 << 32) | gpuId` on the exports seen. The
   * low byte is the sampled GPU's `TARGET_INFO_GPU.id`; bits 48+ equal that GPU's `vmId`.
   * Can exceed 2^53 when hardware-id bits are set: derive the GPU in SQL (`typeId & 255`).
   */
  typeId: Int64;
  /** References `TARGET_INFO_GPU_METRICS.metricId` for the same `typeId`; not stable across captures. */
  metricId: number;
  /** INTEGER. Clock metrics named `[MHz]` hold Hz on nsys 2025.x exports. */
  value: number;
}

/** `TARGET_INFO_GPU_METRICS`: metric names per event type (GPU). Resolve metrics by name, never by id. */
export interface TargetInfoGpuMetricsTable {
  typeId: Int64;
  /** References `GENERIC_EVENT_SOURCES.sourceId` (the `GpuMetrics` source); NOT NULL in 2025.x. */
  sourceId?: Int64;
  /** Empty on the 2025.3 fixture. */
  typeName?: string | null;
  metricId: number;
  metricName: string;
}

/**
 * `KINETO_CPU_OPS`: not an nsys table. Written by the Kineto conversion (src/kineto/convert/convert.ts,
 * DDL in queries/nsysDdl.ts) for the PyTorch profiler's aten ops (`cpu_op`), so it is only in
 * converted traces: check `hasTable`. Times are ns from session start like the nsys tables.
 */
export interface KinetoCpuOpsTable {
  start: number;
  end: number;
  globalTid: Int64 | null;
  /** StringIds id of the op name (`aten::mm`). */
  nameId: number;
  /** Kineto's "External id", shared with the runtime calls the op made. */
  externalId: number | null;
  /** Nesting depth on the thread (0: outermost). */
  depth: number | null;
  /** rowid of the enclosing op, NULL at depth 0. */
  parentRowid: number | null;
  /** Duration minus the direct children's. */
  selfNs: number | null;
}

/** `DIAGNOSTIC_EVENT` (nsys 2024.5+): what nsys itself reported during the capture. */
export interface DiagnosticEventTable {
  /** Session ns; negative before the session started (daemon set-up messages). */
  timestamp: number;
  /** REFERENCES ENUM_DIAGNOSTIC_TIMESTAMP_SOURCE(id). */
  timestampType: number;
  /** REFERENCES ENUM_DIAGNOSTIC_SOURCE_TYPE(id): injection, daemon, analysis. */
  source: number;
  /** REFERENCES ENUM_DIAGNOSTIC_SEVERITY_LEVEL(id): 1 info, 2 warning, 3 error on the exports seen. */
  severity: number;
  /** The message itself (not a StringIds id). */
  text: string;
  /** The process it is about; pid 0 for nsys's own (daemon, session) messages. */
  globalPid: Int64 | null;
}

/** `ProcessStreams` (every version seen, 2021 to 2026): the profiled program's stdout/stderr, text in StringIds. */
export interface ProcessStreamsTable {
  globalPid: Int64;
  /** StringIds id of the stream file's path (`.../pid_510_stderr.log`). */
  filenameId: number;
  /** StringIds id of the stream's whole text. */
  contentId: number;
}

/** `ANALYSIS_FILE`: the same stream files; 2024.5 stores the text inline (`content`), later exports a StringIds id. */
export interface AnalysisFileTable {
  id: number;
  filename: string | null;
  contentId?: number | null;
  content?: string | null;
  globalPid: Int64;
}

/** `COMPOSITE_EVENTS`: CPU IP samples (one per sample, the thread that was running). */
export interface CompositeEventsTable {
  id: number;
  start: number;
  cpu: number | null;
  threadState: number | null;
  globalTid: Int64 | null;
  cpuCycles: number;
}

/** `SCHED_EVENTS`: thread scheduling (context switches). */
export interface SchedEventsTable {
  start: number;
  cpu: number;
  isSchedIn: number;
  globalTid: Int64 | null;
  threadState: number | null;
  threadBlock: number | null;
}

export interface Database {
  CUPTI_ACTIVITY_KIND_KERNEL: KernelTable;
  CUPTI_ACTIVITY_KIND_RUNTIME: RuntimeTable;
  CUPTI_ACTIVITY_KIND_MEMCPY: MemcpyTable;
  CUPTI_ACTIVITY_KIND_MEMSET: MemsetTable;
  CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: SynchronizationTable;
  CUPTI_ACTIVITY_KIND_GRAPH_TRACE: GraphTraceTable;
  CUDA_GRAPH_NODE_EVENTS: CudaGraphNodeEventsTable;
  CUDA_GRAPH_EVENTS: CudaGraphEventsTable;
  NVTX_EVENTS: NvtxEventsTable;
  StringIds: StringIdsTable;
  ThreadNames: ThreadNamesTable;
  PROCESSES: ProcessesTable;
  TARGET_INFO_GPU: TargetInfoGpuTable;
  TARGET_INFO_CUDA_DEVICE: TargetInfoCudaDeviceTable;
  TARGET_INFO_SESSION_START_TIME: TargetInfoSessionStartTimeTable;
  META_DATA_EXPORT: MetaDataTable;
  EXPORT_META_DATA: MetaDataTable;
  META_DATA_CAPTURE: MetaDataTable;
  ANALYSIS_DETAILS: AnalysisDetailsTable;
  OSRT_API: OsrtApiTable;
  ENUM_NSYS_EVENT_TYPE: EnumTable;
  ENUM_NSYS_EVENT_CLASS: EnumTable;
  ENUM_CUDA_MEMCPY_OPER: EnumTable;
  ENUM_CUDA_MEM_KIND: EnumTable;
  ENUM_CUPTI_SYNC_TYPE: EnumTable;
  ENUM_CUDA_KERNEL_LAUNCH_TYPE: EnumTable;
  GPU_METRICS: GpuMetricsTable;
  DIAGNOSTIC_EVENT: DiagnosticEventTable;
  ENUM_DIAGNOSTIC_SEVERITY_LEVEL: EnumTable;
  ProcessStreams: ProcessStreamsTable;
  ANALYSIS_FILE: AnalysisFileTable;
  COMPOSITE_EVENTS: CompositeEventsTable;
  SCHED_EVENTS: SchedEventsTable;
  TARGET_INFO_GPU_METRICS: TargetInfoGpuMetricsTable;
  /** Optional, converted Kineto traces only. */
  KINETO_CPU_OPS: KinetoCpuOpsTable;
}

export type TableName = keyof Database;

/** NVTX event types (stable ids from nsys 2022.x to 2026.x; old exports have no enum table). */
export const NvtxEventType = {
  Category: 33,
  Mark: 34,
  Thread: 39,
  PushPopRange: 59,
  StartEndRange: 60,
  NvtxtPushPopRange: 70,
  NvtxtStartEndRange: 71,
  DomainCreate: 75,
  DomainDestroy: 76,
} as const;

/** The event types nsys's NVTX reports treat as ranges. */
export const NVTX_RANGE_EVENT_TYPES = [59, 60, 70, 71] as const;

/** `ENUM_NSYS_EVENT_CLASS` ids for CUPTI_ACTIVITY_KIND_RUNTIME rows. */
export const RuntimeEventClass = {
  CudaRuntime: 0,
  CudaDriver: 1,
  /** 2022.x: a duplicate of a runtime call carrying its backtrace (same correlationId). */
  CudaBacktrace: 67,
} as const;
