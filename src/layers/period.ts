/**
 * Layers without markers: a decoder runs one kernel sequence per layer, so a step's kernel names
 * (in launch order) repeat with a period of one layer's kernels. CUDA-graph replays traced per
 * node have no host marker at all during the replay; this is how their steps are split.
 */

/** Layers found in one step's kernel sequence. */
export interface PeriodSplit {
  period: number;
  /** Per kernel (sequence position): its layer index, -1 outside every layer. */
  layerOf: Int32Array;
  /** Most layers in one run of repeats. */
  layers: number;
  runs: number;
  /** Share of the sequence's kernels inside a layer that equal the kernel one period before or after. */
  fitShare: number;
}

/** Candidate periods tried (the most frequent distances between repeats of one name). */
const CANDIDATES = 16;
/** A layer has at least this many kernels (shorter repeats are elementwise chains, not layers). */
export const MIN_PERIOD = 4;
/** A run of repeats is layers from this many repetitions on. */
const MIN_LAYERS = 2;

/**
 * The period p that most kernels follow (names[k] == names[k + p]), and the layers it makes:
 * each maximal run of matches (mismatches up to max(1, p/16) inside it tolerated) covers
 * floor(length / p) layers from its first kernel on. Raw match counts favour the true period over
 * its multiples (L layers match (L-1)p times at p, (L-2)p at 2p). Candidates are the distances
 * between successive kernels of one name, so the cost is O(n * CANDIDATES). Null when no period
 * gives two layers.
 */
export function splitByPeriod(names: Int32Array): PeriodSplit | null {
  const first = bestSplit(names);
  if (!first) return null;
  const n = names.length;
  let { layers, runs, follow } = first;
  // What the first period leaves (a mixed step's prefills beside its decode replay, run with
  // other shapes: another period) is split again, stretch by stretch.
  for (let round = 0; round < MAX_ROUNDS; round++) {
    let found = false;
    for (let a = 0; a < n; ) {
      if (first.layerOf[a] >= 0) {
        a++;
        continue;
      }
      let b = a;
      while (b < n && first.layerOf[b] < 0) b++;
      const sub = b - a >= MIN_PERIOD * MIN_LAYERS ? bestSplit(names.subarray(a, b)) : null;
      if (sub) {
        for (let k = 0; k < b - a; k++) if (sub.layerOf[k] >= 0) first.layerOf[a + k] = sub.layerOf[k];
        layers = Math.max(layers, sub.layers);
        runs += sub.runs;
        follow += sub.follow;
        found = true;
      }
      a = b;
    }
    if (!found) break;
  }
  return { period: first.period, layerOf: first.layerOf, layers, runs, fitShare: n ? follow / n : 0 };
}

/** Rounds of splitting what earlier periods left. */
const MAX_ROUNDS = 3;

/** `splitByPeriod`'s one period: the best candidate and its layers (`follow`: kernels that follow it). */
function bestSplit(names: Int32Array): (Omit<PeriodSplit, 'fitShare'> & { follow: number }) | null {
  const n = names.length;
  if (n < MIN_PERIOD * MIN_LAYERS) return null;
  let best = 0;
  let bestMatches = 0;
  for (const p of candidatePeriods(names)) {
    let m = 0;
    for (let k = 0; k + p < n; k++) if (names[k] === names[k + p]) m++;
    if (m > bestMatches || (m === bestMatches && p < best)) {
      best = p;
      bestMatches = m;
    }
  }
  if (best === 0 || bestMatches < best) return null;
  return layersOf(names, best);
}

/** The most frequent distances (from MIN_PERIOD to n/2) between successive kernels of one name. */
function candidatePeriods(names: Int32Array): number[] {
  const n = names.length;
  const last = new Map<number, number>();
  const counts = new Int32Array((n >> 1) + 1);
  for (let k = 0; k < n; k++) {
    const prev = last.get(names[k]);
    if (prev !== undefined) {
      const d = k - prev;
      if (d >= MIN_PERIOD && d <= n >> 1) counts[d]++;
    }
    last.set(names[k], k);
  }
  const ds: number[] = [];
  for (let d = MIN_PERIOD; d < counts.length; d++) if (counts[d] > 0) ds.push(d);
  ds.sort((a, b) => counts[b] - counts[a] || a - b);
  return ds.slice(0, CANDIDATES);
}

/** The layers period `p` makes: runs of matches, each `floor(len / p)` layers from its start. */
function layersOf(names: Int32Array, p: number): (Omit<PeriodSplit, 'fitShare'> & { follow: number }) | null {
  const n = names.length;
  const layerOf = new Int32Array(n).fill(-1);
  const tolerance = Math.max(1, Math.floor(p / 16));
  let layers = 0;
  let runs = 0;
  let k = 0;
  while (k + p < n) {
    if (names[k] !== names[k + p]) {
      k++;
      continue;
    }
    // A run of matches from k, bridging short mismatch gaps.
    const a = k;
    let b = k;
    let gap = 0;
    for (let j = k; j + p < n; j++) {
      if (names[j] === names[j + p]) {
        b = j + 1;
        gap = 0;
      } else if (++gap > tolerance) break;
    }
    const count = Math.floor((b - a + p) / p);
    if (count >= MIN_LAYERS) {
      for (let j = 0; j < count * p; j++) layerOf[a + j] = Math.floor(j / p);
      layers = Math.max(layers, count);
      runs++;
    }
    // Scanning resumes after the layers taken: a run bridged into the next stretch (a decode replay
    // after a prefill) must not swallow that stretch's first layer.
    k = count >= MIN_LAYERS ? a + count * p : b;
  }
  if (runs === 0) return null;
  return { period: p, layerOf, layers, runs, follow: following(names, layerOf, p) };
}

/** Kernels in a layer that equal the kernel one period before or after (in a layer too). */
function following(names: Int32Array, layerOf: Int32Array, p: number): number {
  const n = names.length;
  let follow = 0;
  for (let k = 0; k < n; k++) {
    if (layerOf[k] < 0) continue;
    const before = k - p >= 0 && layerOf[k - p] >= 0 && names[k - p] === names[k];
    const after = k + p < n && layerOf[k + p] >= 0 && names[k + p] === names[k];
    if (before || after) follow++;
  }
  return follow;
}
