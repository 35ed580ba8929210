import type { ExportHandle } from './handle.js';

/** GPUs the target reported (`TARGET_INFO_GPU`; absent in some trimmed exports). */
export function selectGpus(handle: ExportHandle) {
  return handle.db
    .selectFrom('TARGET_INFO_GPU')
    .select(['id', 'name', 'busLocation', 'totalMemory', 'smCount', 'clockRate', 'uuid', 'chipName', 'computeMajor', 'computeMinor'])
    .orderBy('id');
}
