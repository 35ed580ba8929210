import { UsageError } from '../errors.js';
import { parseLogTimestampFields } from '../logs/timestamps.js';
import type { IterationRange } from './source.js';

/**
 * Iteration windows from the iteration log's own clock, for captures without an iteration marker
 * (a TensorRT-LLM PyTorch-profiler trace has none: its NVTX ranges are not recorded by Kineto).
 * IterationStats records carry `timestamp` (`%m-%d-%Y %H:%M:%S.%f`, the host's local time) taken
 * at the start of each iteration, so iteration N is [timestamp(N), timestamp(N+1)). The windows
 * are ordinary `IterationRange`s, numbered by the record, on the thread that launched the most
 * kernels, so numbering, attribution and the log join run unchanged.
 */

/** A record as far as the windows need it. */
export interface TimestampedRecord {
  iter: number;
  timestamp: string | null;
}

/** The thread the windows are placed on (the executor: the one that launched the most kernels). */
export interface ThreadPick {
  pid: number;
  tid: number;
}

export interface LogTimestampWindowOptions {
  /** End of the capture in ns from session start: windows starting after it are not in the capture. */
  sessionEndNs?: number;
}

/** `--log-tz`: `UTC` (default), `local` (this machine's zone), an IANA zone, or a fixed `+HH:MM` offset. */
export function resolveLogTimeZone(tz: string | undefined): string {
  const value = (tz ?? 'UTC').trim();
  if (value === '' || /^utc$/i.test(value)) return 'UTC';
  if (value === 'local') return Intl.DateTimeFormat().resolvedOptions().timeZone;
  if (/^[+-]\d{2}:?\d{2}$/.test(value)) return value;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
  } catch {
    throw new UsageError(`--log-tz: unknown time zone '${value}' (use UTC, local, an IANA zone such as Europe/Paris, or an offset such as +02:00)`);
  }
  return value;
}

/**
 * The offset (ms) of `zone` from UTC at an instant. A named zone's Intl.DateTimeFormat is made once
 * per reader, not per timestamp: making one costs far more than formatting with it.
 */
function zoneOffsetReader(zone: string): (utcMs: number) => number {
  const fixed = /^([+-])(\d{2}):?(\d{2})$/.exec(zone);
  if (fixed) {
    const offsetMs = (fixed[1] === '-' ? -1 : 1) * (Number(fixed[2]) * 60 + Number(fixed[3])) * 60_000;
    return () => offsetMs;
  }
  if (zone === 'UTC') return () => 0;
  const f = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
  return (utcMs) => {
    const p = Object.fromEntries(f.formatToParts(new Date(utcMs)).map((x) => [x.type, x.value]));
    const wall = Date.UTC(Number(p.year), Number(p.month) - 1, Number(p.day), Number(p.hour), Number(p.minute), Number(p.second));
    return wall - Math.floor(utcMs / 1000) * 1000;
  };
}

/**
 * Reads log timestamps as wall-clock time in `zone` -> Unix epoch ns (bigint: beyond 2^53), keeping
 * every written fraction digit. Null when it is not a timestamp or has no fraction (whole seconds
 * cannot delimit iterations of a few ms). One reader for a log's timestamps.
 */
export function logTimestampReader(zone: string): (text: string) => bigint | null {
  const zoneOffsetMs = zoneOffsetReader(zone);
  return (text) => {
    const f = parseLogTimestampFields(text);
    if (!f || f.fraction === '') return null;
    const wallMs = Date.UTC(f.year, f.month - 1, f.day, f.hour, f.minute, f.second);
    // Two rounds settle the offset across a DST change.
    let utcMs = wallMs - zoneOffsetMs(wallMs);
    utcMs = wallMs - zoneOffsetMs(utcMs);
    return BigInt(utcMs) * 1_000_000n + BigInt(f.fraction.padEnd(9, '0').slice(0, 9));
  };
}

/** One log timestamp read in `zone` (`logTimestampReader` for many). */
export function logTimestampToUtcNs(text: string, zone: string): bigint | null {
  return logTimestampReader(zone)(text);
}

/**
 * One window per record whose iteration lies in the capture, in iteration order: from its
 * timestamp to the next iteration's (capped at the capture's end). An iteration is in the capture
 * when it starts inside it, or when most of it does (it began up to a clock skew before the
 * first event: its start is clamped to 0). Records without a sub-second timestamp are skipped.
 */
export function logTimestampWindows(
  records: readonly TimestampedRecord[],
  sessionStartUtcNs: bigint,
  tz: string,
  threadPick: ThreadPick,
  opts: LogTimestampWindowOptions = {},
): IterationRange[] {
  const toUtcNs = logTimestampReader(resolveLogTimeZone(tz));
  const startOf = new Map<number, number>();
  const textOf = new Map<number, string>();
  for (const r of records) {
    if (r.timestamp == null) continue;
    const utc = toUtcNs(r.timestamp);
    if (utc === null) continue;
    startOf.set(r.iter, Number(utc - sessionStartUtcNs));
    textOf.set(r.iter, r.timestamp);
  }
  const end = opts.sessionEndNs ?? Infinity;
  const out: IterationRange[] = [];
  for (const iter of [...startOf.keys()].sort((a, b) => a - b)) {
    const start = startOf.get(iter)!;
    const next = startOf.get(iter + 1);
    if (start >= end) continue;
    if (start < 0) {
      // Mostly before the capture (or no end to judge by): not this capture's iteration.
      if (next === undefined || next <= 0 || next < -start) continue;
    }
    const rangeEnd = Math.min(next ?? end, end);
    out.push({
      pid: threadPick.pid,
      tid: threadPick.tid,
      startNs: Math.max(0, start),
      rangeEndNs: Number.isFinite(rangeEnd) ? rangeEnd : null,
      text: `iteration ${iter} (log timestamp ${textOf.get(iter)})`,
      domain: null,
      label: null,
      number: iter,
    });
  }
  return out;
}
