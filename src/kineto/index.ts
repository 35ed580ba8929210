export { microsToNs } from './trace/kinetoEvents.js';
export { readKinetoTrace, type KinetoEvent, type KinetoHeader } from './trace/readKineto.js';
export { analyzeAtenOps, type AtenOpAnalysis } from './atenOps.js';
export { attachTorchTrace, type TorchTraceAttachment } from './attachTorchTrace.js';
export { alignTorchClock, type TorchClockAlignment, type TorchAlignmentOptions } from './clockAlignment.js';
export type { IterationHostSide, HostSideTotals, HostWindow, OpTime, OpGpuTime, GroupHostSide } from './hostSide.js';
