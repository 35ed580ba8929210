/**
 * What the iteration analysis returns: a row per iteration, and how the iterations were found and
 * joined.
 */
import type { CategoryClassifier } from '../categories/rules.js';
import type { IterationMetrics, LogFormat, ParsedIterationLog } from '../logs/logRecords.js';
import type { AttributionCoverage } from './attribute.js';
import type { Numbering, Engine, IterationSource, PhaseBasis, PhaseRule } from './source.js';
import type { LabelCounts, StepTokenDetail } from './rangeSpec.js';
import type { IterationSelection } from './selection.js';
import type { Phase } from './phase.js';

/** The log fields joined to an iteration (no raw objects: see `sources` for where they came from). */
export interface JoinedLog extends IterationMetrics {
  sources: { file: string; line: number; format: LogFormat; sourceIter: number }[];
}

export interface IterationRow {
  iter: number;
  pid: number;
  startNs: number;
  endNs: number;
  wallNs: number;
  /** Union of the process's GPU work (all devices) inside the window. */
  gpuBusyNs: number;
  gpuIdleNs: number;
  /** Kernels (and whole-graph launches) launched in the window. */
  kernelNs: number;
  kernelCount: number;
  /** Kernel time by category; sums to kernelNs. */
  categoryNs: Record<string, number>;
  memcpyNs: number;
  memcpyCount: number;
  memsetNs: number;
  memsetCount: number;
  graphLaunches: number;
  /** GPU ops launched in the window from threads other than the executor thread. */
  otherThreadOps: number;
  /** The NVTX range that marks the iteration. */
  label: string;
  labelCounts: LabelCounts | null;
  contextRequests: number | null;
  contextTokens: number | null;
  generationRequests: number | null;
  /** Generation tokens (log, else the label, e.g. vLLM's); null when neither says. */
  generationTokens: number | null;
  phase: Phase;
  /** Present when no counts gave the phase: the step span's batch kind, or what the step launched (`coverage.phaseRule`). */
  phaseBasis?: PhaseBasis;
  /** Present (true) when `iter` is the window's place in the capture (0, 1, ...), not a number of the engine's. */
  captureOrder?: true;
  log: JoinedLog | null;
  matched: boolean;
  /** Whether the label's ctx/gen counts equal the log's (null: nothing to compare). */
  labelMatchesLog: boolean | null;
  /** Idle time of the gaps starting in the window by host cause (the pipeline's `iterations` part adds them from `gaps`). */
  idleByCauseNs?: Record<string, number>;
  /** Time-weighted GPU metrics over the window, when the export sampled them (the pipeline's `iterations` part adds them). */
  metrics?: Record<string, number | null>;
  /** The label's token detail (vLLM's detailed annotation: query and KV tokens, compute proxies); absent when it has none. */
  tokenDetail?: StepTokenDetail;
  /** KV tokens attention read in the step (both phases' sequence lengths); present with `tokenDetail`, null when neither phase has them. */
  kvTokens?: number | null;
  /** Attention kernel ns per 1,000 KV tokens; present with `tokenDetail`, null without KV tokens or an `attention` category. */
  attentionNsPer1kKvTokens?: number | null;
}

export interface IterationCoverage extends AttributionCoverage {
  /** Which iteration source marked the windows, and its engine. */
  source: { id: IterationSource['id']; engine: Engine };
  windows: number;
  numbering: { pid: number; source: Numbering['source']; detail: string }[];
  joined: number;
  windowsWithoutRecord: number[];
  /** Log iterations not in the export (before/after the capture, or another run). */
  recordsOutsideCapture: number[];
  logRecords: number;
  logSkippedLines: number;
  labelMismatches: number[];
  ignoredOtherThreadRanges: number;
  /** Iterations whose NVTX range never closed: the capture ended inside them (absent in older analyses). */
  unclosedRanges?: number[];
  /** How phases were told from launches, when some were (SGLang steps without a log line). */
  phaseRule?: PhaseRule;
  /**
   * Steps the capture window cut (their numbers), left out of `iterations`; their GPU ops
   * (`cutStepOps`, `cutStepNs`) are not counted in `placedOps`/`placedNs`.
   */
  cutSteps?: number[];
  cutStepOps?: number;
  cutStepNs?: number;
  /** One-line notes for people. */
  notes: string[];
}

export interface IterationAnalysis {
  file: string;
  categories: string[];
  /** Present when the capture recorded no GPU work (why): the steps have their host side only (a CPU-only PyTorch-profiler trace). */
  noGpuWork?: string;
  /** GPU metric names present in `iterations[].metrics` (absent without metrics). */
  metricNames?: string[];
  iterations: IterationRow[];
  coverage: IterationCoverage;
}

export interface IterationOptions {
  logs?: ParsedIterationLog[];
  /** How iterations are found and numbered (`--iteration-range`, `--first-iter`, `--profile-range`). */
  selection?: IterationSelection;
  classifier?: CategoryClassifier;
}
