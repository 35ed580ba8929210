import type { LoadedExport } from '../load/loadedExport.js';
import type { MergedIterationRecord, ParsedIterationLog } from '../logs/logRecords.js';
import type { Phase } from './phase.js';

import type { LabelCounts, ProfileRange } from './rangeSpec.js';


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

/** One NVTX range that marks an iteration, before numbering. */
export interface IterationRange {
  pid: number;
  tid: number;
  startNs: number;
  /** The range's own end (null: never closed). */
  rangeEndNs: number | null;
  text: string;
  /** Text of a span inside the range that describes the step (SGLang's `step[...]` inside `scheduler.run_batch`). */
  detail?: string;
  domain: string | null;
  /** Batch composition parsed from the text by the source (`IterationSource.parseLabel`); null when it carries none. */
  label: LabelCounts | null;
  /** Iteration number carried by the text: the PyTorch label's, or a `/regex/`'s first capture group. */
  number: number | null;
}

export interface FoundIterationRanges {
  /** The source whose ranges these are. */
  source: IterationSource;
  /** Per process: the ranges of its executor thread (the thread with the most matches), by start. */
  byPid: Map<number, IterationRange[]>;
  /** Matches on other threads of the same process, left out. */
  ignoredOtherThreads: number;
  /** Matching ranges left out for unusable times (NULL/text/end < start/beyond 2^53). */
  invalidRanges?: number;
  /**
   * Per process: the other ranges the source's `numberSteps` reads beside the steps (SGLang: the
   * scheduler's other ranges), found with them so the NVTX table is read in one place.
   */
  otherRanges?: Map<number, IterationRange[]>;
  /**
   * Markers of the source's family whose text did not parse (no batch) or parsed in part, for a
   * source whose labels carry the batch (`IterationSource.labelsExpected`); absent when none.
   */
  unparsedLabels?: UnparsedLabels;
}

/** Markers read as steps whose text was not (fully) understood, and the first one's text. */
export interface UnparsedLabels {
  /** Texts that gave no batch at all. */
  unparsed: number;
  /** Texts whose batch was read in part (the rest left null). */
  partial: number;
  example: string;
}

/** How the iteration numbers of a process's windows were obtained. */
/** `capture-order`: no number of the engine's could be found; windows are numbered 0, 1, ... in capture order. */
export type NumberingSource = 'label' | 'first-iter' | 'profile-range' | 'capture-env' | 'log-alignment' | 'capture-order';

export interface Numbering {
  iters: number[];
  source: NumberingSource;
  /** A sentence for the coverage notes (how, and how sure). */
  detail: string;
}
