/** What a window lookup needs of an iteration window. */
export interface TimeWindow {
  pid: number;
  startNs: number;
  endNs: number;
}

/**
 * Index of the window of `pid` that holds time `t`, or -1: a binary search over each process's
 * windows by start (windows of one process are disjoint; an iteration's window ends where the
 * next one starts).
 */
export function windowLookup(windows: readonly TimeWindow[]): (pid: number, t: number) => number {
  const byPid = new Map<number, number[]>();
  windows.forEach((w, i) => {
    const l = byPid.get(w.pid) ?? [];
    l.push(i);
    byPid.set(w.pid, l);
  });
  for (const l of byPid.values()) l.sort((a, b) => windows[a].startNs - windows[b].startNs);
  return (pid, t) => {
    const l = byPid.get(pid);
    if (!l) return -1;
    let lo = 0;
    let hi = l.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (windows[l[mid]].startNs <= t) lo = mid + 1;
      else hi = mid;
    }
    const k = lo - 1;
    return k >= 0 && t < windows[l[k]].endNs ? l[k] : -1;
  };
}
