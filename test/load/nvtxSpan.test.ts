/**
 * The NVTX span (min start, max end or start when open) the loader keeps when it lets the NVTX
 * columns go: `info` reads it after a large NVTX table was read and released (the 10x bench file),
 * instead of scanning NVTX_EVENTS again by SQL. It must equal that SQL scan.
 */
import { describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { activitySpan } from '../../src/load/infoReads.js';
import { LoadedExport } from '../../src/load/loadedExport.js';
import { fixture } from '../helpers/fixtures.js';

describe('LoadedExport.nvtxSpan', () => {
  it.each([['pytorch-dense'], ['sglang']])('%s: the span from the columns equals the SQL scan, and outlives the columns', (dir) => {
    withExport(fixture(dir, 'trace.sqlite'), (h) => {
      const loaded = new LoadedExport(h);
      expect(loaded.nvtxSpan()).toBeUndefined();
      const cols = loaded.nvtx();
      expect(cols.count).toBeGreaterThan(0);
      const bySql = activitySpan(loaded, ['NVTX_EVENTS']);
      expect(bySql.start).not.toBeNull();
      expect(loaded.nvtxSpan()).toEqual(bySql);
      loaded.release('nvtx');
      expect(loaded.sharedNvtx()).toBeUndefined();
      expect(loaded.nvtxSpan()).toEqual(bySql);
    });
  });

  it('released before anyone asked: the span is taken as the columns go', () => {
    withExport(fixture('pytorch-dense', 'trace.sqlite'), (h) => {
      const loaded = new LoadedExport(h);
      loaded.nvtx();
      loaded.release('nvtx');
      expect(loaded.nvtxSpan()).toEqual(activitySpan(loaded, ['NVTX_EVENTS']));
    });
  });
});
