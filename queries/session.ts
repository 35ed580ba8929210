import type { ExportHandle } from './handle.js';
import { allRows } from './run.js';

/** Session start (`utcEpochNs` exceeds 2^53: run with safeIntegers). */
export function selectSessionStart(handle: ExportHandle) {
  return handle.db.selectFrom('TARGET_INFO_SESSION_START_TIME').select(['utcEpochNs', 'utcTime', 'localTime']).limit(1);
}

/** Session length and host clock bounds (`ANALYSIS_DETAILS`). */
export function selectAnalysisDetails(handle: ExportHandle) {
  return handle.db.selectFrom('ANALYSIS_DETAILS').select(['globalVid', 'duration', 'startTime', 'stopTime']).limit(1);
}

/** Capture settings (`META_DATA_CAPTURE`, schema >= 3.4). */
export function selectCaptureMetadata(handle: ExportHandle) {
  return handle.db.selectFrom('META_DATA_CAPTURE').select(['name', 'value']);
}

/** Session start in ns since the Unix epoch alone (older exports lack `utcTime`/`localTime`). */
export function selectSessionStartEpochNs(handle: ExportHandle) {
  return handle.db.selectFrom('TARGET_INFO_SESSION_START_TIME').select('utcEpochNs').limit(1);
}

/** `TARGET_INFO_SESSION_START_TIME.utcEpochNs` as a bigint (beyond 2^53); null without the table or value. */
export function readSessionStartEpochNs(handle: ExportHandle): bigint | null {
  if (!handle.hasTable('TARGET_INFO_SESSION_START_TIME')) return null;
  const row = allRows(handle, selectSessionStartEpochNs(handle), { safeIntegers: true })[0] as { utcEpochNs: bigint | null } | undefined;
  // Only an integer is a UTC start (a damaged export may hold text there).
  return typeof row?.utcEpochNs === 'bigint' ? row.utcEpochNs : null;
}
