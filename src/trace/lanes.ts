/**
 * Keeps the slices of one track nested-safe: Perfetto requires `X` events on a (pid, tid) track
 * to nest perfectly, and two ops on one CUDA stream should never overlap at all, yet nsys
 * timestamps sometimes let an op start a few hundred ns before the previous op on its stream ends
 * (clock jitter; 8 of 704k ops on pytorch-dense-long, ~120 of 19k per rank on pytorch-tp2).
 *
 * Choice: never alter a time. Slices arrive in start order; each goes to the first lane whose
 * last slice has ended by its start (lane 0 = the track itself), else to a new overflow lane,
 * shown as its own track ("... (overlap 1)"). Within a lane slices are strictly sequential, so
 * every track nests trivially (no slice ever contains or crosses another).
 */
export class Lanes {
  private readonly ends: number[] = [];
  private lastStart = -Infinity;

  /** Lane index for [start, end); call in non-decreasing start order. */
  assign(start: number, end: number): number {
    if (start < this.lastStart) throw new Error(`Lanes.assign: slices out of start order (${start} after ${this.lastStart})`);
    this.lastStart = start;
    const ends = this.ends;
    for (let i = 0; i < ends.length; i++) {
      if (start >= ends[i]) {
        ends[i] = end;
        return i;
      }
    }
    ends.push(end);
    return ends.length - 1;
  }

  /** Lanes in use (1 = no overflow). */
  get count(): number {
    return this.ends.length;
  }
}
