/**
 * Reads that query a table themselves (when no columns were loaded) leave out the rows with
 * unusable times as the columns do, and count them in one note: the GIL ranges by query (no NVTX
 * columns) against the same ranges from the NVTX columns, on pytorch-dense (GIL-traced); the
 * `--cuda-memory-usage` events on fieldguide-vllm. Before, both summed such rows as read.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { excludedRowNotes, UNUSABLE_TIMES } from '../../src/export/excludedRows.js';
import { LoadedExport } from '../../src/load/loadedExport.js';
import { gilRanges, gilRangesOf } from '../../src/load/hostRangeReads.js';
import { analyzeMemoryTraffic } from '../../src/analysis/memoryTraffic.js';
import { metricsOverCapture } from '../../src/metrics/distribution.js';
import { copyExport, editExport } from '../helpers/hostileExport.js';
import { fixture } from '../helpers/fixtures.js';

const tmp = mkdtempSync(join(tmpdir(), 'iterscope-queried-rows-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('GIL ranges by query (pytorch-dense)', () => {
  const DENSE = fixture('pytorch-dense', 'trace.sqlite');
  const names = { wait: 'Waiting for GIL', hold: 'Holding GIL' };
  const WAITS = "textId = (SELECT id FROM StringIds WHERE value = 'Waiting for GIL')";
  /** 60 of the 409 waits (both waiting threads') end before they start. */
  const damaged = editExport(copyExport(DENSE, join(tmp, 'gil.sqlite')), (db) => db.exec(`UPDATE NVTX_EVENTS SET "end" = start - 1000 WHERE ${WAITS} AND rowid % 7 = 0`));
  const executorsOf = (path: string) =>
    withExport(path, (h) => h.sqlite.prepare(`SELECT DISTINCT (globalTid >> 24) & 16777215 AS pid, globalTid & 16777215 AS tid FROM NVTX_EVENTS WHERE ${WAITS}`).all() as { pid: number; tid: number }[]);

  it('are the ranges the NVTX columns give, the unusable ones left out and noted once', () => {
    const executors = executorsOf(damaged);
    expect(executors).toHaveLength(2);
    const bad = withExport(damaged, (h) => (h.sqlite.prepare(`SELECT count(*) AS n FROM NVTX_EVENTS WHERE ${WAITS} AND "end" < start`).get() as { n: number }).n);
    expect(bad).toBe(60);
    const fromColumns = withExport(damaged, (h) => gilRangesOf(new LoadedExport(h).nvtx(), executors, names));
    const byQuery = withExport(damaged, (h) => ({ rows: gilRanges(new LoadedExport(h), executors, names), notes: excludedRowNotes(h) }));
    expect(byQuery.rows).toEqual(fromColumns);
    expect(byQuery.rows.filter((r) => r.wait === 1)).toHaveLength(409 - 60);
    expect(byQuery.notes).toEqual([`${damaged}: 60 NVTX_EVENTS rows excluded: ${UNUSABLE_TIMES} (a damaged or edited export; nsys writes none)`]);
  });
});

describe('--cuda-memory-usage events (fieldguide-vllm)', () => {
  const VLLM = fixture('fieldguide-vllm', 'trace.sqlite');
  const EVENTS = 'CUDA_GPU_MEMORY_USAGE_EVENTS';
  const ROWS = 'rowid % 10 = 0';
  const damaged = editExport(copyExport(VLLM, join(tmp, 'mem.sqlite')), (db) => db.exec(`UPDATE ${EVENTS} SET start = start + 0.5 WHERE ${ROWS}`));
  const without = editExport(copyExport(VLLM, join(tmp, 'mem-without.sqlite')), (db) => db.exec(`DELETE FROM ${EVENTS} WHERE ${ROWS}`));
  const traffic = (path: string) => withExport(path, (h) => ({ memory: analyzeMemoryTraffic(new LoadedExport(h), [], { startNs: 0, endNs: 2 ** 52 }), notes: excludedRowNotes(h) }));

  it('an event at a fraction of a ns is left out and noted, as if it were not there', () => {
    const got = traffic(damaged);
    const expected = traffic(without).memory;
    expect(expected.allocationEvents).toBe(2978 - 297);
    expect(got.memory).toEqual(expected);
    expect(got.notes).toEqual([`${damaged}: 297 ${EVENTS} rows excluded: NULL, non-integer or beyond-2^53 start (a damaged or edited export; nsys writes none)`]);
    // Every start printed is a whole ns.
    for (const a of got.memory.largestDuringGpuWork) expect(Number.isInteger(a.startNs)).toBe(true);
  });
});

describe('GPU metric samples (pytorch-gpu-metrics)', () => {
  const METRICS = fixture('pytorch-gpu-metrics', 'trace.sqlite');
  /** 34,190 of the 341,902 samples. */
  const ROWS = 'rowid % 10 = 3';
  const damaged = editExport(copyExport(METRICS, join(tmp, 'metrics.sqlite')), (db) => db.exec(`UPDATE GPU_METRICS SET timestamp = timestamp + 0.5 WHERE ${ROWS}`));
  const without = editExport(copyExport(METRICS, join(tmp, 'metrics-without.sqlite')), (db) => db.exec(`DELETE FROM GPU_METRICS WHERE ${ROWS}`));
  /** The summary without what differs between two files whatever they hold (their name, the scan's time). */
  const summary = (path: string) =>
    withExport(path, (h) => {
      const { file: _file, scan, ...metrics } = metricsOverCapture(new LoadedExport(h));
      return { metrics: { ...metrics, scan: { ...scan, ms: 0 } }, notes: excludedRowNotes(h) };
    });

  it('a sample at a fraction of a ns is left out and noted, as if it were not there', () => {
    const got = summary(damaged);
    const expected = summary(without);
    expect(expected.notes).toEqual([]);
    expect(got.metrics).toEqual(expected.metrics);
    expect(got.notes).toEqual([`${damaged}: 34190 GPU_METRICS rows excluded: NULL, non-integer or beyond-2^53 timestamp (a damaged or edited export; nsys writes none)`]);
    // The samples matter: the whole fixture's summary differs.
    expect(summary(METRICS).metrics).not.toEqual(expected.metrics);
  });
});
