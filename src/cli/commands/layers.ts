import type { Command } from 'commander';
import { budgetLabel } from '../../memoryBudget.js';
import { withExport } from '../../export/openExport.js';
import { analyzeExport } from '../../pipeline/analyzeExport.js';
import { progress } from '../../progress.js';
import { layersTables } from '../../../reports/layersReport.js';
import { emit, note, type OutputOptions } from '../output.js';
import {
  categoryRulesOf,
  layerOptionsOf,
  logOption,
  logsOf,
  selectionOf,
  withLayerOptions,
  withOutputOptions,
  withSelectionOptions,
  type CategoryOptions,
  type IterationCommandOptions,
  type LayerCommandOptions,
} from './options.js';

interface LayersOptions extends OutputOptions, IterationCommandOptions, CategoryOptions, LayerCommandOptions {
  steps?: boolean;
}

/** `iterscope layers <export>`: each step's kernel time by decoder layer and module kind. */
export function registerLayers(program: Command): void {
  withOutputOptions(
    withLayerOptions(
      withSelectionOptions(
        program
          .command('layers <export>')
          .description('inside the step: kernel time per decoder layer and module kind, per phase (spread, outlier layers, time outside any layer); from layerwise NVTX markers or inferred from the repeating kernel sequence')
          .addOption(logOption('iteration log (phases and batch sizes of the steps); repeatable'))
          .option('--steps', 'also one row per step and layer')
          .option('--categories <rules.json>', 'kernel category rules replacing the default table: [{"category","pattern"}] in order'),
      ),
    ),
  ).action((file: string, opts: LayersOptions) => {
    const request = { logs: logsOf(opts), selection: selectionOf(opts), categoryRules: categoryRulesOf(opts), layers: layerOptionsOf(opts) };
    const bar = progress(`iterscope: layers (${budgetLabel()})`, 0, { unit: 'steps' });
    const a = withExport(file, (h) => {
      try {
        return analyzeExport(h, { ...request, parts: ['iterations', 'layers'], requireIterations: true }, (step, count) => bar.update(count.done, `${step} done`, count.total));
      } finally {
        bar.done();
      }
    });
    const layers = a.layers;
    for (const n of a.iterations?.coverage.notes ?? []) note(n);
    if (!layers) {
      note('no steps with GPU work: nothing to split by layer');
      return emit(opts, [], { file, layers: null });
    }
    // The notes on stderr, as `iterations` prints its own (not under a table: JSON and CSV keep them out of stdout).
    for (const n of layers.notes) note(n);
    emit(opts, layersTables(layers, opts.steps === true).map((t) => ({ ...t, notes: [] })), { file, ...layers });
  });
}
