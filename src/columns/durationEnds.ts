import { Column } from './typedColumn.js';

/**
 * Ends held as durations from their rows' starts: a Uint32 a row while end - start is a whole ns
 * below 2^32 - 1 that gives the end back exactly (a CUDA API call takes microseconds), else
 * `LONG_DURATION` there and the end kept whole in `long` (a synchronize of seconds, the first
 * call's context creation, a time with a fraction). 4 bytes a row where a Float64 end took 8: 43 MB
 * on the 30x bench copy's 10.7M API calls. Read with `endAt`; the numbers are the ends as read.
 */
export interface DurationEnds {
  readonly duration: Uint32Array;
  readonly long: ReadonlyMap<number, number>;
}

/** The duration that marks an end kept whole in `DurationEnds.long`. */
export const LONG_DURATION = 0xffffffff;

/** The end of row `i`, whose start is `start[i]`. */
export function endAt(start: Float64Array, ends: DurationEnds, i: number): number {
  const d = ends.duration[i];
  // `+`: a number on both paths (a Map's value could be anything), so a caller's loop keeps it unboxed.
  return d !== LONG_DURATION ? start[i] + d : +ends.long.get(i)!;
}

/** `DurationEnds` as a loader fills them, row by row (room made with `ensure`, as its other columns). */
export class DurationEndsColumn {
  private readonly long = new Map<number, number>();

  constructor(private readonly duration: Column<Uint32Array>) {}

  /** Row `i`'s end, whose start is `start`. */
  put(i: number, start: number, end: number): void {
    const d = end - start;
    if (d >>> 0 === d && d !== LONG_DURATION && start + d === end) this.duration.data[i] = d;
    else {
      this.duration.data[i] = LONG_DURATION;
      this.long.set(i, end);
    }
  }

  ensure(n: number): void {
    this.duration.ensure(n);
  }

  trim(n: number): DurationEnds {
    return { duration: this.duration.trim(n), long: this.long };
  }
}
