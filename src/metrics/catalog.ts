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
import { UsageError } from '../errors.js';

/**
 * What GPU metrics an export holds: which GPUs were sampled (`typeId & 0xFF` = `TARGET_INFO_GPU.id`,
 * see queries/gpuMetrics.ts), and each GPU's metrics by name. Reading it costs a few small queries;
 * on an export without metric tables it costs nothing.
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

/** The metrics `iterations` reports per iteration (resolved by base name; see `resolveMetrics`). */
export const ITERATION_METRICS = [
  'SMs Active',
  'SM Issue',
  'Tensor Active',
  'DRAM Read Bandwidth',
  'DRAM Write Bandwidth',
  'GR Active',
  'GPC Clock Frequency',
] as const;

/** Names older or other nsys metric sets use for the same quantity. */
const ALIASES: Record<string, string[]> = {
  'sms active': ['sm active'],
  'tensor active': ['tensor active / fp16 active', 'tensor pipe active'],
  'gpc clock frequency': ['gpc clock'],
  'dram read bandwidth': ['dram read throughput'],
  'dram write bandwidth': ['dram write throughput'],
};

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

/** Reads the metric catalog. Never throws for an export without metrics: `available` is false and `reason` says why. */
export function readMetricCatalog(handle: ExportHandle): MetricCatalog {
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
  if (handle.hasTable('META_DATA_CAPTURE')) {
    for (const r of allRows(handle, selectGpuMetricsOptions(handle))) {
      if (r.name === 'GPU_METRICS_OPTIONS:SAMPLING_FREQUENCY' && r.value != null && Number(r.value) > 0) samplingHz = Number(r.value);
    }
  }
  return { available: true, reason: null, gpus, metrics, samplingHz };
}

/** Metrics of one GPU, in metricId order. */
export function metricsOfGpu(catalog: MetricCatalog, gpuId: number): MetricDef[] {
  return catalog.metrics.filter((m) => m.gpuId === gpuId);
}

/**
 * Resolves wanted metric names on one GPU: the full nsys name (`SMs Active [Throughput %]`), or the
 * base name (`SMs Active`), case-insensitively; then known aliases of older metric sets. When a base
 * name is shared (`Compute Warps in Flight` has three units) the first by metricId wins.
 */
export function resolveMetrics(catalog: MetricCatalog, gpuId: number, wanted: readonly string[]): { found: MetricDef[]; missing: string[] } {
  const mine = metricsOfGpu(catalog, gpuId);
  const found: MetricDef[] = [];
  const missing: string[] = [];
  for (const w of wanted) {
    const lw = w.trim().toLowerCase();
    const candidates = [lw, ...(ALIASES[lw] ?? [])];
    let hit = mine.find((m) => m.name.toLowerCase() === lw);
    for (const c of candidates) {
      if (hit) break;
      hit = mine.find((m) => m.baseName.toLowerCase() === c);
    }
    if (hit) {
      if (!found.includes(hit)) found.push(hit);
    } else missing.push(w);
  }
  return { found, missing };
}

/** The GPU to read when the caller names none: the requested one (must be sampled), else the lowest sampled id. */
export function chooseMetricGpu(catalog: MetricCatalog, requested?: number): number {
  const ids = catalog.gpus.map((g) => g.gpuId);
  if (requested !== undefined) {
    if (!ids.includes(requested)) throw new UsageError(`--gpu ${requested}: that GPU was not sampled (GPU metrics cover GPU ${ids.join(', ') || 'none'})`);
    return requested;
  }
  if (ids.length === 0) throw new UsageError('no GPU metrics in this export');
  return ids[0];
}

/**
 * The sampled GPU each process's kernels ran on: its most-used CUDA device, mapped to a GPU id with
 * `TARGET_INFO_CUDA_DEVICE (pid, cudaId -> gpuId)` (else CUDA ordinal = `TARGET_INFO_GPU.cuDevice`).
 * Only queried when more than one GPU was sampled; with one, every process maps to it.
 */
export function metricGpuByPid(handle: ExportHandle, catalog: MetricCatalog, pids: readonly number[]): Map<number, number> {
  const out = new Map<number, number>();
  const sampled = catalog.gpus.map((g) => g.gpuId);
  if (sampled.length === 0) return out;
  if (sampled.length === 1 || !handle.hasTable('CUPTI_ACTIVITY_KIND_KERNEL')) {
    for (const p of pids) out.set(p, sampled[0]);
    return out;
  }
  const cudaToGpu = new Map<string, number>();
  if (handle.hasTable('TARGET_INFO_CUDA_DEVICE')) {
    for (const r of allRows(handle, selectCudaDeviceGpus(handle))) if (r.gpuId != null) cudaToGpu.set(`${r.pid}:${r.cudaId}`, Number(r.gpuId));
  }
  const byCuDevice = new Map<number, number>();
  for (const g of catalog.gpus) if (g.cuDevice != null) byCuDevice.set(g.cuDevice, g.gpuId);
  const best = new Map<number, { device: number; kernels: number }>();
  for (const r of allRows(handle, selectKernelDevicesByPid(handle))) {
    const pid = Number(r.pid);
    const cur = best.get(pid);
    if (!cur || Number(r.kernels) > cur.kernels) best.set(pid, { device: Number(r.deviceId), kernels: Number(r.kernels) });
  }
  for (const p of pids) {
    const b = best.get(p);
    const gpu = b ? (cudaToGpu.get(`${p}:${b.device}`) ?? byCuDevice.get(b.device) ?? b.device) : undefined;
    out.set(p, gpu !== undefined && sampled.includes(gpu) ? gpu : sampled[0]);
  }
  return out;
}

/**
 * The sampled GPU behind a CUDA device ordinal as GPU activity rows report it (`deviceId` of
 * kernels, memcpys: the gaps module's devices): `TARGET_INFO_CUDA_DEVICE (pid, cudaId -> gpuId)`
 * for that process when given, else the GPU whose `TARGET_INFO_GPU.cuDevice` is the ordinal, else
 * the ordinal itself. Null when that GPU was not sampled.
 */
export function metricGpuForCudaDevice(handle: ExportHandle, catalog: MetricCatalog, deviceId: number, pid?: number): number | null {
  const sampled = new Set(catalog.gpus.map((g) => g.gpuId));
  let gpu: number | undefined;
  if (handle.hasTable('TARGET_INFO_CUDA_DEVICE')) {
    const rows = allRows(handle, selectCudaDeviceGpus(handle)).filter((r) => Number(r.cudaId) === deviceId && r.gpuId != null);
    const mine = pid !== undefined ? rows.filter((r) => Number(r.pid) === pid) : [];
    const ids = new Set((mine.length ? mine : rows).map((r) => Number(r.gpuId)));
    if (ids.size === 1) gpu = [...ids][0];
  }
  gpu ??= catalog.gpus.find((g) => g.cuDevice === deviceId)?.gpuId ?? deviceId;
  return sampled.has(gpu) ? gpu : null;
}
