/**
 * An analysis that loads no NVTX columns (`iterations`, `gaps`) finds the iteration ranges by query
 * (`forEachNvtxRangeMatching`: the matching texts, then one scan that filters in SQL); `report`
 * finds them in the NVTX columns. The two must find the same ranges on every fixture export, with
 * the default sources and with the user's `--iteration-range`: the query's filter (which tests
 * the text before the event type, and the id list's bounds before the list) is only an order of
 * the same terms.
 */
import { describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { parseIterationRangeSpec } from '../../src/iterations/rangeSpec.js';
import { findIterationRangesData } from '../../src/iterations/sources/index.js';
import { LoadedExport } from '../../src/load/loadedExport.js';
import { FIXTURES, fixtureExports } from '../helpers/fixtures.js';

const SPECS = [undefined, '/step|forward|decode|iteration/', '/./'];

describe.each(fixtureExports(FIXTURES).map((file) => ({ file, name: file.slice(FIXTURES.length + 1) })))('$name', ({ file }) => {
  it.each(SPECS)('--iteration-range %s: the ranges by query are those in the NVTX columns', (arg) => {
    const spec = arg === undefined ? undefined : parseIterationRangeSpec(arg);
    const [byQuery, inColumns] = withExport(file, (h) => {
      const queried = new LoadedExport(h);
      const loaded = new LoadedExport(h);
      loaded.nvtx();
      return [findIterationRangesData(queried, spec), findIterationRangesData(loaded, spec)];
    });
    expect(byQuery).toEqual(inColumns);
  });
});
