import type { PartEntry } from './parts.js';

/** How far `analyzeExport` is: steps done, of the steps known so far (`done <= total`, equal at the end). */
export interface StepCount {
  done: number;
  total: number;
}

/**
 * Counts the timed steps of one analysis for its progress callback. The parts' steps are known
 * from the start (each part with a timing); the loader's (the GPU ops, the API calls, the
 * launch indexes, the NVTX columns) depend on what the export holds and where it is read, so
 * each adds one to the total as it is reported. A part that does not run (`when`) leaves the
 * total. So the count never passes the total, and meets it when the last step is reported.
 */
export class StepProgress {
  private done = 0;
  private total = 0;
  /** Part steps not reported yet, by step name (two parts may share one). */
  private readonly pending = new Map<string, number>();

  constructor(
    parts: readonly PartEntry[],
    private readonly report?: (step: string, count: StepCount) => void,
  ) {
    for (const p of parts) {
      const step = partStep(p);
      if (step) this.expect(step);
    }
  }

  /** Step `name` is done: a part's, or a loader step (one more in the total). */
  finished(name: string): void {
    if (!this.take(name)) this.total++;
    this.done++;
    this.report?.(name, { done: this.done, total: this.total });
  }

  /** Part step `name` will not run. */
  skipped(name: string): void {
    if (this.take(name)) this.total--;
  }

  private expect(step: string): void {
    this.pending.set(step, (this.pending.get(step) ?? 0) + 1);
    this.total++;
  }

  /** Takes one pending part step `name`; false when none is pending (a loader step). */
  private take(name: string): boolean {
    const n = this.pending.get(name) ?? 0;
    if (n === 0) return false;
    this.pending.set(name, n - 1);
    return true;
  }
}

/** A part's step in `timingsMs` and the progress; null when it is not timed. */
export function partStep(part: PartEntry): string | null {
  return part.timing === undefined ? part.name : part.timing;
}
