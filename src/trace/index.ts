/** `iterscope trace`: an annotated Chrome trace-event / Perfetto JSON file (issue 5). */
export { writeTrace, type TraceOptions, type TraceSummary } from './writeTrace.js';
export { parseItersOption, selectIterations, type IterRange } from './itersOption.js';
export { batchComposition, iterationSliceName, iterationArgs, CONTEXT_TOKENS_COUNTER, ACTIVE_REQUESTS_COUNTER } from './iterationSlices.js';
export { CAUSE_COLORS, PHASE_COLORS, causeColor } from './colors.js';
export { GPU_PID_BASE, TID_BASE, gpuPid } from './tracks.js';
export { Lanes } from './lanes.js';
export type { GpuOpSliceStats } from './gpuOpSlices.js';
export type { KernelNames } from '../analysis/timeline.js';
