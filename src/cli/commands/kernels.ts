import type { Command } from 'commander';
import { withExport } from '../../export/openExport.js';
import { tablesReadBy } from '../../export/contract.js';
import { analyzeExport } from '../../pipeline/analyzeExport.js';
import { kernelSummaryTable } from '../../../reports/kernelsReport.js';
import { UsageError } from '../../errors.js';
import { emit, note, type OutputOptions } from '../output.js';
import { withOutputOptions } from './options.js';
import { noGpuWorkLine } from '../../analysis/captureHealth.js';
import { expandExportArgs, tablesAcrossExports } from './ranks.js';

interface KernelsOptions extends OutputOptions {
  by?: string;
  graphs?: boolean;
}

export function registerKernels(program: Command): void {
  withOutputOptions(
    program
      .command('kernels <exports...>')
      .description('kernel time summary, as `nsys stats -r cuda_gpu_kern_sum`; several exports (files, directories, quoted globs): one table with a Rank column')
      .option('--by <name>', 'group by the demangled (default) or short kernel name: demangled | short')
      .option('--graphs', 'add whole-graph launches (graph-level CUDA-graph trace) as [CUDA graph <id>] rows'),
  ).action(async (inputs: string[], opts: KernelsOptions) => {
    if (opts.by !== undefined && opts.by !== 'short' && opts.by !== 'demangled') throw new UsageError(`--by must be 'demangled' or 'short' (got '${opts.by}')`);
    const kernels = { nameBy: opts.by === 'short' ? ('short' as const) : ('demangled' as const), includeGraphs: !!opts.graphs };
    const files = expandExportArgs(inputs);
    if (files.length > 1) return tablesAcrossExports(files, 'kernels', { kernels }, opts, (s) => [kernelSummaryTable(s)]);
    // A PyTorch profiler trace converts only what the kernel summary reads.
    const a = withExport(files[0], (h) => analyzeExport(h, { parts: ['kernels', 'health'], kernels }), { tables: tablesReadBy(['kernelSummary']) });
    const summary = a.kernels!;
    const table = kernelSummaryTable(summary);
    // Nothing on the GPU at all: one line saying why, not what table is missing.
    const empty = summary.rows.length === 0 ? noGpuWorkLine(a.health!) : null;
    for (const n of empty ? [empty] : (table.notes ?? [])) note(n);
    emit(opts, [table], summary);
  });
}
