import type { Command } from 'commander';
import { withExport } from '../../export/openExport.js';
import { summarizeNvtx } from '../../analysis/nvtxSummary.js';
import { nvtxGpuProjectionTable, nvtxSummaryTable } from '../../../reports/nvtxReport.js';
import { projectNvtxOntoGpu } from '../../analysis/nvtxGpuProjection.js';
import { emit, note, type OutputOptions } from '../output.js';
import { withOutputOptions } from './common.js';

interface NvtxOptions extends OutputOptions {
  gpu?: boolean;
}

export function registerNvtx(program: Command): void {
  withOutputOptions(
    program
      .command('nvtx <export>')
      .description('NVTX range summary, as `nsys stats -r nvtx_sum`; with --gpu, GPU time projected onto ranges (nvtx_gpu_proj_sum)')
      .option('--gpu', 'project GPU work onto the NVTX ranges its API calls were made in'),
  ).action((file: string, opts: NvtxOptions) => {
    if (opts.gpu) {
      const projection = withExport(file, (h) => projectNvtxOntoGpu(h));
      const table = nvtxGpuProjectionTable(projection);
      for (const n of table.notes ?? []) note(n);
      emit(opts, [table], projection);
      return;
    }
    const summary = withExport(file, (h) => summarizeNvtx(h));
    const table = nvtxSummaryTable(summary);
    for (const n of table.notes ?? []) note(n);
    emit(opts, [table], summary);
  });
}
