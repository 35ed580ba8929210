import type { Command } from 'commander';
import { withExport } from '../../export/openExport.js';
import { describeExport } from '../../analysis/exportInfo.js';
import { exportInfoTables } from '../../../reports/infoReport.js';
import { emit, type OutputOptions } from '../output.js';
import { withOutputOptions } from './common.js';

export function registerInfo(program: Command): void {
  withOutputOptions(program.command('info <export>').description('what an export holds: nsys version, GPUs, processes, tables, NVTX domains, trace modes')).action(
    (file: string, opts: OutputOptions) => {
      const info = withExport(file, describeExport);
      emit(opts, exportInfoTables(info), info);
    },
  );
}
