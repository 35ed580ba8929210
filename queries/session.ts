import type { ExportHandle } from './handle.js';

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
