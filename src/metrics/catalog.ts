import { UsageError } from '../errors.js';
import type { LoadedExport } from '../load/loadedExport.js';
import { cudaDeviceGpus, kernelDevicesByPid, type MetricCatalog, type MetricDef, type MetricGpu } from '../load/metricReads.js';

export { baseMetricName, metricUnitText, readMetricCatalog, type MetricCatalog, type MetricDef, type MetricGpu } from '../load/metricReads.js';

/**
 * What GPU metrics an export holds: which GPUs were sampled (`typeId & 0xFF` = `TARGET_INFO_GPU.id`,
 * see queries/gpuMetrics.ts), and each GPU's metrics by name. Reading it costs a few small queries;
 * on an export without metric tables it costs nothing.
 */

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
export function metricGpuByPid(loaded: LoadedExport, catalog: MetricCatalog, pids: readonly number[]): Map<number, number> {
  const out = new Map<number, number>();
  const sampled = catalog.gpus.map((g) => g.gpuId);
  if (sampled.length === 0) return out;
  if (sampled.length === 1 || !loaded.hasTable('CUPTI_ACTIVITY_KIND_KERNEL')) {
    for (const p of pids) out.set(p, sampled[0]);
    return out;
  }
  const cudaToGpu = new Map<string, number>();
  for (const r of cudaDeviceGpus(loaded)) if (r.gpuId != null) cudaToGpu.set(`${r.pid}:${r.cudaId}`, Number(r.gpuId));
  const byCuDevice = new Map<number, number>();
  for (const g of catalog.gpus) if (g.cuDevice != null) byCuDevice.set(g.cuDevice, g.gpuId);
  const best = new Map<number, { device: number; kernels: number }>();
  for (const r of kernelDevicesByPid(loaded)) {
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
export function metricGpuForCudaDevice(loaded: LoadedExport, catalog: MetricCatalog, deviceId: number, pid?: number): number | null {
  const sampled = new Set(catalog.gpus.map((g) => g.gpuId));
  let gpu: number | undefined;
  if (loaded.hasTable('TARGET_INFO_CUDA_DEVICE')) {
    const rows = cudaDeviceGpus(loaded).filter((r) => Number(r.cudaId) === deviceId && r.gpuId != null);
    const mine = pid !== undefined ? rows.filter((r) => Number(r.pid) === pid) : [];
    const ids = new Set((mine.length ? mine : rows).map((r) => Number(r.gpuId)));
    if (ids.size === 1) gpu = [...ids][0];
  }
  gpu ??= catalog.gpus.find((g) => g.cuDevice === deviceId)?.gpuId ?? deviceId;
  return sampled.has(gpu) ? gpu : null;
}
