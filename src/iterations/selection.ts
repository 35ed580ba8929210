import { parseNonNegativeInt } from '../optionValues.js';
import { resolveLogTimeZone } from './logTimestampWindows.js';
import { parseIterationRangeSpec, parseProfileRanges, type IterationRangeSpec, type ProfileRange } from './rangeSpec.js';

/**
 * How the user asked for iterations to be found and numbered: the parsed form of
 * `--iteration-range`, `--first-iter` and `--profile-range`. Plain data (a RegExp survives
 * structured cloning), so it crosses to worker threads as it is.
 */
export interface IterationSelection {
  /** The NVTX range that marks one iteration; default: the first iteration source with ranges. */
  rangeSpec?: IterationRangeSpec;
  /** Number unnumbered windows from N. */
  firstIter?: number;
  /** A TLLM_PROFILE_START_STOP value, to number unnumbered windows. */
  profileRanges?: ProfileRange[];
  /** Zone the logs' timestamps were written in, when they delimit the iterations (`--log-tz`; default UTC). */
  logTz?: string;
  /**
   * Windows that carry no number and that nothing numbers (no option, no unique fit with the log):
   * numbered 0, 1, ... in capture order (`capture-order`) and joined to no log record, instead of
   * an error. For figures over all steps that need no number (`engines`); never from a CLI option.
   */
  unnumberedInCaptureOrder?: boolean;
}

/** The selection as typed on a command line (commander hands strings, or numbers once parsed). */
export interface IterationSelectionOptions {
  iterationRange?: string;
  firstIter?: string | number;
  profileRange?: string;
  logTz?: string;
}

/** Parses the three options; a bad value is a UsageError naming the option. */
export function parseIterationSelection(opts: IterationSelectionOptions = {}): IterationSelection {
  const out: IterationSelection = {};
  if (opts.iterationRange !== undefined) out.rangeSpec = parseIterationRangeSpec(opts.iterationRange);
  if (opts.firstIter !== undefined) out.firstIter = typeof opts.firstIter === 'number' ? opts.firstIter : parseNonNegativeInt(opts.firstIter, '--first-iter');
  if (opts.profileRange !== undefined) out.profileRanges = parseProfileRanges(opts.profileRange);
  if (opts.logTz !== undefined) out.logTz = resolveLogTimeZone(opts.logTz);
  return out;
}
