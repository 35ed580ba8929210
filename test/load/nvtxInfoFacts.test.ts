/**
 * `info`'s one scan of NVTX_EVENTS (`nvtxInfoFacts`: every row, the ranges per domain and process,
 * the domains' names, the span of the usable rows) against the four queries it replaces: count(*),
 * the GROUP BY of the ranges, the DomainCreate rows `nvtxDomains` reads, and `activitySpan`'s SQL
 * over the table. On our exports, other projects' exports of
 * other nsys versions (Windows 2022.1, MPI 2022.2, nvFuser, the 2026.2 two-GPU runs), and a damaged
 * copy whose range rows SQLite groups in ways a JS map would not (NULL pid, text domain). The
 * ranges are checked as `info` lists them (`describeExport`), from the scan's counts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeExport } from '../../src/analysis/exportInfo.js';
import { withExport } from '../../src/export/openExport.js';
import { activitySpan, nvtxInfoFacts, nvtxRangeCountsByDomain, rowCount } from '../../src/load/infoReads.js';
import { LoadedExport } from '../../src/load/loadedExport.js';
import { nvtxDomains } from '../../src/load/nvtxReads.js';
import { fixture } from '../helpers/fixtures.js';
import { copyExport, editExport } from '../helpers/hostileExport.js';

const EXPORTS = [
  ['pytorch-dense', 'trace.sqlite'],
  ['sglang', 'trace.sqlite'],
  ['vllm-dense', 'trace.sqlite'],
  ['external', 'nsys2022.1_windows_extrap.sqlite'],
  ['external', 'nsys2022.2_mpi_saxpy_pipit.sqlite'],
  ['external', 'nsys2025.1.1_nvfuser_python.sqlite'],
  ['external', 'nsys2026.2_h100_2gpu_1s_nsysai.sqlite'],
];

/** `info`'s NVTX domains without their names: what the GROUP BY query gives. */
const rangesOf = (info: ReturnType<typeof describeExport>) => info.nvtxDomains.map(({ domainId, pid, ranges }) => ({ domainId, pid, ranges }));

const tmp = mkdtempSync(join(tmpdir(), 'iterscope-nvtx-info-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('nvtxInfoFacts', () => {
  it.each(EXPORTS)('%s/%s: the one scan equals count(*), the GROUP BY and the span query', (dir, file) => {
    withExport(fixture(dir, file), (h) => {
      const loaded = new LoadedExport(h);
      const facts = nvtxInfoFacts(loaded)!;
      expect(facts.rows).toBeGreaterThan(0);
      expect(facts.rows).toBe(rowCount(loaded, 'NVTX_EVENTS'));
      expect(facts.rangesByDomain).not.toBeNull();
      expect(rangesOf(describeExport(loaded))).toEqual(nvtxRangeCountsByDomain(loaded));
      expect({ start: facts.start, end: facts.end }).toEqual(activitySpan(loaded, ['NVTX_EVENTS']));
      // The names as the DomainCreate query reads them (a fresh view of the export: no scan kept).
      expect([...facts.domainNames].sort()).toEqual([...nvtxDomains(new LoadedExport(h))].sort());
      // ... and what the view that ran the scan names them by.
      expect(nvtxDomains(loaded)).toBe(facts.domainNames);
    });
  });

  it('the domains named: TensorRT-LLM and GIL Trace in pytorch-dense, MPI in the 2022.2 MPI export', () => {
    const names = (dir: string, file: string) => withExport(fixture(dir, file), (h) => [...nvtxInfoFacts(new LoadedExport(h))!.domainNames.values()].sort());
    expect(names('pytorch-dense', 'trace.sqlite')).toEqual(['GIL Trace', 'TensorRT-LLM']);
    expect(names('external', 'nsys2022.2_mpi_saxpy_pipit.sqlite')).toEqual(['MPI']);
  });

  it('an export without NVTX_EVENTS has none', () => {
    withExport(fixture('external', 'nsys2024.5_cloverleaf_pipit.sqlite'), (h) => {
      expect(nvtxInfoFacts(new LoadedExport(h))).toBeNull();
    });
  });

  it('a damaged copy: range rows with a NULL pid or a text domain leave the grouping to SQL, and info is as the queries say', () => {
    const path = editExport(copyExport(fixture('pytorch-dense', 'trace.sqlite'), join(tmp, 'damaged.sqlite')), (db) => {
      // Ranges of the first rows: one without its thread, one named by a text domain id; times of another as text.
      const ranges = db.prepare('SELECT rowid FROM NVTX_EVENTS WHERE eventType IN (59, 60) ORDER BY rowid LIMIT 3').pluck().all() as number[];
      db.prepare('UPDATE NVTX_EVENTS SET globalTid = NULL WHERE rowid = ?').run(ranges[0]);
      db.prepare(`UPDATE NVTX_EVENTS SET domainId = 'seven' WHERE rowid = ?`).run(ranges[1]);
      db.prepare(`UPDATE NVTX_EVENTS SET start = 'early', "end" = 'late' WHERE rowid = ?`).run(ranges[2]);
    });
    withExport(path, (h) => {
      const loaded = new LoadedExport(h);
      const facts = nvtxInfoFacts(loaded)!;
      expect(facts.rangesByDomain).toBeNull();
      expect(facts.rows).toBe(rowCount(loaded, 'NVTX_EVENTS'));
      expect({ start: facts.start, end: facts.end }).toEqual(activitySpan(loaded, ['NVTX_EVENTS']));
      const byQuery = nvtxRangeCountsByDomain(loaded);
      expect(byQuery.some((r) => r.pid === null)).toBe(true);
      expect(rangesOf(describeExport(loaded))).toEqual(byQuery);
    });
  });
});
