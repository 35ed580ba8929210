import type { LoadedData } from '../load/loadedExport.js';
import { PARTS, type PartEntry, type PartName } from './parts.js';
import type { AnalysisPart } from './request.js';

/** The parts `asked` are computed from (the closure of `needs`), in `PARTS` order. */
export function partsFor(asked: ReadonlySet<AnalysisPart>): PartEntry[] {
  const byName = new Map(PARTS.map((p) => [p.name, p]));
  const names = new Set<PartName>();
  const add = (name: PartName) => {
    if (names.has(name)) return;
    names.add(name);
    for (const d of byName.get(name)!.needs) add(d);
  };
  asked.forEach(add);
  return PARTS.filter((p) => names.has(p.name));
}

/** How the analysis of one export runs its parts. */
export interface RunMode {
  /** The NVTX columns exceed what is kept for the whole analysis (see `SHARED_NVTX_ROWS`). */
  largeNvtx: boolean;
  /** Whether the NVTX worker computes part `name`. */
  inBackground(name: string): boolean;
}

/** One step of the run: a part, then the loader columns and the intermediate values no later part reads. */
export interface PlannedPart {
  part: PartEntry;
  release: LoadedData[];
  /** Values of `intermediate` parts whose last reader this part is (or, read by none, the part itself). */
  dropValues: PartName[];
}

/**
 * The order the parts run in, and when each loader column is let go:
 * - a part the NVTX worker computes is taken just before the first part that reads it (else
 *   last): the main thread works meanwhile, and the worker holds its own view of the columns;
 * - past SHARED_NVTX_ROWS the parts that read the NVTX columns (`loads` or `reads`) run first and
 *   the NVTX columns go after them, before the GPU ops are read (the two large working sets are
 *   not held at once);
 *   below it the NVTX columns stay for the whole analysis (every NVTX reader shares them);
 * - the GPU ops and the API calls go after the last part that reads them;
 * - an intermediate part's value goes after the last part that reads it (`dropValues`): on the 10x
 *   bench export the gap scan's long gaps and the host ranges held tens of MB of objects beside the
 *   reported gaps until the analysis ended.
 */
export function planRun(parts: readonly PartEntry[], mode: RunMode): PlannedPart[] {
  const reads = (p: PartEntry, data: LoadedData) => p.loads?.includes(data) === true || p.reads?.includes(data) === true;
  const readsNvtx = (p: PartEntry) => reads(p, 'nvtx');
  let order = mode.largeNvtx ? [...parts.filter(readsNvtx), ...parts.filter((p) => !readsNvtx(p))] : [...parts];
  const deferred = order.filter((p) => p.background && mode.inBackground(p.name)).map((p) => ({ ...p, loads: [], reads: [] }));
  for (const p of deferred) {
    order = order.filter((q) => q.name !== p.name);
    const reader = order.findIndex((q) => [...q.needs, ...(q.uses ?? [])].includes(p.name));
    order.splice(reader < 0 ? order.length : reader, 0, p);
  }
  const kept: LoadedData[] = mode.largeNvtx ? [] : ['nvtx'];
  const dropAt = lastReaders(order);
  return order.map((part, i) => ({
    part,
    release: [...new Set([...(part.loads ?? []), ...(part.reads ?? [])])].filter((data) => !kept.includes(data) && !order.slice(i + 1).some((later) => reads(later, data))),
    dropValues: order.filter((p, j) => p.intermediate && dropAt[j] === i).map((p) => p.name),
  }));
}

/** Per part of `order`: the index of the last part that reads its value (`needs` or `uses`), or its own when none does. */
function lastReaders(order: readonly PartEntry[]): number[] {
  return order.map((p, j) => {
    let last = j;
    order.forEach((q, i) => {
      if (i > last && [...q.needs, ...(q.uses ?? [])].includes(p.name)) last = i;
    });
    return last;
  });
}
