/**
 * Issue 58: `--max-memory SIZE` and what it decides, on real exports: the sizes it reads, the budget
 * in force (option, a pool worker's share, or half the free memory), the rows an analysis reads as
 * counted before reading, the slower order taken above the budget and the note when even that is
 * estimated above it, and the rank pool's workers sized by memory.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { openExport } from '../../src/export/openExport.js';
import { excludedRows } from '../../src/export/excludedRows.js';
import { rowsRead } from '../../src/load/rowsRead.js';
import { estimateAnalysisBytes, formatMemorySize, memoryBudget, parseMemorySize, workerShare } from '../../src/memoryBudget.js';
import { fitToMemory } from '../../src/pipeline/memoryPlan.js';
import { partsFor } from '../../src/pipeline/plan.js';
import { resolveParts, REPORT_PARTS } from '../../src/pipeline/request.js';
import { SHARED_NVTX_ROWS } from '../../src/worker/policy.js';
import { workerCount } from '../../src/ranks/pool.js';
import { flushExcludedRowNotes, setExcludedRowSink } from '../../src/export/excludedRows.js';
import { CLI, fixture } from '../helpers/fixtures.js';

const MB = 1024 ** 2;
const LONG = fixture('pytorch-dense-long', 'trace.sqlite');

describe('--max-memory sizes', () => {
  it('reads K/M/G/T in powers of 1024, with or without B/iB', () => {
    expect(parseMemorySize('400M')).toBe(400 * MB);
    expect(parseMemorySize('2G')).toBe(2 * 1024 * MB);
    expect(parseMemorySize('1.5GB')).toBe(1.5 * 1024 * MB);
    expect(parseMemorySize('512MiB')).toBe(512 * MB);
    expect(parseMemorySize(String(100 * MB))).toBe(100 * MB);
    expect(formatMemorySize(400 * MB)).toBe('400 MB');
    expect(formatMemorySize(2.5 * 1024 * MB)).toBe('2.5 GB');
  });

  it('refuses a size that is not one, or is below 64M, naming the option', () => {
    expect(() => parseMemorySize('3x')).toThrow("--max-memory expects a size of at least 64M, e.g. 400M or 2G (got '3x')");
    expect(() => parseMemorySize('10M')).toThrow(/at least 64M/);
  });

  it('the CLI: a bad size is one line and exit 2, before the export is read', () => {
    const r = spawnSync(process.execPath, [CLI, 'kernels', LONG, '--max-memory', 'lots'], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toBe("iterscope: --max-memory expects a size of at least 64M, e.g. 400M or 2G (got 'lots')\n");
  });

  it('the budget: a worker share over the option over half the free memory (at least 1G)', () => {
    expect(memoryBudget({ ITERSCOPE_MAX_MEMORY: String(400 * MB) })).toEqual({ bytes: 400 * MB, given: true });
    expect(memoryBudget({ ITERSCOPE_MAX_MEMORY: String(400 * MB), ITERSCOPE_MEMORY_SHARE: String(140 * MB) })).toEqual({ bytes: 140 * MB, given: true, share: true });
    expect(memoryBudget({}, () => 8192 * MB)).toEqual({ bytes: 4096 * MB, given: false });
    expect(memoryBudget({}, () => 300 * MB)).toEqual({ bytes: 1024 * MB, given: false });
    expect(workerShare({ bytes: 1024 * MB, given: true }, 2)).toBe(452 * MB);
  });
});

describe('the analysis against the budget (pytorch-dense-long)', () => {
  const parts = partsFor(resolveParts(REPORT_PARTS));

  it("counts the rows report reads before reading them (max(rowid) of each table, its row count here)", () => {
    const h = openExport(LONG);
    try {
      const rows = rowsRead(h, { gpuOps: true, apiCalls: true, nvtx: true });
      // sqlite3: count(*) of KERNEL 651378 + MEMCPY 50954 + MEMSET 2146; RUNTIME 356009; NVTX_EVENTS 847837.
      expect(rows).toEqual({ gpuOps: 704478, apiCalls: 356009, nvtx: 847837 });
      // The NVTX columns held beside the GPU ops (below SHARED_NVTX_ROWS): 120 MB + 50, 26 and 45 bytes a row
      // (measured: 197-199 MB); read first and let go, 120 MB + the larger phase (the GPU ops' and calls' here; measured 158-159).
      expect(Math.round(estimateAnalysisBytes(rows, true) / MB)).toBe(199);
      expect(Math.round(estimateAnalysisBytes(rows, false) / MB)).toBe(162);
    } finally {
      h.close();
    }
  });

  it('within the budget the request is as asked; above it the NVTX is read first and let go (no note while that fits)', () => {
    const h = openExport(LONG);
    try {
      const req = { parts: [...REPORT_PARTS] };
      expect(fitToMemory(h, req, parts, SHARED_NVTX_ROWS, { bytes: 1024 * MB, given: false })).toBe(req);
      expect(fitToMemory(h, req, parts, SHARED_NVTX_ROWS, { bytes: 199 * MB, given: true })).toBe(req);
      expect(fitToMemory(h, req, parts, SHARED_NVTX_ROWS, { bytes: 190 * MB, given: true })).toEqual({ ...req, nvtxRead: 'release' });
      expect(excludedRows(h)).toEqual([]);
      const said: string[] = [];
      setExcludedRowSink((n) => said.push(n));
      flushExcludedRowNotes(h);
      expect(said).toEqual([]);
      // A caller's own read mode is kept (and, still estimated above the budget, noted).
      expect(fitToMemory(h, { ...req, nvtxRead: 'inline' }, parts, SHARED_NVTX_ROWS, { bytes: 190 * MB, given: true }).nvtxRead).toBe('inline');
      flushExcludedRowNotes(h);
      expect(said).toEqual([expect.stringMatching(/: an estimated 199 MB for .* is above --max-memory 190 MB;/)]);
    } finally {
      setExcludedRowSink(null);
      h.close();
    }
  });

  it('above the budget even so: one note naming the file, the estimate, the rows and the limit', () => {
    const h = openExport(LONG);
    const said: string[] = [];
    try {
      fitToMemory(h, { parts: [...REPORT_PARTS] }, parts, SHARED_NVTX_ROWS, { bytes: 100 * MB, given: true });
      setExcludedRowSink((n) => said.push(n));
      flushExcludedRowNotes(h);
    } finally {
      setExcludedRowSink(null);
      h.close();
    }
    expect(said).toEqual([
      `${LONG}: an estimated 162 MB for 704478 GPU ops, 356009 API calls, 847837 NVTX rows is above --max-memory 100 MB; the GPU ops and API calls have no bounded path yet (read whole), so this run may use more`,
    ]);
  });

  it('report under --max-memory 190M prints the same bytes as without (the slower order)', () => {
    const args = ['report', LONG, '--log', fixture('pytorch-dense-long', 'iteration_log.txt'), '--format', 'md'];
    const plain = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', maxBuffer: 1 << 26 });
    const bounded = spawnSync(process.execPath, [CLI, ...args, '--max-memory', '190M'], { encoding: 'utf8', maxBuffer: 1 << 26 });
    expect(plain.status).toBe(0);
    expect(bounded.status).toBe(0);
    expect(bounded.stdout).toBe(plain.stdout);
    expect(bounded.stderr).toBe(plain.stderr);
  }, 120_000);
});

describe('rank workers sized by memory', () => {
  it('no more workers than the budget holds at the largest export estimated need, and at least one', () => {
    const budget = { bytes: 2048 * MB, given: true };
    expect(workerCount(8, 8, 800 * MB, budget)).toBe(2);
    expect(workerCount(8, 8, 4096 * MB, budget)).toBe(1);
    expect(workerCount(8, 2, 10 * MB, budget)).toBe(2);
  });
});
