import { sessionStartEpochNs } from '../load/infoReads.js';
import { busiestLaunchingThread, sessionEndNs } from '../load/iterationRangeReads.js';
import type { LoadedExport } from '../load/loadedExport.js';
import { IterationError } from '../errors.js';
import { recordsByIter } from '../logs/parse.js';
import type { ParsedIterationLog } from '../logs/logRecords.js';
import { logTimestampReader, logTimestampWindows, resolveLogTimeZone } from './logTimestampWindows.js';
import type { FoundIterationRanges } from './source.js';
import { findIterationRanges } from './sources/index.js';
import type { IterationSource } from './source.js';
import type { IterationRangeSpec } from './rangeSpec.js';

/** PyTorch's `profiler.step()` ranges (vLLM, SGLang), numbered by their suffix. */
export const PROFILER_STEP_SPEC: IterationRangeSpec = { kind: 'regex', regex: /^ProfilerStep#(\d+)$/, source: '/^ProfilerStep#(\\d+)$/' };

/**
 * Windows rebuilt from the iteration log's timestamps (no marker in the capture): a source with no
 * NVTX ranges of its own; `fallbackIterationRanges` builds its windows from the logs.
 */
export const LOG_TIMESTAMP_SOURCE: IterationSource = {
  id: 'log-timestamps',
  engine: 'unknown',
  profileRangeSemantics: 'half-open',
  findRanges: () => ({ source: LOG_TIMESTAMP_SOURCE, byPid: new Map(), ignoredOtherThreads: 0 }),
  parseLabel: () => null,
};

export interface FallbackRanges {
  found: FoundIterationRanges;
  /** Notes for people: where the windows came from (and the log's time zone). */
  notes: string[];
  /** How the windows are numbered, when not by an NVTX label. */
  numberingDetail?: string;
}

/**
 * Iteration windows when the capture has neither the PyTorch executor's nor the C++ runtime's
 * NVTX ranges, in order: PyTorch `ProfilerStep#N` ranges; the iteration log's IterationStats
 * `timestamp`s (`logTz`: the zone the log was written in, default UTC). Null when neither is
 * available (the caller keeps its own error).
 */
export function fallbackIterationRanges(loaded: LoadedExport, logs: readonly ParsedIterationLog[], logTz?: string): FallbackRanges | null {
  try {
    const steps = findIterationRanges(loaded, PROFILER_STEP_SPEC);
    return { found: steps, notes: ['iterations from the PyTorch profiler ProfilerStep#N ranges'], numberingDetail: 'numbers from the ProfilerStep#N ranges' };
  } catch (err) {
    if (!(err instanceof IterationError)) throw err;
  }
  if (logs.length === 0) return null;
  const zone = resolveLogTimeZone(logTz);
  const start = sessionStartEpochNs(loaded);
  const thread = busiestLaunchingThread(loaded);
  if (start === null || thread === null) return null;
  // SGLang's batch lines are stamped when logged (1 s resolution, after the step): they delimit nothing.
  const records = [...recordsByIter([...logs]).values()].filter((r) => r.format !== 'sglang-batch');
  const endNs = sessionEndNs(loaded);
  const ranges = logTimestampWindows(records, start, zone, thread, { sessionEndNs: endNs });
  if (ranges.length === 0) {
    const toUtcNs = logTimestampReader(zone);
    const stamped = records.filter((r) => r.timestamp != null && toUtcNs(r.timestamp) !== null);
    if (stamped.length === 0) return null;
    const startIso = new Date(Number(start / 1_000_000n)).toISOString();
    throw new IterationError(
      `no iteration marker in the capture, and none of the ${stamped.length} log timestamps (read as ${zone}) falls in the capture (${startIso} + ${((endNs ?? 0) / 1e6).toFixed(2)} ms): is the log from this run, or written in another zone (--log-tz)?`,
      loaded.path,
    );
  }
  return {
    found: { source: LOG_TIMESTAMP_SOURCE, byPid: new Map([[thread.pid, ranges]]), ignoredOtherThreads: 0 },
    numberingDetail: 'numbers from the iteration log records whose timestamps delimit the windows',
    notes: [
      `no iteration marker in the capture: windows from the iteration log's timestamps, read as ${zone === 'UTC' ? 'UTC' : `time zone ${zone}`}${logTz === undefined ? ' (the default; --log-tz ZONE for another)' : ' (--log-tz)'}, on thread ${thread.tid} of pid ${thread.pid} (the one that launched the most kernels)`,
    ],
  };
}

/** The message when no source of iteration windows is found at all. */
export const NO_ITERATION_SOURCE_HINT =
  '; without NVTX iteration ranges or ProfilerStep#N, pass --log with IterationStats records (their timestamps delimit the iterations; --log-tz ZONE for the zone they were written in, default UTC)';
