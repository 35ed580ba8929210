/** What a window lookup needs of an iteration window. */
export interface TimeWindow {
  pid: number;
  startNs: number;
  endNs: number;
}

/**
 * Iteration windows per process, for lookup by time: the gap analysis, the memory traffic and the
 * collective times place events with it (an iteration's window ends where the next one starts).
 */
export class WindowIndex {
  private readonly byPid = new Map<number, { starts: Float64Array; ends: Float64Array; idx: Int32Array }>();
  constructor(readonly refs: readonly TimeWindow[]) {
    const lists = new Map<number, number[]>();
    refs.forEach((r, i) => {
      const l = lists.get(r.pid) ?? [];
      l.push(i);
      lists.set(r.pid, l);
    });
    for (const [pid, l] of lists) {
      l.sort((a, b) => refs[a].startNs - refs[b].startNs);
      this.byPid.set(pid, {
        starts: Float64Array.from(l, (i) => refs[i].startNs),
        ends: Float64Array.from(l, (i) => refs[i].endNs),
        idx: Int32Array.from(l),
      });
    }
  }
  private lastPid = NaN;
  private lastWindows: { starts: Float64Array; ends: Float64Array; idx: Int32Array } | undefined;
  private lastT = -Infinity;
  private lastK = -1;
  /**
   * Index into `refs` of the window of `pid` holding `t` ([start, end)), or -1. Calls with
   * non-decreasing `t` for the same pid walk forward from the previous answer instead of searching
   * (and look the process up once: the gaps ask for every gap of a device, hundreds of thousands).
   */
  at(pid: number, t: number): number {
    const w = pid === this.lastPid ? this.lastWindows : this.byPid.get(pid);
    if (!w) return -1;
    let k: number;
    if (pid === this.lastPid && t >= this.lastT) {
      k = this.lastK;
      while (k + 1 < w.starts.length && w.starts[k + 1] <= t) k++;
    } else {
      let lo = 0;
      let hi = w.starts.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (w.starts[mid] <= t) lo = mid + 1;
        else hi = mid;
      }
      k = lo - 1;
    }
    this.lastPid = pid;
    this.lastWindows = w;
    this.lastT = t;
    this.lastK = k;
    return k >= 0 && t < w.ends[k] ? w.idx[k] : -1;
  }
}
