/**
 * The NVTX ranges per (domain, process) an analysis lists (`ExportInfo.nvtxDomains`: what `host`,
 * `gilHolders`, the findings and the engine comparison read) are the same whether the NVTX summary
 * counted them in its scan (`report`, and any analysis with the `nvtx` part) or `info` counted them:
 * on a copy of pytorch-dense whose range rows the summary's columns cannot key as SQL groups them
 * (a NULL globalTid, a negative, a huge and a text domain id) or left out (text times), the summary
 * leaves the counting to the query; on the untouched export it counts them itself.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { summarizeNvtxWithDomains } from '../../src/analysis/nvtxSummary.js';
import { withExport } from '../../src/export/openExport.js';
import { nvtxRangeCountsByDomain } from '../../src/load/infoReads.js';
import { LoadedExport } from '../../src/load/loadedExport.js';
import { analyzeExport } from '../../src/pipeline/analyzeExport.js';
import type { AnalysisPart, NvtxReadMode } from '../../src/pipeline/request.js';
import { copyExport, editExport } from '../helpers/hostileExport.js';
import { fixture } from '../helpers/fixtures.js';

const DENSE = fixture('pytorch-dense', 'trace.sqlite');
const tmp = mkdtempSync(join(tmpdir(), 'iterscope-nvtx-domains-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Range rows 0..4 of the copy: no thread, domain -3, domain 2^30, domain 'seven', text times. */
const EDITS = [
  `globalTid = NULL`,
  `domainId = -3`,
  `domainId = ${2 ** 30}`,
  `domainId = 'seven'`,
  `start = 'early', "end" = 'late'`,
];

function damagedCopy(): string {
  return editExport(copyExport(DENSE, join(tmp, 'damaged.sqlite')), (db) => {
    const rows = db.prepare('SELECT rowid FROM NVTX_EVENTS WHERE eventType IN (59, 60) ORDER BY rowid LIMIT ?').pluck().all(EDITS.length) as number[];
    EDITS.forEach((set, i) => db.prepare(`UPDATE NVTX_EVENTS SET ${set} WHERE rowid = ?`).run(rows[i]));
  });
}

/** The domains an analysis with `parts` lists. */
function domainsOf(path: string, parts: AnalysisPart[], nvtxRead: NvtxReadMode) {
  return withExport(path, (h) => analyzeExport(h, { parts, nvtxRead }).info!.nvtxDomains);
}

describe('NVTX ranges per domain, counted by the summary or by info', () => {
  it('a damaged copy: the summary leaves the count to the query, and every analysis lists what it says', () => {
    const path = damagedCopy();
    withExport(path, (h) => {
      const loaded = new LoadedExport(h);
      expect(loaded.nvtx().unkeyedRanges).toBe(4);
      expect(summarizeNvtxWithDomains(loaded).rangesByDomain).toBeNull();
    });
    const byQuery = withExport(path, (h) => nvtxRangeCountsByDomain(new LoadedExport(h)));
    // SQL groups these apart: the range without a thread, and each odd domain's one range (the
    // range with text times stays in its domain's count).
    expect(byQuery.filter((r) => r.pid === null || (r.domainId as unknown) === 'seven' || r.domainId === -3 || r.domainId === 2 ** 30).map((r) => r.ranges)).toEqual([1, 1, 1, 1]);
    const infoAlone = domainsOf(path, ['info'], 'inline');
    expect(infoAlone.map(({ domainId, pid, ranges }) => ({ domainId, pid, ranges }))).toEqual(byQuery);
    expect(infoAlone.find((d) => d.domainId === 1 && d.pid === 477)?.name).toBe('GIL Trace');
    for (const nvtxRead of ['inline', 'background'] as const) {
      expect(domainsOf(path, ['info', 'nvtx'], nvtxRead), nvtxRead).toEqual(infoAlone);
      expect(domainsOf(path, ['info', 'nvtx', 'iterations', 'gaps'], nvtxRead), nvtxRead).toEqual(infoAlone);
    }
  });

  it('pytorch-dense as exported: the summary counts every range itself, as info does', () => {
    withExport(DENSE, (h) => {
      const loaded = new LoadedExport(h);
      expect(loaded.nvtx().unkeyedRanges).toBe(0);
      expect(summarizeNvtxWithDomains(loaded).rangesByDomain).not.toBeNull();
    });
    const infoAlone = domainsOf(DENSE, ['info'], 'inline');
    expect(infoAlone.map((d) => d.ranges)).toEqual([104, 122536, 600]);
    for (const nvtxRead of ['inline', 'background'] as const) expect(domainsOf(DENSE, ['info', 'nvtx'], nvtxRead), nvtxRead).toEqual(infoAlone);
  });
});
