/** GPU idle gaps and their host-side causes (issue 4). */
export {
  analyzeGaps,
  idleByCausePerIteration,
  sortCauses,
  DEFAULT_MIN_GAP_NS,
  type GapAnalysis,
  type GapAnalysisOptions,
  type GapRow,
  type GapLaunchCall,
  type GapPhase,
  type GapThreads,
  type DeviceGapSummary,
  type IterationGapSummary,
  type IterationRef,
  type PhaseGapSummary,
} from './analyzeGaps.js';
export {
  CAUSE_PRIORITY,
  NVTX_CAUSE_PREFIX,
  causeRank,
  innermostSegments,
  layeredSegments,
  primaryCause,
  splitGapCauses,
  type CauseKind,
  type GapCauseInput,
  type GapCauses,
  type NamedRange,
  type NamedSegments,
} from './attributeCauses.js';
export { parseDurationNs } from './duration.js';
export { describeOp, gpuTimelines, resolveBoundaryOps, type DeviceTimeline, type GapOp, type GpuOpColumns } from './findGaps.js';
export { gapAt, gapCount } from '../load/deviceTimelines.js';
export {
  GC_RANGE,
  GIL_DOMAIN,
  GIL_HOLD_RANGE,
  GIL_WAIT_RANGE,
  isBlockingSyncApi,
  loadHostContext,
  nvtxCauseName,
  ThreadRanges,
  type ApiCallInfo,
  type HostContext,
  type LaunchThreads,
} from './hostCauses.js';
