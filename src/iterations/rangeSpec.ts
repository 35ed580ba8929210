import { UsageError } from '../errors.js';
import { compileUserRegex } from '../userRegex.js';

/** The PyTorch executor's per-iteration NVTX label, in its three historical forms. */
export const PYTORCH_FORWARD_STEP = /^\[Executor\] _forward_step(?: (\d+))?: (\d+) ctx reqs(?:, (\d+) ctx tokens)?, (\d+) gen reqs$/;

/** C++ runtime (`--nvtx` builds) per-iteration ranges, newest name first. */
export const CPP_ITERATION_RANGES = ['TrtGptModelInflightBatching::forwardAsync', 'ModelForwardAsync'] as const;

/** Which NVTX ranges mark iterations. */
export type IterationRangeSpec =
  | { kind: 'pytorch' }
  | { kind: 'cpp'; name: string }
  | { kind: 'name'; name: string }
  | { kind: 'regex'; regex: RegExp; source: string };

/**
 * Batch composition carried by an iteration range's text. `iter` is null when the text has no
 * number (the oldest PyTorch form, vLLM); token counts are null when the text has none.
 */
export interface LabelCounts {
  iter: number | null;
  contextRequests: number;
  contextTokens: number | null;
  generationRequests: number;
  generationTokens: number | null;
  /** The token detail some labels carry (vLLM's detailed annotation); absent when the text has none. */
  detail?: StepTokenDetail;
  /** Present (true) when part of the text was not understood: what parsed is kept, the rest is null. */
  partial?: true;
  /** Present (true) for a speculative-decoding verify step (SGLang's TARGET_VERIFY): its own phase, not decode. */
  speculative?: true;
}

/** One phase's tokens in a step's label (vLLM's detailed annotation): sums over that phase's requests. */
export interface PhaseTokenDetail {
  /** Scheduled (query) tokens. */
  queryTokens: number;
  /** Sequence lengths (computed plus scheduled tokens): the KV tokens attention reads. */
  kvTokens: number;
  /** Sum of query_len^2: a proxy for QK^T compute of a prefill. */
  qqCompute: number;
  /** Sum of query_len * seq_len: a proxy for QK^T compute of decode and chunked prefill. */
  qkCompute: number;
}

/** A step's token detail: the total scheduled tokens and each phase's sums (null: the text has none). */
export interface StepTokenDetail {
  scheduledTokens: number | null;
  context: PhaseTokenDetail | null;
  generation: PhaseTokenDetail | null;
}

export function parseForwardStepLabel(text: string): LabelCounts | null {
  const m = PYTORCH_FORWARD_STEP.exec(text);
  if (!m) return null;
  return {
    iter: m[1] === undefined ? null : Number(m[1]),
    contextRequests: Number(m[2]),
    contextTokens: m[3] === undefined ? null : Number(m[3]),
    generationRequests: Number(m[4]),
    generationTokens: null,
  };
}

/** `--iteration-range NAME` (exact text) or `--iteration-range /regex/flags`. */
export function parseIterationRangeSpec(value: string): IterationRangeSpec {
  const m = /^\/(.*)\/([a-z]*)$/s.exec(value);
  if (!m) {
    if (value === '') throw new UsageError('--iteration-range needs an NVTX range name or /regex/');
    return { kind: 'name', name: value };
  }
  // g and y make test()/exec() stateful across calls: drop them. Bounded work: see userRegex.ts.
  return { kind: 'regex', regex: compileUserRegex(m[1], m[2].replace(/[gy]/g, ''), '--iteration-range'), source: value };
}

/** A `TLLM_PROFILE_START_STOP`-style range: `A-B` or a single `A`. */
export interface ProfileRange {
  first: number;
  last: number;
}

/** `--profile-range A-B` / env values like `100-150` or `20,40-45` (one entry per capture window). */
export function parseProfileRanges(value: string, what = '--profile-range'): ProfileRange[] {
  const parts = value.split(',').map((p) => p.trim()).filter(Boolean);
  if (parts.length === 0) throw new UsageError(`${what}: expected A-B (got '${value}')`);
  return parts.map((p) => {
    const m = /^(\d+)(?:\s*-\s*(\d+))?$/.exec(p);
    if (!m) throw new UsageError(`${what}: expected A-B or A (got '${value}')`);
    const first = Number(m[1]);
    const last = m[2] === undefined ? first : Number(m[2]);
    if (last < first) throw new UsageError(`${what}: ${p} ends before it starts`);
    return { first, last };
  });
}

/** A range text quoted in a one-line message: at most `max` characters, `...` where it was cut. */
export function clipRangeText(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}
