import { IterationError } from '../errors.js';
import type { ProfileRange } from './rangeSpec.js';
import type { IterationRange } from './windows.js';

/** How the iteration numbers of a process's windows were obtained. */
export type NumberingSource = 'label' | 'first-iter' | 'profile-range' | 'capture-env' | 'log-alignment';

export interface Numbering {
  iters: number[];
  source: NumberingSource;
  /** A sentence for the coverage notes (how, and how sure). */
  detail: string;
}

/** Batch composition of a log record, as far as the alignment needs it. */
export interface LogComposition {
  iter: number;
  contextRequests: number | null;
  generationRequests: number | null;
}

export interface NumberingOptions {
  firstIter?: number;
  /** TLLM_PROFILE_START_STOP given by the user. */
  profileRanges?: ProfileRange[];
  /** TLLM_*PROFILE_START_STOP found in the capture's environment. */
  captureEnvRanges?: ProfileRange[];
  /** PyTorch executors capture A..B-1; the C++ executor A..B. */
  executor: 'pytorch' | 'cpp';
  logRecords?: LogComposition[];
}

function rangeLength(r: ProfileRange, executor: 'pytorch' | 'cpp'): number {
  return executor === 'pytorch' && r.last > r.first ? r.last - r.first : r.last - r.first + 1;
}

/**
 * Aligns unnumbered windows to the log by their sequence of (ctx reqs, gen reqs): every offset at
 * which all windows agree with consecutive log records. Only the oldest PyTorch label carries
 * counts without a number; other ranges carry no counts and cannot be aligned.
 */
export function alignToLog(ranges: IterationRange[], records: LogComposition[]): number[] {
  if (ranges.some((r) => !r.label)) return [];
  const byIter = new Map(records.map((r) => [r.iter, r]));
  const iters = [...byIter.keys()].sort((a, b) => a - b);
  const offsets: number[] = [];
  for (const first of iters) {
    let ok = true;
    for (let j = 0; j < ranges.length && ok; j++) {
      const rec = byIter.get(first + j);
      const lab = ranges[j].label!;
      ok = !!rec && rec.contextRequests === lab.contextRequests && rec.generationRequests === lab.generationRequests;
    }
    if (ok) offsets.push(first);
  }
  return offsets;
}

/**
 * Numbers one process's iteration windows: the label's number when it has one; otherwise
 * `--first-iter`, `--profile-range`, the capture's TLLM_PROFILE_START_STOP (when exactly one of its
 * windows has as many iterations as the export), or a unique alignment with the log. Anything else
 * is an error that says which option to pass.
 */
export function numberWindows(ranges: IterationRange[], opts: NumberingOptions, file: string): Numbering {
  const n = ranges.length;
  if (ranges.every((r) => r.number != null)) {
    return { iters: ranges.map((r) => r.number!), source: 'label', detail: 'numbers from the NVTX labels' };
  }
  const seq = (first: number) => ranges.map((_, k) => first + k);
  if (opts.firstIter !== undefined) return { iters: seq(opts.firstIter), source: 'first-iter', detail: `numbered from --first-iter ${opts.firstIter}` };
  if (opts.profileRanges?.length) {
    const r = opts.profileRanges.find((p) => rangeLength(p, opts.executor) === n) ?? opts.profileRanges[0];
    const expected = rangeLength(r, opts.executor);
    const warn = expected === n ? '' : ` (warning: the range spans ${expected} iterations but the export has ${n} windows)`;
    return { iters: seq(r.first), source: 'profile-range', detail: `numbered from --profile-range ${r.first}-${r.last}${warn}` };
  }
  if (opts.captureEnvRanges?.length) {
    const fits = opts.captureEnvRanges.filter((p) => rangeLength(p, opts.executor) === n);
    if (fits.length === 1) {
      return { iters: seq(fits[0].first), source: 'capture-env', detail: `numbered from the capture's profile range ${fits[0].first}-${fits[0].last} (its only window with ${n} iterations)` };
    }
  }
  if (opts.logRecords?.length) {
    const offsets = alignToLog(ranges, opts.logRecords);
    if (offsets.length === 1) {
      return { iters: seq(offsets[0]), source: 'log-alignment', detail: `aligned to the log by batch composition: unique offset ${offsets[0]} over ${n} windows (confidence: high)` };
    }
    if (offsets.length > 1) {
      throw new IterationError(
        `${n} unnumbered iteration windows match the log's batch composition at ${offsets.length} offsets (${offsets.slice(0, 5).join(', ')}${offsets.length > 5 ? ', ...' : ''}); pass --first-iter N or --profile-range A-B`,
        file,
      );
    }
  }
  throw new IterationError(`found ${n} iteration windows without iteration numbers; pass --first-iter N or --profile-range A-B (the TLLM_PROFILE_START_STOP value)`, file);
}
