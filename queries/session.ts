import type { ExportHandle } from './handle.js';
import { allRows } from './run.js';
import { columnOrNull, hasColumns } from './optionalColumns.js';

const START = 'TARGET_INFO_SESSION_START_TIME';
const DETAILS = 'ANALYSIS_DETAILS';

/** Session start (`utcEpochNs` exceeds 2^53: run with safeIntegers). Columns the export lacks read as NULL. */
export function selectSessionStart(handle: ExportHandle) {
  return handle.db
    .selectFrom(START)
    .select([columnOrNull<bigint>(handle, START, 'utcEpochNs').as('utcEpochNs'), columnOrNull<string>(handle, START, 'utcTime').as('utcTime'), columnOrNull<string>(handle, START, 'localTime').as('localTime')])
    .limit(1);
}

/** Session length and host clock bounds (`ANALYSIS_DETAILS`). Columns the export lacks read as NULL. */
export function selectAnalysisDetails(handle: ExportHandle) {
  const opt = (c: string) => columnOrNull(handle, DETAILS, c);
  return handle.db
    .selectFrom(DETAILS)
    .select([opt('globalVid').as('globalVid'), opt('duration').as('duration'), opt('startTime').as('startTime'), opt('stopTime').as('stopTime')])
    .limit(1);
}

/** The columns a name/value table (META_DATA_CAPTURE) is read by: without them it reads as absent. */
export const NAME_VALUE_COLUMNS = ['name', 'value'] as const;

/** Whether `META_DATA_CAPTURE` is there with its name/value columns. */
export function hasCaptureMetadata(handle: ExportHandle): boolean {
  return hasColumns(handle, 'META_DATA_CAPTURE', NAME_VALUE_COLUMNS);
}

/** Capture settings (`META_DATA_CAPTURE`, schema >= 3.4). */
export function selectCaptureMetadata(handle: ExportHandle) {
  return handle.db.selectFrom('META_DATA_CAPTURE').select(['name', 'value']);
}

/** Session start in ns since the Unix epoch alone (older exports lack `utcTime`/`localTime`). */
export function selectSessionStartEpochNs(handle: ExportHandle) {
  return handle.db.selectFrom(START).select('utcEpochNs').limit(1);
}

/** `TARGET_INFO_SESSION_START_TIME.utcEpochNs` as a bigint (beyond 2^53); null without the table, column or value. */
export function readSessionStartEpochNs(handle: ExportHandle): bigint | null {
  if (!hasColumns(handle, START, ['utcEpochNs'])) return null;
  const row = allRows(handle, selectSessionStartEpochNs(handle), { safeIntegers: true })[0] as { utcEpochNs: bigint | null } | undefined;
  // Only an integer is a UTC start (a damaged export may hold text there).
  return typeof row?.utcEpochNs === 'bigint' ? row.utcEpochNs : null;
}
