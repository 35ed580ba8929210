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

/** Collects garbage now (a full collection), when V8 allows it. */
export function collectGarbage(): void {
  collector()?.();
}
