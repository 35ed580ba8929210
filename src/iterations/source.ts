import type { LoadedExport } from '../load/loadedExport.js';
import type { MergedIterationRecord, ParsedIterationLog } from '../logs/logRecords.js';
import type { Phase } from './analyzeIterations.js';
import type { Numbering } from './numbering.js';
import type { LabelCounts, ProfileRange } from './rangeSpec.js';
import type { FoundIterationRanges, IterationRange } from './windows.js';

/** The serving engine whose markers an export carries. */
export type Engine = 'tensorrt-llm' | 'vllm' | 'sglang' | 'unknown';

export type IterationSourceId = 'trtllm-pytorch' | 'trtllm-cpp' | 'vllm' | 'sglang' | 'nvtx-range' | 'log-timestamps';

/** What `IterationSource.numberSteps` gets beside one process's ranges (the GPU ops and API calls are read). */
export interface StepNumberingContext {
  loaded: LoadedExport;
  logs: readonly ParsedIterationLog[];
  firstIter?: number;
  profileRanges?: ProfileRange[];
  /** The process's other ranges the source found with its steps (`FoundIterationRanges.otherRanges`). */
  otherRanges: readonly IterationRange[];
}

/** How the phase of a step without counts was told: its step span's batch kind, or what it launched. */
export type PhaseBasis = 'step-span' | 'launches';

/** The rule that told phases from launches, and how sure it is (`coverage.phaseRule`). */
export interface PhaseRule {
  rule: string;
  confidence: 'high' | 'medium';
  /** Why that confidence. */
  why: string;
  /** Steps whose phase came from the rule. */
  steps: number;
}

/** A source's own numbering of one process's windows, with what it joined them to. */
export interface StepNumbering extends Numbering {
  /** Per window: the log record describing it (null: none). */
  records: (MergedIterationRecord | null)[];
  /** Per window: its phase when no counts say it, and from what (null: from the counts). */
  phases: ({ phase: Phase; basis: PhaseBasis } | null)[];
  /** Per window: why the capture window cut it (left out of the rows), or null. */
  cut: (string | null)[];
  notes: string[];
  phaseRule?: PhaseRule;
}

/**
 * One way an engine marks its iterations in an export: which NVTX ranges, what their text says,
 * and how a profile range `A-B` maps to captured iterations. `findIterationRanges` (sources/index.ts)
 * tries the default sources in order; `--iteration-range` builds an `nvtxRangeSource`.
 */
export interface IterationSource {
  readonly id: IterationSourceId;
  readonly engine: Engine;
  /** PyTorch executors capture A..B-1 of TLLM_PROFILE_START_STOP=A-B, the C++ one A..B. */
  readonly profileRangeSemantics: 'half-open' | 'closed';
  /** The ranges that mark iterations in this export (per process, executor thread); empty when none. */
  findRanges(loaded: LoadedExport): FoundIterationRanges;
  /** Batch composition carried by a range's text (log alignment; phases without a log). */
  parseLabel(text: string): LabelCounts | null;
  /**
   * Whether every marker's text is meant to carry the batch (vLLM's, TensorRT-LLM's labels): a
   * marker of the family whose text does not parse, or parses in part, is then counted and quoted
   * in one note (`FoundIterationRanges.unparsedLabels`).
   */
  readonly labelsExpected?: boolean;
  /** Whether an NVTX text is one of this source's markers: a cheap existence probe for `detectEngine`. */
  matchesText?(text: string): boolean;
  /**
   * Numbers and joins one process's windows itself, for engines whose log lines carry no step
   * number and whose steps need the capture's launches to be told apart (SGLang); the others go
   * through `numberWindows` and the join by iteration number.
   */
  numberSteps?(ranges: IterationRange[], ctx: StepNumberingContext): StepNumbering;
}
