import type { Command } from 'commander';
import { withExport } from '../../export/openExport.js';
import { analyzeExport } from '../../pipeline/analyzeExport.js';
import { nvtxGpuProjectionTable, nvtxSummaryTable } from '../../../reports/nvtxReport.js';
import { emit, note, type OutputOptions } from '../output.js';
import { withOutputOptions } from './options.js';
import { noGpuWorkLine, nvtxAbsence, type CaptureHealth } from '../../analysis/captureHealth.js';
import { expandExportArgs, tablesAcrossExports } from './ranks.js';

/** Why the GPU projection is empty: no GPU work, else no NVTX range. */
const emptyNvtxLine = (h: CaptureHealth) => noGpuWorkLine(h) ?? nvtxAbsence(h);

interface NvtxOptions extends OutputOptions {
  gpu?: boolean;
}

export function registerNvtx(program: Command): void {
  withOutputOptions(
    program
      .command('nvtx <exports...>')
      .description('NVTX range summary, as `nsys stats -r nvtx_sum`; with --gpu, GPU time projected onto ranges (nvtx_gpu_proj_sum); several exports: one table with a Rank column')
      .option('--gpu', 'project GPU work onto the NVTX ranges its API calls were made in'),
  ).action(async (inputs: string[], opts: NvtxOptions) => {
    const files = expandExportArgs(inputs);
    if (files.length > 1) {
      if (opts.gpu) return tablesAcrossExports(files, 'nvtxGpu', {}, opts, (p) => [nvtxGpuProjectionTable(p)]);
      return tablesAcrossExports(files, 'nvtx', {}, opts, (s) => [nvtxSummaryTable(s)]);
    }
    const file = files[0];
    if (opts.gpu) {
      const a = withExport(file, (h) => analyzeExport(h, { parts: ['nvtxGpu', 'health'] }));
      const projection = a.projection!;
      const table = nvtxGpuProjectionTable(projection);
      for (const n of projection.rows.length ? (table.notes ?? []) : [emptyNvtxLine(a.health!)]) note(n);
      emit(opts, [table], projection);
      return;
    }
    const a = withExport(file, (h) => analyzeExport(h, { parts: ['nvtx', 'health'] }));
    const summary = a.nvtx!;
    const table = nvtxSummaryTable(summary);
    // No range at all: one line saying whether NVTX was not traced or traced with nothing recorded.
    for (const n of summary.rows.length ? (table.notes ?? []) : [nvtxAbsence(a.health!)]) note(n);
    emit(opts, [table], summary);
  });
}
