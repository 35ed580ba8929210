import type { Command } from 'commander';
import { withExport } from '../../export/openExport.js';
import { analyzeExport } from '../../pipeline/analyzeExport.js';
import { exportInfoTables } from '../../../reports/infoReport.js';
import { emit, type OutputOptions } from '../output.js';
import { withOutputOptions } from './options.js';
import { expandExportArgs, tablesAcrossExports } from './ranks.js';

export function registerInfo(program: Command): void {
  withOutputOptions(
    program
      .command('info <exports...>')
      .description('what an export holds: nsys version, GPUs, processes, tables, NVTX domains, trace modes; several exports: each table once with a Rank column'),
  ).action(async (inputs: string[], opts: OutputOptions) => {
    const files = expandExportArgs(inputs);
    if (files.length > 1) return tablesAcrossExports(files, 'info', {}, opts, (i) => exportInfoTables(i, i.health));
    const a = withExport(files[0], (h) => analyzeExport(h, { parts: ['info', 'health'] }));
    const info = a.info!;
    emit(opts, exportInfoTables(info, a.health), { ...info, health: a.health });
  });
}
