import { basename } from 'node:path';
import type { IterationRow } from '../iterations/types.js';
import { iterationName } from '../iterations/naming.js';
import { METRIC_KEYS } from '../logs/logRecords.js';
import { PHASE_COLORS } from './colors.js';
import { completeEvent, counterEvent } from './events.js';
import { Lanes } from './lanes.js';
import type { TrackRegistry } from './tracks.js';

/** Counter track names (one sample per iteration, at its start). */
export const CONTEXT_TOKENS_COUNTER = 'context tokens';
export const ACTIVE_REQUESTS_COUNTER = 'active requests';

export { batchComposition } from '../iterations/naming.js';

/** `iter 103: 1 ctx (768 tok), 15 gen` (or `iter 103` without a composition; `capture step 3: ...` without an engine number). */
export function iterationSliceName(row: IterationRow): string {
  return iterationName(row);
}

function nonZero(rec: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(rec)) if (v) out[k] = v;
  return out;
}

/** What the details panel shows for an iteration slice: its numbers in ns and its log record. */
export function iterationArgs(row: IterationRow, idleByCauseNs?: Record<string, number>): Record<string, unknown> {
  const args: Record<string, unknown> = {
    iter: row.iter,
    pid: row.pid,
    phase: row.phase,
    ...(row.phaseBasis ? { phaseBasis: row.phaseBasis } : {}),
    ...(row.captureOrder ? { captureOrder: true } : {}),
    label: row.label,
    wallNs: row.wallNs,
    gpuBusyNs: row.gpuBusyNs,
    gpuIdleNs: row.gpuIdleNs,
    kernelNs: row.kernelNs,
    kernelCount: row.kernelCount,
    categoryNs: nonZero(row.categoryNs),
    memcpyNs: row.memcpyNs,
    memcpyCount: row.memcpyCount,
    memsetNs: row.memsetNs,
    memsetCount: row.memsetCount,
    graphLaunches: row.graphLaunches,
  };
  if (row.otherThreadOps) args.otherThreadOps = row.otherThreadOps;
  if (idleByCauseNs && Object.keys(idleByCauseNs).length) args.idleByCauseNs = idleByCauseNs;
  if (row.log) {
    const log: Record<string, unknown> = {};
    for (const k of METRIC_KEYS) if (row.log[k] != null) log[k] = row.log[k];
    log.source = row.log.sources.map((s) => `${basename(s.file)}:${s.line}`).join(', ');
    args.log = log;
  }
  if (row.labelMatchesLog === false) args.labelMatchesLog = false;
  return args;
}

export interface IterationTrackStats {
  slices: number;
  counterSamples: number;
  overflowSlices: number;
}

/**
 * One process per OS pid, `Iterations (pid N)`, with a track of iteration slices (windows of one
 * pid are consecutive, so they never overlap; overflow lanes guard anyway) and the counters
 * `context tokens` and `active requests` (a sample at each iteration's start; iterations whose
 * log lacks the value get none).
 */
export function writeIterations(
  rows: readonly IterationRow[],
  tracks: TrackRegistry,
  emit: (json: string) => void,
  idleByIter?: Map<number, Record<string, number>>,
): IterationTrackStats {
  const stats: IterationTrackStats = { slices: 0, counterSamples: 0, overflowSlices: 0 };
  const pids = [...new Set(rows.map((r) => r.pid))].sort((a, b) => a - b);
  pids.forEach((pid, i) => {
    tracks.process(pid, `Iterations (pid ${pid})`, i);
    const lanes = new Lanes();
    const mine = rows.filter((r) => r.pid === pid).sort((a, b) => a.startNs - b.startNs || a.iter - b.iter);
    const mainTid = tracks.thread(`iter:${pid}:0`, pid, 'iterations', 0);
    for (const r of mine) {
      const lane = lanes.assign(r.startNs, r.endNs);
      const tid = lane === 0 ? mainTid : tracks.thread(`iter:${pid}:${lane}`, pid, `iterations (overlap ${lane})`, lane);
      if (lane > 0) stats.overflowSlices++;
      emit(
        completeEvent({
          pid,
          tid,
          startNs: r.startNs,
          endNs: r.endNs,
          name: iterationSliceName(r),
          cat: 'iteration',
          cname: PHASE_COLORS[r.phase],
          args: iterationArgs(r, idleByIter?.get(r.iter)),
        }),
      );
      stats.slices++;
      if (r.contextTokens != null) {
        emit(counterEvent(pid, mainTid, r.startNs, CONTEXT_TOKENS_COUNTER, { value: r.contextTokens }));
        stats.counterSamples++;
      }
      const active = r.log?.activeRequests;
      if (active != null) {
        emit(counterEvent(pid, mainTid, r.startNs, ACTIVE_REQUESTS_COUNTER, { value: active }));
        stats.counterSamples++;
      }
    }
  });
  return stats;
}
