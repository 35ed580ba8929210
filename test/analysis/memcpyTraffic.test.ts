/**
 * The memory traffic reads the memcpys once: in the GPU-op loader's scan of the memcpy table
 * (`LoadOptions.memcpyTraffic`), or, for a caller that loads no GPU ops, by a query of its own. On
 * both paths a memcpy with unusable times (rowChecks.ts) is left out and counted in one note, as
 * the GPU ops leave it out: before, the traffic summed it (a damaged export's copies that "end"
 * 5 ms before they start gave a pageable-copy finding recovering -397 ms, -23% of the wall).
 * On pytorch-dense, whose every host-to-device copy is from pageable memory.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { excludedRowNotes, UNUSABLE_TIMES } from '../../src/export/excludedRows.js';
import { LoadedExport } from '../../src/load/loadedExport.js';
import { loadGpuOpColumns } from '../../src/load/gpuOpColumns.js';
import { analyzeExport } from '../../src/pipeline/analyzeExport.js';
import { analyzeMemoryTraffic, type MemoryTraffic } from '../../src/analysis/memoryTraffic.js';
import type { ExportAnalysis } from '../../src/pipeline/exportAnalysis.js';
import { copyExport, editExport } from '../helpers/hostileExport.js';
import { fixture } from '../helpers/fixtures.js';

const DENSE = fixture('pytorch-dense', 'trace.sqlite');
const M = 'CUPTI_ACTIVITY_KIND_MEMCPY';
/** 80 of pytorch-dense's 4,034 memcpys. */
const ROWS = 'rowid % 50 = 0';

const tmp = mkdtempSync(join(tmpdir(), 'iterscope-memcpy-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const damaged = editExport(copyExport(DENSE, join(tmp, 'damaged.sqlite')), (db) => db.exec(`UPDATE ${M} SET "end" = start - 5000000 WHERE ${ROWS}`));
const without = editExport(copyExport(DENSE, join(tmp, 'without.sqlite')), (db) => db.exec(`DELETE FROM ${M} WHERE ${ROWS}`));

/** The pipeline's memory traffic (read in the GPU ops' scan), and the statements that scanned the memcpy table. */
function byPipeline(path: string): { analysis: ExportAnalysis; memcpyScans: string[]; notes: string[] } {
  return withExport(path, (h) => {
    const sql: string[] = [];
    const prepare = h.sqlite.prepare.bind(h.sqlite);
    h.sqlite.prepare = ((source: string) => (sql.push(source), prepare(source))) as typeof h.sqlite.prepare;
    try {
      const analysis = analyzeExport(h, { parts: ['memory', 'iterations'], nvtxRead: 'inline' });
      return { analysis, memcpyScans: sql.filter((s) => s.includes(`from "${M}"`) && s.startsWith('SELECT iterscope_each(')), notes: excludedRowNotes(h) };
    } finally {
      h.sqlite.prepare = prepare;
    }
  });
}

/** The traffic by the memory part's own query (no GPU ops loaded), over the pipeline's windows and GPU span. */
function byQuery(path: string, like: ExportAnalysis): { memory: MemoryTraffic; notes: string[] } {
  const dev = like.gaps!.devices;
  const span = { startNs: Math.min(...dev.map((d) => d.spanStartNs)), endNs: Math.max(...dev.map((d) => d.spanEndNs)) };
  return withExport(path, (h) => {
    const memory = analyzeMemoryTraffic(new LoadedExport(h), like.iterations!.iterations, span);
    return { memory, notes: excludedRowNotes(h) };
  });
}

const note = `${damaged}: 80 ${M} rows excluded: ${UNUSABLE_TIMES} (a damaged or edited export; nsys writes none)`;

describe('memcpy traffic on pytorch-dense', () => {
  it('is read in the GPU ops scan: one scan of the memcpy table, the same traffic as the query', () => {
    const { analysis, memcpyScans } = byPipeline(DENSE);
    expect(memcpyScans).toHaveLength(1);
    expect(memcpyScans[0]).toContain('"copyKind"');
    const memory = analysis.memory!;
    const h2d = memory.byDirection.find((d) => d.direction === 'Host-to-Device')!;
    expect(h2d.copies).toBeGreaterThan(3000);
    expect(h2d.pageableCopies).toBe(h2d.copies);
    expect(byQuery(DENSE, analysis).memory).toEqual(memory);
  });

  it('leaves out memcpys with unusable times on both paths, with one note, as if they were not there', () => {
    const expected = byPipeline(without).analysis.memory!;
    const damagedRun = byPipeline(damaged);
    expect(damagedRun.analysis.memory).toEqual(expected);
    expect(damagedRun.notes).toEqual([note]);
    const query = byQuery(damaged, damagedRun.analysis);
    expect(query.memory).toEqual(expected);
    expect(query.notes).toEqual([note]);
    // No copy time below zero reaches the findings (the damaged rows' sums were negative).
    for (const d of expected.byDirection) for (const ns of [d.ns, d.pageableNs, d.inIterationsNs, d.pageableInIterationsNs]) expect(ns).toBeGreaterThanOrEqual(0);
    expect(expected.byDirection.find((d) => d.direction === 'Host-to-Device')!.pageableInIterationsNs).toBeGreaterThan(0);
  });

  it('a value the columns cannot hold (text in srcKind): the columns give no traffic, the query sums it as read', () => {
    const text = editExport(copyExport(DENSE, join(tmp, 'text-kind.sqlite')), (db) => db.exec(`UPDATE ${M} SET srcKind = 'pinned' WHERE rowid = 1`));
    expect(withExport(text, (h) => loadGpuOpColumns(h, { memcpyTraffic: true }).memcpyTraffic)).toBeUndefined();
    expect(withExport(DENSE, (h) => loadGpuOpColumns(h, { memcpyTraffic: true }).memcpyTraffic?.count)).toBe(4034);
    const run = byPipeline(text);
    expect(run.memcpyScans).toHaveLength(2);
    expect(run.analysis.memory).toEqual(byQuery(text, run.analysis).memory);
  });

  it('held narrow while the values fit (process ids in two bytes, kinds in one, sizes in four), wider past them, the same traffic as the query', () => {
    const narrow = withExport(DENSE, (h) => loadGpuOpColumns(h, { memcpyTraffic: true }).memcpyTraffic!);
    expect([narrow.pid, narrow.copyKind, narrow.srcKind, narrow.dstKind, narrow.bytes].map((a) => a.constructor.name)).toEqual(['Int16Array', 'Int8Array', 'Int8Array', 'Int8Array', 'Uint32Array']);
    // A NULL host kind (an nsys version that records none) stays in its byte; a copy of 8 GiB and a direction id of 300 widen.
    const wide = editExport(copyExport(DENSE, join(tmp, 'wide-traffic.sqlite')), (db) => {
      db.exec(`UPDATE ${M} SET srcKind = NULL WHERE rowid = 1`);
      db.exec(`UPDATE ${M} SET bytes = 8589934592 WHERE rowid = 2`);
      db.exec(`UPDATE ${M} SET copyKind = 300 WHERE rowid = 3`);
    });
    const cols = withExport(wide, (h) => loadGpuOpColumns(h, { memcpyTraffic: true }).memcpyTraffic!);
    expect([cols.copyKind, cols.srcKind, cols.bytes].map((a) => a.constructor.name)).toEqual(['Int16Array', 'Int8Array', 'Float64Array']);
    expect([cols.srcKind[0], cols.bytes[1], cols.copyKind[2]]).toEqual([-1, 8589934592, 300]);
    const run = byPipeline(wide);
    expect(run.memcpyScans).toHaveLength(1);
    expect(run.analysis.memory).toEqual(byQuery(wide, run.analysis).memory);
  });
});
