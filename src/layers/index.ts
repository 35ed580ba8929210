export { analyzeLayers } from './analyzeLayers.js';
export { splitByPeriod, type PeriodSplit } from './period.js';
export { modulePathOf, moduleRefOf } from './moduleRefs.js';
export type { LaunchWindow } from './stepKernels.js';
export * from './types.js';
