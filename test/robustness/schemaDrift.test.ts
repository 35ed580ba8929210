import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { describeExport } from '../../src/analysis/exportInfo.js';
import { summarizeKernels } from '../../src/analysis/kernelSummary.js';
import { summarizeNvtx } from '../../src/analysis/nvtxSummary.js';
import { IterscopeError } from '../../src/errors.js';
import { withExport } from '../../src/export/openExport.js';
import { gapsOf } from '../helpers/pipeline.js';
import { analyzeIterations } from '../../src/iterations/analyzeIterations.js';
import { parseIterationRangeSpec } from '../../src/iterations/rangeSpec.js';
import { runCli } from '../helpers/cli.js';
import { FIXTURES, fixture } from '../helpers/fixtures.js';
import { LoadedExport } from '../../src/load/loadedExport.js';

/**
 * The workload's own NVTX range per external export (where it has one), for `iterations
 * --iteration-range`; the others have no NVTX at all or nothing iteration-like.
 */
const OWN_RANGES: Record<string, { range: string; like: string }> = {
  'nsys2022.1_windows_extrap.sqlite': { range: '/->phase$/', like: '%->phase' },
  'nsys2022.2_mpi_saxpy_pipit.sqlite': { range: 'saxpy', like: 'saxpy' },
  'nsys2026.2_mfu_2gpu_after_nsysai.sqlite': { range: 'ncclGroupStart', like: 'ncclGroupStart' },
  'nsys2026.2_mfu_2gpu_before_nsysai.sqlite': { range: 'ncclGroupStart', like: 'ncclGroupStart' },
};

/** Expected windows, by plain SQL: per process, the matching ranges of its busiest thread. */
function expectedWindows(file: string, like: string): number {
  return withExport(file, (h) =>
    (
      h.sqlite
        .prepare(
          `SELECT max(n) AS n FROM (
             SELECT (e.globalTid >> 24) & 16777215 AS pid, e.globalTid & 16777215 AS tid, count(*) AS n
             FROM NVTX_EVENTS e LEFT JOIN StringIds s ON s.id = e.textId
             WHERE e.eventType IN (59, 60, 70, 71) AND coalesce(s.value, e.text) LIKE ? GROUP BY 1, 2)
           GROUP BY pid`,
        )
        .all(like) as { n: number }[]
    ).reduce((a, r) => a + r.n, 0),
  );
}

const externals = readdirSync(`${FIXTURES}/external`).filter((f) => f.endsWith('.sqlite')).sort();

describe('every external export (nsys 2021.x .. 2026.2): a result or a one-line error', () => {
  it('covers all 16 files', () => expect(externals).toHaveLength(16));

  for (const name of externals) {
    const file = fixture('external', name);
    it(`${name}: info, kernels, nvtx and gaps give results`, () => {
      withExport(file, (h) => {
        const info = describeExport(new LoadedExport(h));
        const kernels = summarizeKernels(new LoadedExport(h));
        const nvtx = summarizeNvtx(new LoadedExport(h));
        const gaps = gapsOf(h, { minGapNs: 1_000_000 });
        // Nothing is dropped: kernel instances add up to the table's rows, NVTX ranges to theirs.
        expect(kernels.rows.reduce((a, r) => a + r.count, 0)).toBe(info.rowCounts.CUPTI_ACTIVITY_KIND_KERNEL ?? 0);
        const ranges = info.nvtxDomains.reduce((a, d) => a + d.ranges, 0);
        expect(nvtx.rows.reduce((a, r) => a + r.count, 0)).toBe(ranges);
        for (const d of gaps.devices) expect(d.busyNs + d.idleNs).toBe(d.spanNs);
      });
    });

    it(`${name}: iterations gives windows or an error that says what to pass`, () => {
      const own = OWN_RANGES[name];
      const res = withExport(file, (h) => {
        try {
          return analyzeIterations(new LoadedExport(h), own ? { selection: { rangeSpec: parseIterationRangeSpec(own.range), firstIter: 0 } } : {});
        } catch (e) {
          return e as Error;
        }
      });
      if (own) {
        expect(res).not.toBeInstanceOf(Error);
        const a = res as Exclude<typeof res, Error>;
        expect(a.iterations.length).toBe(expectedWindows(file, own.like));
        expect(a.iterations.length).toBeGreaterThan(0);
        for (const r of a.iterations) expect(Object.values(r.categoryNs).reduce((x, y) => x + y, 0)).toBe(r.kernelNs);
        const c = a.coverage;
        // Every GPU op is accounted for: placed, outside, without API row, or of another process.
        expect(c.placedOps + c.outsideOps + c.noRuntimeOps + c.otherProcessOps).toBe(c.gpuOps);
      } else {
        expect(res).toBeInstanceOf(IterscopeError);
        expect((res as Error).message).toMatch(/--iteration-range|no NVTX events/);
        expect((res as Error).message).not.toContain('\n');
      }
    });
  }
});

describe('quirks seen in the external files', () => {
  it('2022.2: CUDA-backtrace runtime rows do not double the kernels placed in iterations', () => {
    const a = withExport(fixture('external', 'nsys2022.2_mpi_saxpy_pipit.sqlite'), (h) => analyzeIterations(new LoadedExport(h), { selection: { rangeSpec: { kind: 'name', name: 'saxpy' }, firstIter: 0 } }));
    const kernels = a.iterations.reduce((x, r) => x + r.kernelCount, 0);
    expect(kernels).toBeLessThanOrEqual(5);
    expect(a.coverage.placedOps + a.coverage.outsideOps + a.coverage.noRuntimeOps).toBe(a.coverage.gpuOps);
  });

  it('2026.2 time-trimmed: GPU ops without a CUDA API row are counted, not dropped', () => {
    const a = withExport(fixture('external', 'nsys2026.2_mfu_2gpu_after_nsysai.sqlite'), (h) => analyzeIterations(new LoadedExport(h), { selection: { rangeSpec: { kind: 'name', name: 'ncclGroupStart' }, firstIter: 0 } }));
    expect(a.coverage.noRuntimeOps).toBeGreaterThan(0);
    expect(a.coverage.notes.some((n) => /no CUDA API row/.test(n))).toBe(true);
  });

  it('a /regex/ capture group numbers the windows', () => {
    const a = withExport(fixture('pytorch-moe-window', 'trace.sqlite'), (h) => analyzeIterations(new LoadedExport(h), { selection: { rangeSpec: parseIterationRangeSpec('/_forward_step (\\d+):/g') } }));
    expect(a.iterations.map((r) => r.iter)).toEqual(Array.from({ length: 50 }, (_, i) => 100 + i));
  });

  it('CLI: iterations on an external export with its own range prints rows, exit 0', () => {
    const r = runCli(['iterations', fixture('external', 'nsys2022.2_mpi_saxpy_pipit.sqlite'), '--iteration-range', 'saxpy', '--first-iter', '0', '--format', 'json']);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout).iterations).toHaveLength(5);
  });
});
