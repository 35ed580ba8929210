import type { ExportHandle } from './handle.js';
import { columnOrNull } from './optionalColumns.js';

const TABLE = 'TARGET_INFO_GPU';

/**
 * GPUs the target reported (`TARGET_INFO_GPU`; absent in some trimmed exports). `id` and `name`
 * are required (contract.ts); the other columns read as NULL where a minimal export lacks them.
 */
export function selectGpus(handle: ExportHandle) {
  const opt = <T>(c: string) => columnOrNull<T>(handle, TABLE, c);
  return handle.db
    .selectFrom(TABLE)
    .select([
      'id',
      'name',
      opt<string>('busLocation').as('busLocation'),
      opt<number>('totalMemory').as('totalMemory'),
      opt<number>('smCount').as('smCount'),
      opt<number>('clockRate').as('clockRate'),
      opt<string>('uuid').as('uuid'),
      opt<string>('chipName').as('chipName'),
      opt<number>('computeMajor').as('computeMajor'),
      opt<number>('computeMinor').as('computeMinor'),
    ])
    .orderBy('id');
}
