import { IterationError } from '../errors.js';
import type { LabelCounts, ProfileRange } from './rangeSpec.js';
import type { IterationSource } from './source.js';
import type { IterationRange } from './source.js';
import type { Numbering } from './source.js';

/** Batch composition of a log record, as far as the alignment needs it. */
export interface LogComposition {
  iter: number;
  contextRequests: number | null;
  generationRequests: number | null;
  contextTokens?: number | null;
  generationTokens?: number | null;
}

export interface NumberingOptions {
  firstIter?: number;
  /** TLLM_PROFILE_START_STOP given by the user. */
  profileRanges?: ProfileRange[];
  /** TLLM_*PROFILE_START_STOP found in the capture's environment. */
  captureEnvRanges?: ProfileRange[];
  /** The source's profile-range semantics: PyTorch executors capture A..B-1 (half-open), the C++ executor A..B. */
  semantics: IterationSource['profileRangeSemantics'];
  logRecords?: LogComposition[];
  /** Options worth naming when numbering fails (default: --first-iter N or --profile-range A-B). */
  hint?: string;
}

function rangeLength(r: ProfileRange, semantics: NumberingOptions['semantics']): number {
  return semantics === 'half-open' && r.last > r.first ? r.last - r.first : r.last - r.first + 1;
}

/** Whether a window's label and a log record describe the same batch: requests always, tokens when both sides have them. */
export function sameComposition(label: LabelCounts, rec: LogComposition): boolean {
  if (rec.contextRequests !== label.contextRequests || rec.generationRequests !== label.generationRequests) return false;
  if (label.contextTokens != null && rec.contextTokens != null && label.contextTokens !== rec.contextTokens) return false;
  if (label.generationTokens != null && rec.generationTokens != null && label.generationTokens !== rec.generationTokens) return false;
  return true;
}

/**
 * Whether a joined log record agrees with its window's label: each count the record has is
 * compared (a PyTorch text log whose num_ctx_requests exceeds num_scheduled_requests has no
 * generation count, and must still be flagged), tokens when both sides have them.
 */
export function labelAgreesWithLog(label: LabelCounts, rec: LogComposition): boolean {
  if (rec.contextRequests != null && rec.contextRequests !== label.contextRequests) return false;
  if (rec.generationRequests != null && rec.generationRequests !== label.generationRequests) return false;
  return sameComposition(label, { ...rec, contextRequests: label.contextRequests, generationRequests: label.generationRequests });
}

/**
 * Aligns a capture's sequence of n steps with a log: every start (in `starts`' order) at which all
 * n steps fit (`fits(start, j)`: step j fits the log at start + j). Stops after `max` fits: a
 * caller that needs a unique alignment asks for two.
 */
export function consecutiveFits(starts: Iterable<number>, n: number, fits: (start: number, j: number) => boolean, max = Infinity): number[] {
  const out: number[] = [];
  for (const start of starts) {
    let ok = true;
    for (let j = 0; j < n && ok; j++) ok = fits(start, j);
    if (ok && out.push(start) >= max) break;
  }
  return out;
}

/**
 * Aligns unnumbered windows to the log by their whole sequence of batch compositions (ctx reqs,
 * gen reqs, and ctx/gen tokens when both sides have them): every offset at which all windows
 * agree with consecutive log records. The oldest PyTorch label and vLLM's step ranges carry counts
 * without a number; ranges without counts cannot be aligned.
 */
export function alignToLog(ranges: IterationRange[], records: LogComposition[]): number[] {
  if (ranges.some((r) => !r.label)) return [];
  const byIter = new Map(records.map((r) => [r.iter, r]));
  const iters = [...byIter.keys()].sort((a, b) => a - b);
  return consecutiveFits(iters, ranges.length, (first, j) => {
    const rec = byIter.get(first + j);
    return !!rec && sameComposition(ranges[j].label!, rec);
  });
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
    const r = opts.profileRanges.find((p) => rangeLength(p, opts.semantics) === n) ?? opts.profileRanges[0];
    const expected = rangeLength(r, opts.semantics);
    const warn = expected === n ? '' : ` (warning: the range spans ${expected} iterations but the export has ${n} windows)`;
    return { iters: seq(r.first), source: 'profile-range', detail: `numbered from --profile-range ${r.first}-${r.last}${warn}` };
  }
  if (opts.captureEnvRanges?.length) {
    const fits = opts.captureEnvRanges.filter((p) => rangeLength(p, opts.semantics) === n);
    if (fits.length === 1) {
      return { iters: seq(fits[0].first), source: 'capture-env', detail: `numbered from the capture's profile range ${fits[0].first}-${fits[0].last} (its only window with ${n} iterations)` };
    }
  }
  const hint = opts.hint ?? '--first-iter N or --profile-range A-B';
  if (opts.logRecords?.length) {
    const offsets = alignToLog(ranges, opts.logRecords);
    if (offsets.length === 1) {
      return { iters: seq(offsets[0]), source: 'log-alignment', detail: `aligned to the log by batch composition: unique offset ${offsets[0]} over ${n} windows (confidence: high)` };
    }
    if (offsets.length > 1) {
      throw new IterationError(
        `${n} unnumbered iteration windows match the log's batch composition at ${offsets.length} offsets (${offsets.slice(0, 5).join(', ')}${offsets.length > 5 ? ', ...' : ''}): the alignment is ambiguous; pass ${hint}`,
        file,
      );
    }
  }
  if (opts.logRecords?.length && ranges.every((r) => r.label)) {
    throw new IterationError(`${n} unnumbered iteration windows match no run of consecutive log records by batch composition (is the log from another run?); pass ${hint}`, file);
  }
  throw new IterationError(`found ${n} iteration windows without iteration numbers; pass ${opts.hint ?? '--first-iter N or --profile-range A-B (the TLLM_PROFILE_START_STOP value)'}`, file);
}

/** The shift added to a log's iteration numbers so its records land on the loops they describe. */
export interface CounterShift {
  shift: number;
  /** Why: the NVTX labels' batch compositions agree best there; a counter printed as 0; or the format's documented offset. */
  basis: 'labels' | 'zero-counter' | 'documented';
  /** Labelled iterations compared at `shift`, and how many of them agree with the record. */
  compared: number;
  agree: number;
  /** Agreements at the shift the labels were compared against (`basis` other than labels: `agree`). */
  agreeAtDefault: number;
}

/**
 * Servers print a loop's counter before or after incrementing it, and that changed across
 * versions (trtllm.md §0.4, §1.1; PR #14127): a log's records may name loop K, K-1 or K+1. The
 * default shift is 0 (the format's documented reading), or what lifts a counter printed as 0 off
 * loop -1 (a counter that was incremented first is never 0). Then, as `alignToLog` aligns vLLM's
 * steps, the batch compositions decide: a shift one either side is taken when the NVTX labels
 * agree with more records there, and with at least 80% of those compared.
 */
export function counterShift(labels: ReadonlyMap<number, LabelCounts>, records: readonly LogComposition[]): CounterShift {
  const withCounts = records.filter((r) => r.contextRequests != null && r.generationRequests != null);
  const lowest = records.reduce((m, r) => Math.min(m, r.iter), Infinity);
  const base = lowest < 0 ? -lowest : 0;
  const score = (shift: number) => {
    let compared = 0;
    let agree = 0;
    for (const r of withCounts) {
      const label = labels.get(r.iter + shift);
      if (!label) continue;
      compared++;
      if (sameComposition(label, r)) agree++;
    }
    return { shift, compared, agree };
  };
  const atBase = score(base);
  let best = atBase;
  for (const shift of [base - 1, base + 1]) {
    const s = shift + lowest < 0 ? null : score(shift);
    if (s && s.agree > best.agree && s.agree >= 0.8 * s.compared) best = s;
  }
  if (best !== atBase) return { ...best, basis: 'labels', agreeAtDefault: atBase.agree };
  return { ...atBase, basis: base ? 'zero-counter' : 'documented', agreeAtDefault: atBase.agree };
}

/**
 * `numberWindows`, or where it finds no number (none in the labels, no option, no unique fit with
 * the log), 0, 1, ... in capture order: numbers that are not the engine's, said so in the detail.
 */
export function numberWindowsOrCaptureOrder(ranges: IterationRange[], opts: NumberingOptions, file: string): Numbering {
  try {
    return numberWindows(ranges, opts, file);
  } catch (err) {
    if (!(err instanceof IterationError)) throw err;
    const why = err.message.slice(file.length + 2).replace(/; pass .*$/, '');
    return { iters: ranges.map((_, k) => k), source: 'capture-order', detail: `numbered 0..${ranges.length - 1} in capture order, not the engine's numbers (${why}); no log record joined` };
  }
}
