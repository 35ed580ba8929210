import type { LayersAnalysis } from '../layers/types.js';
import type { CaptureHealth } from '../analysis/captureHealth.js';
import type { ExportInfo } from '../analysis/exportInfo.js';
import type { KernelSummary } from '../analysis/kernelSummary.js';
import type { MemoryTraffic } from '../analysis/memoryTraffic.js';
import type { GapAnalysis } from '../gaps/analyzeGaps.js';
import type { GilHolderAnalysis } from '../gaps/gilHolders.js';
import type { HostSummary } from '../gaps/hostSummary.js';
import type { IterationAnalysis } from '../iterations/types.js';
import type { PhaseSummary } from '../iterations/summary.js';
import type { CaptureSettings } from '../load/captureSettings.js';
import type { ReportLogFile } from '../logs/logRecords.js';
import type { IterationMetricsResult } from '../metrics/iterationMetrics.js';
import type { MoeRoutingReading } from './moeRoutingReading.js';
import type { Engine } from '../iterations/source.js';

/** Bumped when a field of the findings JSON changes meaning (CI and agents read it). */
export const FINDINGS_SCHEMA = 'iterscope.findings/1';

/**
 * What the rules read: parts of the one analysis of an export (nothing is queried again). The
 * pipeline's `ExportAnalysis` carries these fields (`findingsInputOf` narrows it).
 */
export interface FindingsInput {
  file: string;
  info: ExportInfo;
  kernels: KernelSummary;
  iterations: IterationAnalysis | null;
  iterationError: string | null;
  phases: PhaseSummary[];
  metrics: IterationMetricsResult | null;
  gaps: GapAnalysis;
  host: HostSummary;
  gilHolders: GilHolderAnalysis[];
  memory: MemoryTraffic;
  logs: ReportLogFile[];
  health: CaptureHealth;
  capture: CaptureSettings;
  /** With one export per rank: the cross-rank view (src/ranks' `CrossRankView`), for the stragglers rule. */
  crossRank?: CrossRankReading | null;
  /** The layer split, when it was asked for (`layers` part): the outlier-layer, outside-layers and attention-vs-KV rules. */
  layers?: LayersAnalysis | null;
}

/** What the stragglers rule reads of the cross-rank view (src/ranks' `CrossRankView` has these fields). */
export interface CrossRankReading {
  ranks: { rank: number; file: string; stragglerIterations: number; totalCollectiveWaitNs: number }[];
  iterations: {
    iter: number;
    straggler: number;
    stragglerBasis: 'arrival' | 'collective-time' | 'compute';
    maxCollectiveWaitNs: number;
    collectives: number | null;
    ranks: { rank: number; arrivalLagNs: number | null }[];
  }[];
  iterationsNotOnAllRanks: number[];
  clock: { basis: string };
}

export type Severity = 'high' | 'medium' | 'low' | 'info';


/** One thing a finding rests on, with enough to find it in Perfetto (session ns). */
export interface Evidence {
  text: string;
  iter?: number;
  rank?: number;
  deviceId?: number;
  tid?: number;
  startNs?: number;
  durationNs?: number;
  /** The part of `durationNs` this finding counts. */
  valueNs?: number;
}

export interface Finding {
  /** Stable id (`gc-pauses`, `gil-contention`, ...): the same problem keeps its id across runs. */
  id: string;
  title: string;
  severity: Severity;
  /** Estimated recoverable time (ns), never more than `restsOnNs`. */
  recoverableNs: number;
  /** recoverableNs / the iterations' wall time (0..1); null without iterations. */
  recoverableShare: number | null;
  /** How `recoverableNs` was estimated. */
  estimate: string;
  /** The measured time the finding rests on (idle time, copy time, wait time). */
  restsOnNs: number;
  evidence: Evidence[];
  remedy: string;
  /** Report section the evidence is in (a Markdown/HTML anchor). */
  section: string;
  confidence: { level: 'measured' | 'inferred' | 'not-traced'; traced: string[]; notTraced: string[] };
  /** Coverage only: ids of the findings the missing traces make impossible to look for. */
  hides?: string[];
  /**
   * Health findings only (what the capture can answer): `blocking` when the capture cannot answer
   * the rest (no GPU work, a crash, lost events, no serving loop), ranked before every other
   * finding; `caveat` when part of the numbers must be read with care (warm-up in the window,
   * whole-graph rows, an iteration cut by the end of the capture).
   */
  health?: 'blocking' | 'caveat';
}

/** Thresholds of the rules (all overridable with `--thresholds FILE.json`). */
export interface FindingThresholds {
  /** A host-cause finding (gc, gil_wait, sync, late launches) needs at least this share of the iterations' wall. */
  minIdleShare: number;
  /** ... or one gap of at least this many ns with that cause. */
  minGapNs: number;
  /** Launch-bound: fragmented (sub --min-gap) idle share of the iterations' wall. */
  fragmentedIdleShare: number;
  /** Launch-bound: kernels whose mean duration is below this are short. */
  shortKernelNs: number;
  /** Launch-bound: share of kernel time in short kernels. */
  shortKernelShare: number;
  /** Memory: mean H2D bytes per iteration above which traffic is high. */
  h2dBytesPerIteration: number;
  /** Memory: pageable copies per iteration at or above which they are reported. */
  pageableCopiesPerIteration: number;
  /** Memory: allocations inside the loop at or above which they are reported. */
  allocationsInLoop: number;
  /** Phase outliers: GPU ns per token at least this many times its phase's median. */
  outlierFactor: number;
  /** Cross-rank: share of the iterations' wall the ranks spend waiting in collectives. */
  collectiveWaitShare: number;
  /** MoE: the perfect router must be this much faster (GPU busy per iteration) to blame routing (TensorRT-LLM's 10%). */
  moeSpeedup: number;
  /** Severity: high at or above this share of the wall, medium at or above `mediumShare`. */
  highShare: number;
  mediumShare: number;
  /** Evidence rows per finding. */
  evidenceRows: number;
}

export const DEFAULT_THRESHOLDS: Readonly<FindingThresholds> = Object.freeze({
  minIdleShare: 0.005,
  minGapNs: 5_000_000,
  fragmentedIdleShare: 0.05,
  shortKernelNs: 10_000,
  shortKernelShare: 0.3,
  h2dBytesPerIteration: 64 * 1024 * 1024,
  pageableCopiesPerIteration: 1,
  allocationsInLoop: 1,
  outlierFactor: 2,
  collectiveWaitShare: 0.05,
  moeSpeedup: 0.1,
  highShare: 0.1,
  mediumShare: 0.03,
  evidenceRows: 5,
});

export interface FindingsOptions {
  thresholds?: Partial<FindingThresholds>;
  /** The perfect-router reading when a normal and a perfect-router run were given. */
  moeRouting?: MoeRoutingReading | null;
}

export interface FindingsResult {
  schema: typeof FINDINGS_SCHEMA;
  file: string;
  engine: Engine;
  /** The wall time shares are of: the iterations' summed wall (or the GPU span without iterations). */
  basis: { iterations: number; wallNs: number; wallSource: 'iterations' | 'gpu-span' | 'none' };
  thresholds: FindingThresholds;
  /** Blocking health findings first (in rule order), then by recoverable time, severity, id. */
  findings: Finding[];
  /**
   * With one export per rank (several exports): each export's own findings, in input order. The
   * fields above are the first export's with the findings across ranks (section `ranks`) added.
   */
  ranks?: RankFindings[];
}

/** One export's own findings among several (one export per rank). */
export interface RankFindings extends Pick<FindingsResult, 'file' | 'engine' | 'basis' | 'findings'> {
  /** The cross-rank view's ranks this export holds (one, unless it captured several ranked processes). */
  ranks: number[];
}

/** What the health rules read (`findHealthFindings`): a few small parts, no gaps, kernels or host side. */
export type HealthFindingsInput = Pick<FindingsInput, 'file' | 'info' | 'iterations' | 'iterationError' | 'health'>;

/** The health rules' context: a rule context over the parts they read. */
export type HealthRuleContext = Omit<RuleContext, 'input'> & { input: HealthFindingsInput };

/** What every rule gets: the input, the thresholds and shared figures. */
export interface RuleContext {
  input: FindingsInput;
  t: FindingThresholds;
  engine: Engine;
  wallNs: number;
  /** recoverable / wall, null when there is no wall. */
  share(ns: number): number | null;
  severity(ns: number): Severity;
}
