/**
 * The NVTX GPU projection keeps each range row's thread index in two bytes while there are at most
 * 65,536 threads (`threadsOfRows`), and in four from the 65,537th on: the same index either way.
 * On pytorch-dense's NVTX columns, as nsys wrote them and with 70,000 threads interned first (so
 * the export's threads get indexes past 16 bits).
 */
import { describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { loadNvtxColumns, isNvtxRange } from '../../src/load/nvtxEventColumns.js';
import { ThreadIndex } from '../../src/load/launchedCalls.js';
import { threadsOfRows } from '../../src/analysis/nvtxGpuProjection.js';
import { fixture } from '../helpers/fixtures.js';

const c = withExport(fixture('pytorch-dense', 'trace.sqlite'), (h) => loadNvtxColumns(h));
const upper = (c.upperBits ?? 0) * 16777216;
/** The range rows on a known thread, as the projection picks them (their threads are what is indexed). */
const items = Uint32Array.from({ length: c.count }, (_, i) => i).filter((i) => isNvtxRange(c.eventType[i]) && c.tid[i] >= 0);

/** Each item's thread by a plain lookup in `threads` (interned in the same order). */
function expectedThreads(threads: ThreadIndex): number[] {
  return Array.from(items, (i) => threads.find(upper + c.pid[i], c.tid[i]));
}

describe('pytorch-dense NVTX columns: range threads by row', () => {
  it('a few threads: a Uint16Array holding each range row its thread index', () => {
    const threads = new ThreadIndex();
    const rThread = threadsOfRows(c, items, threads, upper);
    expect(rThread).toBeInstanceOf(Uint16Array);
    expect(rThread.length).toBe(c.count);
    expect(items.length).toBeGreaterThan(1000);
    expect(threads.size).toBeGreaterThan(1);
    expect(Array.from(items, (i) => rThread[i])).toEqual(expectedThreads(threads));
  });

  it('past 65,536 threads: a Uint32Array, every index the same as interned', () => {
    const threads = new ThreadIndex();
    // Threads of a process the export does not have, interned first: the export's come after.
    for (let t = 0; t < 70_000; t++) threads.intern(upper + 16777215, t);
    const rThread = threadsOfRows(c, items, threads, upper);
    expect(rThread).toBeInstanceOf(Uint32Array);
    const want = expectedThreads(threads);
    expect(want.reduce((a, b) => Math.min(a, b), Infinity)).toBeGreaterThanOrEqual(70_000);
    expect(Array.from(items, (i) => rThread[i])).toEqual(want);
  });
});
