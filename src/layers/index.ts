export { analyzeLayers } from './analyzeLayers.js';
export { splitByPeriod, type PeriodSplit } from './period.js';
export { modulePathOf, moduleRefOf } from './moduleRefs.js';
export type { LaunchWindow } from './stepKernels.js';
export { MODULE_KINDS, type ModuleKind, type LayerSource, type LayerSourceOption, type ModuleRef, type LayerFigures, type PeriodFit, type StepLayers, type LayerSpan, type OutlierLayer, type PhaseLayers, type LayersAnalysis, type MarkerAgreement, type LayerOptions } from './types.js';
