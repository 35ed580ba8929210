import type { CpuOpColumns, LaunchCallColumns } from './hostSide.js';

/**
 * Puts a PyTorch profiler trace on an nsys export's clock. Both carry absolute time (nsys:
 * `utcEpochNs` + ns; Kineto: `ts * 1000 + baseTimeNanoseconds`), which gives a first offset; it
 * is refined with the launch calls nsys saw: each was made from inside an aten op of the same
 * thread, between that op's children, so at the right offset it falls inside one segment of the
 * thread's op boundaries that some op covers. The offset kept is the middle of the range that
 * places the most sampled launches that way; the range's width is its spread.
 */
export interface TorchClockAlignment {
  /** Add to a Kineto time (ns from its session start) to get nsys's (ns from its session start). */
  offsetNs: number;
  /** From the two session starts alone. */
  initialOffsetNs: number;
  /** offsetNs - initialOffsetNs. */
  refinementNs: number;
  /** Width of the offset range that places the most launches (how precisely the offset is known). */
  spreadNs: number;
  /** Launches sampled and how many the offset places inside an op segment. */
  sampledLaunches: number;
  matchedLaunches: number;
  /** Other offset ranges as good as the one kept (0: unambiguous). */
  equallyGoodRanges: number;
}

export interface TorchAlignmentOptions {
  /** How far from the session-start offset to search (default 5 ms). */
  searchNs?: number;
  /** Launches used at most (evenly spaced; default 2000). */
  maxSamples?: number;
}

interface ThreadSegments {
  bounds: Float64Array;
  /** depth[k]: ops covering [bounds[k], bounds[k+1]). */
  depth: Int32Array;
}

function segmentsOf(ops: CpuOpColumns, first: number, last: number): ThreadSegments {
  const n = last - first + 1;
  const pts = new Float64Array(2 * n);
  for (let i = 0; i < n; i++) {
    pts[2 * i] = ops.start[first + i];
    pts[2 * i + 1] = ops.end[first + i];
  }
  pts.sort();
  const uniq: number[] = [];
  for (const p of pts) if (uniq.length === 0 || uniq[uniq.length - 1] !== p) uniq.push(p);
  const bounds = Float64Array.from(uniq);
  // Coverage per segment: +1 where an op starts, -1 where it ends.
  const delta = new Int32Array(bounds.length);
  const idx = (t: number) => {
    let a = 0;
    let b = bounds.length - 1;
    while (a < b) {
      const m = (a + b) >> 1;
      if (bounds[m] < t) a = m + 1;
      else b = m;
    }
    return a;
  };
  for (let i = first; i <= last; i++) {
    delta[idx(ops.start[i])]++;
    delta[idx(ops.end[i])]--;
  }
  const depth = new Int32Array(bounds.length);
  let d = 0;
  for (let k = 0; k < bounds.length; k++) depth[k] = d += delta[k];
  return { bounds, depth };
}

/** First index k with bounds[k] > t (bounds.length when none). */
function upperBound(bounds: Float64Array, t: number): number {
  let a = 0;
  let b = bounds.length;
  while (a < b) {
    const m = (a + b) >> 1;
    if (bounds[m] <= t) a = m + 1;
    else b = m;
  }
  return a;
}

export function alignTorchClock(ops: CpuOpColumns, launches: LaunchCallColumns, initialOffsetNs: number, opts: TorchAlignmentOptions = {}): TorchClockAlignment {
  const W = opts.searchNs ?? 5_000_000;
  const maxSamples = opts.maxSamples ?? 2000;
  const segs = new Map<string, ThreadSegments>();
  for (const [k, [a, b]] of ops.threads) segs.set(k, segmentsOf(ops, a, b));
  const candidates: number[] = [];
  for (let i = 0; i < launches.count; i++) if (!launches.isGraph[i] && segs.has(`${launches.pid[i]}:${launches.tid[i]}`)) candidates.push(i);
  const step = Math.max(1, candidates.length / maxSamples);
  const lo = initialOffsetNs - W;
  const hi = initialOffsetNs + W;
  const opens: number[] = [];
  const closes: number[] = [];
  let sampled = 0;
  for (let s = 0; s < candidates.length; s += step) {
    const i = candidates[Math.floor(s)];
    sampled++;
    const seg = segs.get(`${launches.pid[i]}:${launches.tid[i]}`)!;
    const ls = launches.start[i];
    const le = launches.end[i];
    // Kineto-time range the launch can occupy for offsets in [lo, hi].
    let k = Math.max(0, upperBound(seg.bounds, ls - hi) - 1);
    for (; k + 1 < seg.bounds.length && seg.bounds[k] <= le - lo; k++) {
      if (seg.depth[k] <= 0 || seg.bounds[k + 1] - seg.bounds[k] < le - ls) continue;
      const a = Math.max(lo, le - seg.bounds[k + 1]);
      const b = Math.min(hi, ls - seg.bounds[k]);
      if (a <= b) {
        opens.push(a);
        closes.push(b);
      }
    }
  }
  // Sweep: the offset range covered by the most launch intervals (opens before closes on ties:
  // the intervals are closed).
  const os = Float64Array.from(opens).sort();
  const cs = Float64Array.from(closes).sort();
  let cur = 0;
  let best = 0;
  const ranges: [number, number][] = [];
  for (let i = 0, j = 0; i < os.length || j < cs.length; ) {
    if (i < os.length && os[i] <= cs[j]) {
      cur++;
      if (cur > best) {
        best = cur;
        ranges.length = 0;
        ranges.push([os[i], NaN]);
      } else if (cur === best) ranges.push([os[i], NaN]);
      i++;
    } else {
      if (cur === best && ranges.length && Number.isNaN(ranges[ranges.length - 1][1])) ranges[ranges.length - 1][1] = cs[j];
      cur--;
      j++;
    }
  }
  if (best === 0) {
    return { offsetNs: initialOffsetNs, initialOffsetNs, refinementNs: 0, spreadNs: NaN, sampledLaunches: sampled, matchedLaunches: 0, equallyGoodRanges: 0 };
  }
  const closed = ranges.filter((r) => !Number.isNaN(r[1]));
  // Several equally good ranges: keep the one nearest the session-start offset.
  closed.sort((x, y) => Math.abs((x[0] + x[1]) / 2 - initialOffsetNs) - Math.abs((y[0] + y[1]) / 2 - initialOffsetNs));
  const [a, b] = closed[0];
  const offsetNs = Math.round((a + b) / 2);
  return {
    offsetNs,
    initialOffsetNs,
    refinementNs: offsetNs - initialOffsetNs,
    spreadNs: b - a,
    sampledLaunches: sampled,
    matchedLaunches: best,
    equallyGoodRanges: closed.length - 1,
  };
}
