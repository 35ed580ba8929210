/**
 * iterscope as a library: open an Nsight Systems export, run the analyses, render the results.
 * Typed queries over the nsys schema are in `iterscope/queries`.
 */
export * from './errors.js';
export { openExport, openInput, withExport } from './export/openExport.js';
export { detectInput, type InputKind } from './export/detectInput.js';
export * from './kineto/index.js';
export * from './analysis/durationStats.js';
export * from './analysis/intervals.js';
export * from './analysis/exportInfo.js';
export * from './analysis/kernelSummary.js';
export * from './analysis/nvtxSummary.js';
export * from './categories/rules.js';
export * from './logs/index.js';
export * from './iterations/rangeSpec.js';
export * from './iterations/windows.js';
export * from './iterations/numbering.js';
export * from './iterations/attribute.js';
export * from './iterations/analyze.js';
export * from './iterations/summary.js';
export * from './analysis/nvtxGpuProjection.js';
export * from './gaps/index.js';
export * from './summary/runSummary.js';
export * from './compare/compareRuns.js';
export * as metrics from './metrics/iterationMetrics.js';
export * as trace from './trace/index.js';
export * from './pipeline/index.js';
export * from './ranks/index.js';
export * as reports from '../reports/index.js';
export type { ExportHandle, ExportMetadata, QueryOptions } from '../queries/handle.js';
