import type { ExportHandle } from './handle.js';

/** Processes in the captured tree (`PROCESSES`). */
export function selectProcesses(handle: ExportHandle) {
  return handle.db.selectFrom('PROCESSES').select(['globalPid', 'pid', 'name']).orderBy('pid');
}
