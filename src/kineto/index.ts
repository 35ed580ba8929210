export { microsToNs } from './kinetoEvents.js';
export { readKinetoTrace, type KinetoEvent, type KinetoHeader } from './readKineto.js';
export { analyzeAtenOps, type AtenOpAnalysis } from './atenOps.js';
export { attachTorchTrace, type TorchTraceAttachment } from './attachTorchTrace.js';
export { alignTorchClock, type TorchClockAlignment, type TorchAlignmentOptions } from './clockAlignment.js';
export type { IterationHostSide, HostSideTotals, HostWindow, OpTime, OpGpuTime, GroupHostSide } from './hostSide.js';
