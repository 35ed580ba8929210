import type { ExportHandle } from '../../queries/handle.js';
import {
  hasGpuMetricTables,
  selectAnyGpuMetricSample,
  selectCudaDeviceGpus,
  selectGpuMetricNames,
  selectGpuMetricsOptions,
  selectGpuMetricTypeHighBits,
  selectKernelDevicesByPid,
  selectMetricGpus,
} from '../../queries/gpuMetrics.js';
import { allRows } from '../../queries/run.js';
import { hasCaptureMetadata } from '../../queries/session.js';
import { hasColumns } from '../../queries/optionalColumns.js';
import type { LoadedExport } from './loadedExport.js';

/**
 * What GPU metrics an export holds: which GPUs were sampled (`typeId & 0xFF` = `TARGET_INFO_GPU.id`,
 * see queries/gpuMetrics.ts), and each GPU's metrics by name. Reading it costs a few small queries;
 * on an export without metric tables it costs nothing. The samples themselves: metricScan.ts.
 */

/** A sampled GPU. */
export interface MetricGpu {
  /** `TARGET_INFO_GPU.id` (= `typeId & 0xFF`). */
  gpuId: number;
  name: string | null;
  /** CUDA ordinal nsys saw for this GPU (`TARGET_INFO_GPU.cuDevice`). */
  cuDevice: number | null;
  busLocation: string | null;
  /** Whether the typeId's high bits equal the GPU's `vmId >> 48` (null: no TARGET_INFO_GPU row). */
  vmIdMatches: boolean | null;
}

/** One metric of one GPU. */
export interface MetricDef {
  gpuId: number;
  /** Id in this capture only. */
  metricId: number;
  /** nsys's name, e.g. `SMs Active [Throughput %]`: the key of every result. */
  name: string;
  /** Name without the bracketed unit: `SMs Active`. */
  baseName: string;
  /** Bracketed unit text: `Throughput %`, `MHz`, `Avg`, ... (null when none). */
  unit: string | null;
}

export interface MetricCatalog {
  available: boolean;
  /** Why no metrics are available (null when available). */
  reason: string | null;
  gpus: MetricGpu[];
  metrics: MetricDef[];
  /** `GPU_METRICS_OPTIONS:SAMPLING_FREQUENCY` (Hz), when the capture recorded it. */
  samplingHz: number | null;
}

export function baseMetricName(name: string): string {
  return name.replace(/\s*\[[^\]]*\]\s*$/, '').trim();
}

export function metricUnitText(name: string): string | null {
  const m = /\[([^\]]*)\]\s*$/.exec(name);
  return m ? m[1] : null;
}

function noMetrics(reason: string): MetricCatalog {
  return { available: false, reason, gpus: [], metrics: [], samplingHz: null };
}

/** Reads the metric catalog (once per export). Never throws for an export without metrics: `available` is false and `reason` says why. */
export function readMetricCatalog(loaded: LoadedExport): MetricCatalog {
  // Sampled metrics whose tables lack a column the catalog reads: exit 2, one line (contract.ts).
  if (hasGpuMetricTables(loaded.handle)) loaded.requireContract('gpuMetrics');
  return loaded.cached('metricCatalog', () => catalogOf(loaded.handle));
}

function catalogOf(handle: ExportHandle): MetricCatalog {
  if (!hasGpuMetricTables(handle)) {
    const missing = ['GPU_METRICS', 'TARGET_INFO_GPU_METRICS'].filter((t) => !handle.hasTable(t));
    return noMetrics(`no GPU metrics in this export (no ${missing.join(' / ')} table: capture with nsys profile --gpu-metrics-devices=...)`);
  }
  if (allRows(handle, selectAnyGpuMetricSample(handle)).length === 0) return noMetrics('no GPU metrics in this export (GPU_METRICS is empty)');

  const names = allRows(handle, selectGpuMetricNames(handle), { safeIntegers: true }) as { gpuId: bigint | number; metricId: bigint | number; metricName: string }[];
  const seen = new Set<string>();
  const metrics: MetricDef[] = [];
  for (const r of names) {
    const gpuId = Number(r.gpuId);
    const metricId = Number(r.metricId);
    const key = `${gpuId}:${metricId}`;
    if (seen.has(key) || r.metricName == null) continue;
    seen.add(key);
    const name = String(r.metricName);
    metrics.push({ gpuId, metricId, name, baseName: baseMetricName(name), unit: metricUnitText(name) });
  }
  if (metrics.length === 0) return noMetrics('no GPU metrics in this export (TARGET_INFO_GPU_METRICS names no metric)');

  const gpuIds = [...new Set(metrics.map((m) => m.gpuId))].sort((a, b) => a - b);
  const info = new Map<number, { name: string | null; cuDevice: number | null; busLocation: string | null; vmHigh: number | null }>();
  if (handle.hasTable('TARGET_INFO_GPU')) {
    for (const g of allRows(handle, selectMetricGpus(handle))) {
      info.set(Number(g.id), { name: g.name ?? null, cuDevice: g.cuDevice == null ? null : Number(g.cuDevice), busLocation: g.busLocation ?? null, vmHigh: g.vmHigh == null ? null : Number(g.vmHigh) });
    }
  }
  const typeHigh = new Map<number, number>();
  for (const t of allRows(handle, selectGpuMetricTypeHighBits(handle))) typeHigh.set(Number(t.gpuId), Number(t.vmHigh));
  const gpus: MetricGpu[] = gpuIds.map((gpuId) => {
    const g = info.get(gpuId);
    const high = typeHigh.get(gpuId);
    return {
      gpuId,
      name: g?.name ?? null,
      cuDevice: g?.cuDevice ?? null,
      busLocation: g?.busLocation ?? null,
      vmIdMatches: g && g.vmHigh != null && high != null ? g.vmHigh === high : null,
    };
  });

  let samplingHz: number | null = null;
  if (hasCaptureMetadata(handle)) {
    for (const r of allRows(handle, selectGpuMetricsOptions(handle))) {
      if (r.name === 'GPU_METRICS_OPTIONS:SAMPLING_FREQUENCY' && r.value != null && Number(r.value) > 0) samplingHz = Number(r.value);
    }
  }
  return { available: true, reason: null, gpus, metrics, samplingHz };
}


/** `TARGET_INFO_CUDA_DEVICE` rows (pid, CUDA ordinal -> GPU id), read once; none without the table. */
export function cudaDeviceGpus(loaded: LoadedExport): { pid: unknown; cudaId: unknown; gpuId: unknown }[] {
  // All three or none: a row without its pid, ordinal or GPU id maps nothing (the table is read as absent).
  if (!hasColumns(loaded.handle, 'TARGET_INFO_CUDA_DEVICE', ['pid', 'cudaId', 'gpuId'])) return [];
  return loaded.cached('cudaDeviceGpus', () => allRows(loaded.handle, selectCudaDeviceGpus(loaded.handle)));
}

/** Kernels per (pid, deviceId): which device each process used most. */
export function kernelDevicesByPid(loaded: LoadedExport): { pid: unknown; deviceId: unknown; kernels: unknown }[] {
  return allRows(loaded.handle, selectKernelDevicesByPid(loaded.handle));
}
