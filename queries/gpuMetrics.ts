import { sql } from 'kysely';
import type { ExportHandle } from './handle.js';
import { gpuRowGlobalPid, pidOf } from './globalIds.js';

/**
 * GPU metric sampling (`nsys profile --gpu-metrics-devices=... --gpu-metrics-frequency=...`).
 *
 * `GPU_METRICS(timestamp, typeId, metricId, value)` holds the samples; `TARGET_INFO_GPU_METRICS
 * (typeId, metricId, metricName)` names them. `metricId` is not stable across captures (and may
 * differ between GPUs of one capture): resolve metrics by name, per `typeId`.
 *
 * Which GPU a `typeId` samples: `typeId` is a serialized GlobalId whose low byte is the GPU's
 * `TARGET_INFO_GPU.id`. On the 2025.3 fixture, typeId = 281479271677952 = 2^48 + 2^32 + 0:
 * - bits 48..63 = 1 = `TARGET_INFO_GPU.vmId >> 48` (vmId 281474976710656 = 2^48, also
 *   `ANALYSIS_DETAILS.globalVid`): the host/VM part of the id;
 * - bits 32..47 = 1: the event-type slot of the `GpuMetrics` generic event source
 *   (`GENERIC_EVENT_SOURCES`, whose sourceId equals this typeId);
 * - bits 0..7 = 0 = `TARGET_INFO_GPU.id` of the one GPU, the id in
 *   `META_DATA_CAPTURE` `GPU_METRICS_OPTIONS:GPU_0:ID`.
 * BSC's nsys2prv converter reads the device the same way (`typeId & 0xFF`).
 */

/** Mask giving the GPU id (`TARGET_INFO_GPU.id`) from a `GPU_METRICS` / `TARGET_INFO_GPU_METRICS` typeId. */
export const GPU_METRICS_GPU_ID_MASK = 0xff;

/** The GPU id a metrics `typeId` samples (`typeId & 0xFF`); accepts bigint for ids above 2^53. */
export function gpuIdOfMetricsTypeId(typeId: number | bigint): number {
  return typeof typeId === 'bigint' ? Number(typeId & 0xffn) : Number(BigInt(Math.trunc(typeId)) & 0xffn);
}

/** Both metric tables present. Cheap (no query): an export without them has no metrics, not an error. */
export function hasGpuMetricTables(handle: ExportHandle): boolean {
  return handle.hasTable('GPU_METRICS') && handle.hasTable('TARGET_INFO_GPU_METRICS');
}

/**
 * Metric names per event type: `typeId` (read with safeIntegers when it may exceed 2^53), the GPU id
 * it samples (`typeId & 255`, computed in SQL), `metricId` and `metricName`. Distinct rows.
 */
export function selectGpuMetricNames(handle: ExportHandle) {
  return handle.db
    .selectFrom('TARGET_INFO_GPU_METRICS')
    .select([sql<number>`"typeId" & 255`.as('gpuId'), 'typeId', 'metricId', 'metricName'])
    .distinct()
    .orderBy('gpuId')
    .orderBy('metricId');
}

/** Whether `GPU_METRICS` holds at least one row (O(1): stops at the first row). */
export function selectAnyGpuMetricSample(handle: ExportHandle) {
  return handle.db.selectFrom('GPU_METRICS').select(sql<number>`1`.as('one')).limit(1);
}

export interface GpuMetricSampleFilter {
  /** Keep samples with `startNs <= timestamp <= endNs` (inclusive: boundary samples matter). */
  startNs?: number;
  endNs?: number;
  /** Restrict to these metric ids (of any of `gpuIds`: callers drop the (gpu, metric) pairs they did not ask for). */
  metricIds?: readonly number[];
  /** Restrict to these GPU ids (`typeId & 255`). */
  gpuIds?: readonly number[];
  /** ORDER BY timestamp (a sort of the whole selection: only when the table is not in time order). */
  orderByTime?: boolean;
}

/**
 * Samples as `(gpuId, metricId, timestamp, value)` in that select order, for `forEachRow`.
 * Without `orderByTime`, rows come in table (rowid) order.
 */
export function selectGpuMetricSamples(handle: ExportHandle, f: GpuMetricSampleFilter = {}) {
  let q = handle.db.selectFrom('GPU_METRICS').select([sql<number>`"typeId" & 255`.as('gpuId'), 'metricId', 'timestamp', 'value']);
  if (f.startNs !== undefined) q = q.where('timestamp', '>=', f.startNs);
  if (f.endNs !== undefined) q = q.where('timestamp', '<=', f.endNs);
  if (f.metricIds && f.metricIds.length) q = q.where('metricId', 'in', [...f.metricIds]);
  if (f.gpuIds && f.gpuIds.length) q = q.where(sql<number>`"typeId" & 255`, 'in', [...f.gpuIds]);
  if (f.orderByTime) q = q.orderBy('timestamp');
  return q;
}

/** GPUs the target reported, with the `vmId` that metric typeIds carry in their high bits. */
export function selectMetricGpus(handle: ExportHandle) {
  const cols = new Set(handle.columnsOf('TARGET_INFO_GPU'));
  return handle.db
    .selectFrom('TARGET_INFO_GPU')
    .select([
      'id',
      cols.has('name') ? 'name' : sql<string | null>`NULL`.as('name'),
      cols.has('vmId') ? sql<number>`"vmId" >> 48`.as('vmHigh') : sql<number | null>`NULL`.as('vmHigh'),
      cols.has('cuDevice') ? 'cuDevice' : sql<number | null>`NULL`.as('cuDevice'),
      cols.has('busLocation') ? 'busLocation' : sql<string | null>`NULL`.as('busLocation'),
    ])
    .orderBy('id');
}

/** `typeId >> 48` of each metrics event type (the VM/host part, compared with `TARGET_INFO_GPU.vmId >> 48`). */
export function selectGpuMetricTypeHighBits(handle: ExportHandle) {
  return handle.db
    .selectFrom('TARGET_INFO_GPU_METRICS')
    .select([sql<number>`"typeId" & 255`.as('gpuId'), sql<number>`"typeId" >> 48`.as('vmHigh')])
    .distinct();
}

/** `GPU_METRICS_OPTIONS:*` capture settings (sampling frequency in Hz, GPU ids, metric set index). */
export function selectGpuMetricsOptions(handle: ExportHandle) {
  return handle.db.selectFrom('META_DATA_CAPTURE').select(['name', 'value']).where('name', 'like', 'GPU_METRICS_OPTIONS:%');
}

/** CUDA device ordinal (per process) to GPU id: maps a kernel's `deviceId` to the GPU metrics sample. */
export function selectCudaDeviceGpus(handle: ExportHandle) {
  return handle.db.selectFrom('TARGET_INFO_CUDA_DEVICE').select(['pid', 'cudaId', 'gpuId']);
}

/** Kernel count per (process, CUDA device): which device a process's work ran on. */
export function selectKernelDevicesByPid(handle: ExportHandle) {
  return handle.db
    .selectFrom('CUPTI_ACTIVITY_KIND_KERNEL')
    .select([pidOf(gpuRowGlobalPid(handle, 'CUPTI_ACTIVITY_KIND_KERNEL')).as('pid'), 'deviceId', sql<number>`count(*)`.as('kernels')])
    .groupBy(['pid', 'deviceId']);
}
