import type { ExportHandle } from './handle.js';
import { iterateQuery } from './run.js';

/** `StringIds` rows (interned kernel names, API names, registered NVTX strings, thread names). */
export function selectStrings(handle: ExportHandle) {
  return handle.db.selectFrom('StringIds').select(['id', 'value']);
}

/** Resolves a set of string ids in one pass over `StringIds`. */
export function loadStrings(handle: ExportHandle, ids: Iterable<number>): Map<number, string> {
  const wanted = new Set(ids);
  const out = new Map<number, string>();
  if (!handle.hasTable('StringIds') || wanted.size === 0) return out;
  for (const row of iterateQuery(handle, selectStrings(handle))) {
    if (wanted.has(row.id)) out.set(row.id, row.value);
  }
  return out;
}
