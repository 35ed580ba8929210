import type { LoadedExport } from '../load/loadedExport.js';
import { metricGpuForCudaDevice, readMetricCatalog } from '../metrics/catalog.js';
import { timeWeightedMeans } from '../metrics/timeWeighted.js';

const SMS_ACTIVE = 'SMs Active';

/**
 * Mean `SMs Active` (time-weighted, %) inside each gap, where the export sampled GPU metrics on
 * the gap's device: a sanity signal, near zero when the GPU is truly idle. Gaps of devices that
 * were not sampled get null; without metrics nothing is computed and a note says so.
 */
export function meanSmActiveInGaps(
  loaded: LoadedExport,
  gaps: readonly { deviceId: number; pid: number; startNs: number; endNs: number }[],
): { values: (number | null)[] | null; note: string | null } {
  const catalog = readMetricCatalog(loaded);
  if (!catalog.available) return { values: null, note: null };
  const values: (number | null)[] = gaps.map(() => null);
  const byGpu = new Map<number, number[]>();
  gaps.forEach((g, i) => {
    const gpu = metricGpuForCudaDevice(loaded, catalog, g.deviceId, g.pid);
    if (gpu == null) return;
    const list = byGpu.get(gpu) ?? [];
    list.push(i);
    byGpu.set(gpu, list);
  });
  for (const [gpu, idx] of byGpu) {
    const means = timeWeightedMeans(
      loaded,
      idx.map((i) => gaps[i]),
      { gpu, metrics: [SMS_ACTIVE], catalog },
    );
    idx.forEach((gi, k) => {
      const rec = means[k];
      const key = Object.keys(rec).find((name) => name.startsWith(SMS_ACTIVE));
      values[gi] = key ? (rec[key] ?? null) : null;
    });
  }
  return { values, note: 'smActivePct: time-weighted mean of the sampled SMs Active metric inside each gap' };
}
