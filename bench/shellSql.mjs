/**
 * What the sqlite3 shell reads beside a command in `npm run bench` (bench/run.mjs) and beside the
 * reads alone (bench/readFloor.mjs): the same rows our side reads, with no analysis.
 */

/** The GPU ops with their launching CUDA API call (kernel <-> runtime by correlationId + PID). */
export const KERNEL_LAUNCH_JOIN =
  'SELECT k.start, k."end", k.deviceId, k.demangledName, r.start, r.globalTid FROM CUPTI_ACTIVITY_KIND_KERNEL AS k ' +
  'JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS r ON r.correlationId = k.correlationId AND (r.globalTid >> 24) = (k.globalPid >> 24)';
export const NVTX_RANGES =
  'SELECT n.start, n."end", n.eventType, coalesce(s.value, n.text), n.domainId, n.globalTid FROM NVTX_EVENTS AS n ' +
  'LEFT JOIN StringIds AS s ON s.id = n.textId WHERE n.eventType IN (59, 60, 70, 71)';

/** `report`'s yardstick: kernels joined to their launches, plus all NVTX range text. */
export const REPORT_ROWS = `${KERNEL_LAUNCH_JOIN}; ${NVTX_RANGES}`;
