import { firstEndingAfter, subtractIntervals, type IntervalSet } from '../math/intervals.js';

/**
 * Causes of GPU idle time, highest priority first. `nvtx` stands for the `nvtx:<name>` causes.
 * Each ns of a gap goes to the highest-priority cause that covers it, so a gap's parts add up to
 * its duration exactly.
 */
export const CAUSE_PRIORITY = ['gc', 'gil_wait', 'sync', 'launch_late', 'nvtx', 'unattributed'] as const;
export type CauseKind = (typeof CAUSE_PRIORITY)[number];

/** The prefix of NVTX causes: `nvtx:_sample_async`. */
export const NVTX_CAUSE_PREFIX = 'nvtx:';

/** Sorted, disjoint NVTX segments of a gap, each with its cause name (without the prefix). */
export interface NamedSegments {
  starts: number[];
  ends: number[];
  names: string[];
}

/** What covers a gap on the host side. Sets need not be clipped to the gap. */
export interface GapCauseInput {
  startNs: number;
  endNs: number;
  /** `Python GC` ranges of the process. */
  gc?: IntervalSet | null;
  /** `Waiting for GIL` ranges of the launching threads. */
  gilWait?: IntervalSet | null;
  /** Blocking CUDA API calls of the launching threads. */
  sync?: IntervalSet | null;
  /**
   * Start of the API call that launched the op after the gap. When it lies strictly inside the gap,
   * `launch_late` covers [launchApiStartNs, endNs): the host issued the work after the GPU went
   * idle, and this is the time from the call to the work starting.
   */
  launchApiStartNs?: number | null;
  /** Innermost NVTX range per instant (see `innermostSegments`). */
  nvtx?: NamedSegments | null;
}

/** `Record<cause, ns>` (only non-zero parts) plus the primary (largest) cause. */
export interface GapCauses {
  causes: Record<string, number>;
  cause: string;
}

/**
 * The part of a gap no cause has taken yet: sorted, disjoint pieces [starts[i], ends[i]). Small
 * plain arrays, replaced only when a cause takes something: this runs for every nested NVTX
 * segment of every gap (tens of thousands of gaps on a long capture), where interval sets of
 * typed arrays cost an allocation per step.
 */
class Untaken {
  private starts: number[];
  private ends: number[];

  constructor(a: number, b: number) {
    this.starts = b > a ? [a] : [];
    this.ends = b > a ? [b] : [];
  }

  get empty(): boolean {
    return this.starts.length === 0;
  }

  get length(): number {
    let t = 0;
    for (let i = 0; i < this.starts.length; i++) t += this.ends[i] - this.starts[i];
    return t;
  }

  /** Takes what `set` (sorted and disjoint, anywhere in time) covers; returns the ns taken. */
  take(set: IntervalSet): number {
    const rs = this.starts;
    const re = this.ends;
    if (rs.length === 0 || set.starts.length === 0) return 0;
    const ss = set.starts;
    const se = set.ends;
    let j = firstEndingAfter(set, rs[0]);
    if (j >= ss.length || ss[j] >= re[re.length - 1]) return 0;
    const ns: number[] = [];
    const ne: number[] = [];
    let part = 0;
    for (let k = 0; k < rs.length; k++) {
      let cur = rs[k];
      const b = re[k];
      while (j < ss.length && se[j] <= cur) j++;
      while (j < ss.length && ss[j] < b) {
        const cs = Math.max(ss[j], cur);
        const ce = Math.min(se[j], b);
        if (ce > cs) {
          if (cs > cur) {
            ns.push(cur);
            ne.push(cs);
          }
          part += ce - cs;
          cur = ce;
        }
        // A set interval reaching past this piece may cover the next one too.
        if (se[j] >= b) break;
        j++;
      }
      if (cur < b) {
        ns.push(cur);
        ne.push(b);
      }
    }
    if (part > 0) {
      this.starts = ns;
      this.ends = ne;
    }
    return part;
  }

  /** Takes what [a, b) covers; returns the ns taken. */
  takeRange(a: number, b: number): number {
    if (!(b > a)) return 0;
    ONE.starts[0] = a;
    ONE.ends[0] = b;
    return this.take(ONE);
  }
}

function single(a: number, b: number): IntervalSet {
  return b > a ? { starts: Float64Array.of(a), ends: Float64Array.of(b) } : { starts: new Float64Array(0), ends: new Float64Array(0) };
}

/** One reused single-interval set for `takeRange` (nothing holds it past a call). */
const ONE: IntervalSet = { starts: new Float64Array(1), ends: new Float64Array(1) };

/** Time sort order of causes for output: priority, then ns (descending), then name. */
export function causeRank(cause: string): number {
  const kind = cause.startsWith(NVTX_CAUSE_PREFIX) ? 'nvtx' : cause;
  const i = CAUSE_PRIORITY.indexOf(kind as CauseKind);
  return i < 0 ? CAUSE_PRIORITY.length : i;
}

/** The largest part; ties go to the higher-priority cause. */
export function primaryCause(causes: Record<string, number>): string {
  let best = 'unattributed';
  let bestNs = -1;
  for (const [c, ns] of Object.entries(causes)) {
    if (ns > bestNs || (ns === bestNs && (causeRank(c) < causeRank(best) || (causeRank(c) === causeRank(best) && c < best)))) {
      best = c;
      bestNs = ns;
    }
  }
  return best;
}

/**
 * Splits a gap among its causes in priority order gc > gil_wait > sync > launch_late >
 * nvtx:<name> > unattributed: each cause takes the part of the gap it covers that no
 * higher-priority cause took (interval arithmetic, no double counting).
 */
export function splitGapCauses(input: GapCauseInput): GapCauses {
  const { startNs: s, endNs: e } = input;
  const parts = new CauseParts();
  const untaken = new Untaken(s, e);
  if (input.gc && !untaken.empty) parts.add('gc', RANK.gc, untaken.take(input.gc));
  if (input.gilWait && !untaken.empty) parts.add('gil_wait', RANK.gil_wait, untaken.take(input.gilWait));
  if (input.sync && !untaken.empty) parts.add('sync', RANK.sync, untaken.take(input.sync));
  const api = input.launchApiStartNs;
  if (api != null && api > s && api < e) parts.add('launch_late', RANK.launch_late, untaken.takeRange(api, e));
  if (input.nvtx) {
    const segs = input.nvtx;
    for (let i = 0; i < segs.starts.length && !untaken.empty; i++) {
      const part = untaken.takeRange(segs.starts[i], segs.ends[i]);
      // The cause's name is made only for a segment that took something.
      if (part > 0) parts.add(NVTX_CAUSE_PREFIX + segs.names[i], RANK.nvtx, part);
    }
  }
  parts.add('unattributed', RANK.unattributed, untaken.length);
  return parts.ordered();
}

/** Each cause kind's place in `CAUSE_PRIORITY` (what `causeRank` gives a cause of that kind). */
const RANK = {
  gc: CAUSE_PRIORITY.indexOf('gc'),
  gil_wait: CAUSE_PRIORITY.indexOf('gil_wait'),
  sync: CAUSE_PRIORITY.indexOf('sync'),
  launch_late: CAUSE_PRIORITY.indexOf('launch_late'),
  nvtx: CAUSE_PRIORITY.indexOf('nvtx'),
  unattributed: CAUSE_PRIORITY.indexOf('unattributed'),
} as const;

/**
 * One gap's non-zero parts by cause, in a few parallel arrays: a gap has a handful of causes, and
 * records keyed by cause names built up one key at a time cost a hidden-class change per key on
 * every one of tens of thousands of gaps. The record is built once, in output order.
 */
class CauseParts {
  private readonly names: string[] = [];
  private readonly ns: number[] = [];
  private readonly ranks: number[] = [];

  /** `rank`: the cause's `causeRank`, known to the caller by the cause's kind. */
  add(cause: string, rank: number, part: number): void {
    if (!(part > 0)) return;
    const i = this.names.indexOf(cause);
    if (i >= 0) this.ns[i] += part;
    else {
      this.names.push(cause);
      this.ns.push(part);
      this.ranks.push(rank);
    }
  }

  /** The parts in `sortCauses` order (priority, larger first, name) and the primary cause (`primaryCause`). */
  ordered(): GapCauses {
    const { names, ns, ranks } = this;
    // An insertion sort: the parts arrive in priority order, but for the NVTX ones (one rank).
    // The order is total (names differ), so any sort gives this one.
    const order: number[] = [];
    for (let i = 0; i < names.length; i++) {
      let k = order.length;
      order.push(i);
      for (; k > 0; k--) {
        const j = order[k - 1];
        const cmp = ranks[i] - ranks[j] || ns[j] - ns[i] || (names[i] < names[j] ? -1 : 1);
        if (cmp > 0) break;
        order[k] = j;
      }
      order[k] = i;
    }
    const causes: Record<string, number> = {};
    let best = -1;
    for (const i of order) {
      causes[names[i]] = ns[i];
      // In this order the first of the largest parts wins a tie: higher priority, then the name.
      if (best < 0 || ns[i] > ns[best]) best = i;
    }
    return { causes, cause: best < 0 ? 'unattributed' : names[best] };
  }
}

/** An NVTX range on one thread. */
export interface NamedRange {
  start: number;
  end: number;
  name: string;
}

/** NVTX ranges as parallel columns (`NamedRange`s without an object each). */
export interface NamedRangeColumns {
  starts: number[];
  ends: number[];
  names: string[];
}

/**
 * The innermost range open at each instant of [a, b): among the ranges containing the instant, the
 * one that started last (ties: the one that ends first, then the later in the list). Returns
 * sorted, disjoint segments; instants with no open range are left out. Adjacent segments with the
 * same name merge.
 */
export function innermostSegments(ranges: readonly NamedRange[], a: number, b: number): NamedSegments {
  return innermostSegmentsOf({ starts: ranges.map((r) => r.start), ends: ranges.map((r) => r.end), names: ranges.map((r) => r.name) }, a, b);
}

/**
 * `innermostSegments` over columns: what the gap analysis calls once per gap and launching thread
 * (tens of thousands of times), so it allocates the cut points and its answer, nothing per range.
 */
export function innermostSegmentsOf(ranges: NamedRangeColumns, a: number, b: number): NamedSegments {
  const out: NamedSegments = { starts: [], ends: [], names: [] };
  if (!(b > a)) return out;
  const { starts: rs, ends: re, names: rn } = ranges;
  // The ranges overlapping [a, b) with a length, in list order; their inner ends cut the gap.
  const cand: number[] = [];
  const pts: number[] = [a, b];
  for (let j = 0; j < rs.length; j++) {
    if (!(rs[j] < b && re[j] > a && re[j] > rs[j])) continue;
    cand.push(j);
    if (rs[j] > a) pts.push(rs[j]);
    if (re[j] < b) pts.push(re[j]);
  }
  if (cand.length === 0) return out;
  sortCutPoints(pts);
  for (let i = 0; i + 1 < pts.length; i++) {
    const x = pts[i];
    const y = pts[i + 1];
    if (y === x) continue;
    let best = -1;
    for (const j of cand) {
      if (rs[j] > x || re[j] < y) continue;
      if (best < 0 || rs[j] > rs[best] || (rs[j] === rs[best] && re[j] <= re[best])) best = j;
    }
    if (best < 0) continue;
    const name = rn[best];
    const n = out.starts.length;
    if (n > 0 && out.ends[n - 1] === x && out.names[n - 1] === name) out.ends[n - 1] = y;
    else {
      out.starts.push(x);
      out.ends.push(y);
      out.names.push(name);
    }
  }
  return out;
}

/**
 * Sorts a gap's cut points ascending, in place. A gap has a few dozen of them, usually: an
 * insertion sort compares them as doubles, where `Array.prototype.sort` with a comparator boxes
 * every timestamp it passes (past 2^31 ns each is a heap number: two per comparison, for every gap
 * of a capture). Past 64 a typed array's sort (numeric, no comparator) keeps it n log n.
 */
function sortCutPoints(pts: number[]): void {
  if (pts.length > 64) {
    const sorted = Float64Array.from(pts).sort();
    for (let i = 0; i < pts.length; i++) pts[i] = sorted[i];
    return;
  }
  for (let i = 1; i < pts.length; i++) {
    const x = pts[i];
    let k = i;
    for (; k > 0 && pts[k - 1] > x; k--) pts[k] = pts[k - 1];
    pts[k] = x;
  }
}

/**
 * NVTX segments of a gap across several threads: the first thread's innermost ranges, then the
 * next thread's where the first had none open, and so on.
 */
export function layeredSegments(perThread: readonly NamedSegments[]): NamedSegments {
  if (perThread.length === 0) return { starts: [], ends: [], names: [] };
  if (perThread.length === 1) return perThread[0];
  const pieces: { s: number; e: number; n: string }[] = [];
  let covered: IntervalSet = { starts: new Float64Array(0), ends: new Float64Array(0) };
  for (const segs of perThread) {
    for (let i = 0; i < segs.starts.length; i++) {
      const free = subtractIntervals(single(segs.starts[i], segs.ends[i]), covered);
      for (let k = 0; k < free.starts.length; k++) pieces.push({ s: free.starts[k], e: free.ends[k], n: segs.names[i] });
    }
    // The pieces so far are disjoint: sorted, they are what later threads may not take.
    const sorted = [...pieces].sort((x, y) => x.s - y.s);
    covered = mergeSorted(Float64Array.from(sorted, (p) => p.s), Float64Array.from(sorted, (p) => p.e));
  }
  pieces.sort((x, y) => x.s - y.s);
  return { starts: pieces.map((p) => p.s), ends: pieces.map((p) => p.e), names: pieces.map((p) => p.n) };
}

function mergeSorted(starts: Float64Array, ends: Float64Array): IntervalSet {
  const s: number[] = [];
  const e: number[] = [];
  for (let i = 0; i < starts.length; i++) {
    const n = s.length;
    if (n > 0 && starts[i] <= e[n - 1]) e[n - 1] = Math.max(e[n - 1], ends[i]);
    else {
      s.push(starts[i]);
      e.push(ends[i]);
    }
  }
  return { starts: Float64Array.from(s), ends: Float64Array.from(e) };
}
