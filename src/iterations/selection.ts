import { parseNonNegativeInt } from '../optionValues.js';
import { resolveLogTimeZone } from './logTimestampWindows.js';
import { parseIterationRangeSpec, parseProfileRanges, type IterationRangeSpec, type ProfileRange } from './rangeSpec.js';

/**
 * How the user asked for iterations to be found and numbered: the parsed form of
 * `--iteration-range`, `--first-iter`, `--profile-range` and `--log-tz`. Plain data (a RegExp survives
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

/**
 * The selection as a caller or a command line gives it: each value as typed (a string), or already
 * parsed (the CLI's option parsers hand parsed values, checked once while the options are read).
 * The options of every command that finds iterations, and of `MetricsRequest`.
 */
export interface IterationSelectionOptions {
  /** `--iteration-range`: exact NVTX text or `/regex/`. */
  iterationRange?: string | IterationRangeSpec;
  /** `--first-iter`: a non-negative integer. */
  firstIter?: string | number;
  /** `--profile-range`: a TLLM_PROFILE_START_STOP value (`A-B`, `A`, or a list). */
  profileRange?: string | ProfileRange[];
  /** `--log-tz`: UTC, local, an IANA zone or +HH:MM. */
  logTz?: string;
}

/** Parses the options given as text (parsed values pass as they are); a bad value is a UsageError naming the option. */
export function parseIterationSelection(opts: IterationSelectionOptions = {}): IterationSelection {
  const out: IterationSelection = {};
  const { iterationRange, firstIter, profileRange, logTz } = opts;
  if (iterationRange !== undefined) out.rangeSpec = typeof iterationRange === 'string' ? parseIterationRangeSpec(iterationRange) : iterationRange;
  if (firstIter !== undefined) out.firstIter = typeof firstIter === 'number' ? firstIter : parseNonNegativeInt(firstIter, '--first-iter');
  if (profileRange !== undefined) out.profileRanges = typeof profileRange === 'string' ? parseProfileRanges(profileRange) : profileRange;
  if (logTz !== undefined) out.logTz = resolveLogTimeZone(logTz);
  return out;
}
