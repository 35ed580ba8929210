import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * A full garbage collection, run after the pipeline lets large columns go (`LoadedExport.release`).
 *
 * Typed columns live outside V8's heap, which stays small (30-200 MB) while they take hundreds of
 * MB: V8 collected the NVTX columns of the 10x bench export (307 MB) only after the GPU ops were
 * read beside them, and the GPU ops and API calls (420 MB) not before the process ended. Measured
 * with a collection after each release (`report` on the 10x export): peak RSS 874 -> 806 MB,
 * ~0.1 s of collections on a run of a minute, the same output.
 *
 * V8 gives a program `gc` only with `--expose-gc`: the flag is set for the moment it takes to make
 * a context holding the function, then set back (nothing else of the process sees it, and worker
 * threads started later find V8's flags as they were, so their code caches still match). Null
 * where that fails (an embedder that refuses the flag): no collection, as before.
 */
let collect: (() => void) | null | undefined;

function collector(): (() => void) | null {
  if (collect !== undefined) return collect;
  try {
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as () => void;
  } catch {
    collect = null;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
  return collect;
}

/** Rows of let-go columns from which a collection is worth its time (~10-100 ms): smaller ones are left to V8. */
export const COLLECT_FROM_ROWS = 1_000_000;
/** Growth of what V8 holds (`collectable`) since the last collection from which the next step's end collects again. */
export const COLLECT_AFTER_GROWTH_BYTES = 64 * 1024 ** 2;

/** Collects garbage now (a full collection), when V8 allows it. */
export function collectGarbage(): void {
  collector()?.();
}

/**
 * What V8 holds, live or garbage: its heap's objects and the buffers outside it. A SharedArrayBuffer
 * counts in `arrayBuffers` only, a buffer a worker transferred in `external` only, any other in
 * both: a measure of growth, not of bytes.
 */
function collectable(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.external + m.arrayBuffers;
}

/**
 * When the pipeline collects, between two parts of one analysis: after large columns are let go
 * (`releasedRows`), and, on an export with large columns (`largeExport`), whenever what V8 holds
 * grew by `COLLECT_AFTER_GROWTH_BYTES` since the last collection: the gap scan, the iteration
 * attribution and the NVTX GPU projection leave hundreds of MB of short-lived arrays that V8 does
 * not collect before the next part allocates its own (on the 10x export the peak was 874 MB, 806
 * MB collecting after every part). Measured on V8's side, not the RSS: freed memory the allocator
 * keeps holds the RSS up, and a part's garbage after it went unseen (the projection's ~250 MB on
 * the 10x export, when the NVTX read before it had raised the RSS: peaks of 695 to 753 MB).
 */
export class GarbagePolicy {
  private afterLast = collectable();
  constructor(private readonly largeExport: () => boolean) {}

  afterPart(releasedRows: number): void {
    if (releasedRows < COLLECT_FROM_ROWS && !(this.largeExport() && collectable() - this.afterLast >= COLLECT_AFTER_GROWTH_BYTES)) return;
    collectGarbage();
    this.afterLast = collectable();
  }
}
