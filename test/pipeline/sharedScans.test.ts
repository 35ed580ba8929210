/**
 * The pipeline reads each table once and derives `info` and the kernel summary from the GPU-op and
 * API-call columns it already holds (and the NVTX GPU projection reads them too): on every fixture export the result must equal the standalone
 * analyses, which read the tables themselves. Likewise the NVTX readers that share the NVTX columns
 * (host causes, GC/GIL, GIL holders, iteration ranges) against their own filtered queries.
 */
import { describe, expect, it } from 'vitest';
import { describeExport } from '../../src/analysis/exportInfo.js';
import { summarizeKernels } from '../../src/analysis/kernelSummary.js';
import { summarizeNvtx } from '../../src/analysis/nvtxSummary.js';
import { projectNvtxOntoGpu } from '../../src/analysis/nvtxGpuProjection.js';
import { withExport } from '../../src/export/openExport.js';
import { analyzeExport } from '../../src/pipeline/analyzeExport.js';
import { REPORT_PARTS } from '../../src/pipeline/request.js';
import { FIXTURES, fixtureExports } from '../helpers/fixtures.js';
import { LoadedExport } from '../../src/load/loadedExport.js';

/**
 * What both tests of an export assert on, computed once over one handle, in the order the tests
 * made them: the report's analysis (shared scans), the standalone analyses; then, on that same
 * handle, an `nvtx` analysis (the shared columns were let go) and the parts that query NVTX_EVENTS
 * themselves.
 */
function analysesOf(file: string) {
  return withExport(file, (h) => {
    const shared = analyzeExport(h, { parts: REPORT_PARTS });
    const standalone = {
      info: describeExport(new LoadedExport(h)),
      kernels: summarizeKernels(new LoadedExport(h)),
      nvtx: summarizeNvtx(new LoadedExport(h)),
      // The projection read the pipeline's GPU-op and API-call columns; standalone it queries them.
      projection: projectNvtxOntoGpu(new LoadedExport(h)),
    };
    // The columns are let go with the analysis: another one reads NVTX_EVENTS again.
    const nvtxAgainTimings = analyzeExport(h, { parts: ['nvtx'] }).timingsMs;
    // Without nvtx/nvtxGpu the pipeline loads no columns: each part queries NVTX_EVENTS itself.
    const own = analyzeExport(h, { parts: ['iterations', 'metrics', 'gaps', 'host', 'gilHolders', 'info'] });
    return { shared, standalone, nvtxAgainTimings, own };
  });
}

describe.each(fixtureExports(FIXTURES).map((file) => ({ file, name: file.slice(FIXTURES.length + 1) })))('$name', ({ file }) => {
  let memo: ReturnType<typeof analysesOf> | undefined;
  const analyses = () => (memo ??= analysesOf(file));

  it('info, kernels and nvtx from the shared scans equal the standalone analyses', () => {
    const { shared: a, standalone } = analyses();
    expect(a.info).toEqual(standalone.info);
    expect(a.kernels).toEqual(standalone.kernels);
    expect(a.nvtx).toEqual(standalone.nvtx);
    expect(a.projection).toEqual(standalone.projection);
  });

  it('gaps with host causes, GC/GIL and GIL holders from the shared NVTX columns equal their own queries', () => {
    const { shared, nvtxAgainTimings, own } = analyses();
    expect(nvtxAgainTimings).toHaveProperty('nvtxColumns');
    expect(own.timingsMs).not.toHaveProperty('nvtxColumns');
    expect(shared.timingsMs).toHaveProperty('nvtxColumns');
    // The report keeps "no iterations" for its coverage section; `gaps` alone notes it on the gaps.
    const withoutIterationNote = (g: typeof own.gaps) => g && { ...g, notes: g.notes.filter((n) => !n.startsWith('no iterations:')) };
    expect(withoutIterationNote(shared.gaps)).toEqual(withoutIterationNote(own.gaps));
    expect(shared.host).toEqual(own.host);
    expect(shared.gilHolders).toEqual(own.gilHolders);
    expect(shared.info).toEqual(own.info);
    // Iteration ranges found in the shared columns equal those found by their own query.
    expect(shared.iterations).toEqual(own.iterations);
  });
});
