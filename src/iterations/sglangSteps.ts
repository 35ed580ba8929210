/**
 * What a capture says about each SGLang forward step (research/sglang.md §1-2): the kind of batch
 * it ran (from the torch trace's `step[...]` span, else from what its `scheduler.run_batch`
 * launched), and whether the capture window cut it.
 */
import type { ApiCallColumns } from '../load/apiCallColumns.js';
import type { GpuOpColumns } from '../load/gpuOpColumns.js';
import type { LabelCounts, PhaseTokenDetail, StepTokenDetail } from './rangeSpec.js';
import type { IterationRange } from './source.js';

/** SGLang's scheduler range around one forward step (SGLANG_ENABLE_NVTX_SCHEDULER=1; torch `record_function` too). */
export const SGLANG_RUN_BATCH = 'scheduler.run_batch';

/**
 * The model runner's span per forward (torch traces only): `step[EXTEND bs=B toks=T]`,
 * `step[DECODE bs=B]`, `step[MIXED bs=B]`, `step[IDLE bs=0]` (renamed 2026-05-01, #24197; with
 * roofline annotations `c=.. g=..` and aggregates follow), before that `step[prefill bs=B toks=T]`,
 * `step[decode bs=B]`, `step[mixed bs=N ext=T dec=D]`, `step[idle]` (#23419, 2026-04-22).
 * The family is `step[MODE ...]`: fields after the mode are read where they are `key=number`;
 * anything else in the brackets is left unread (the label is then partial), never a refusal.
 */
export const SGLANG_STEP_SPAN = /^step\[\s*([A-Za-z_]+)\b([^\]]*)\]$/;

/** The batch a step ran. A speculative step verifies draft tokens: its own phase, never decode. */
export type SglangStepKind = 'prefill' | 'decode' | 'mixed' | 'idle' | 'speculative';

/** One `key=value` field of a step span (integers and decimals). */
const FIELD = /^([A-Za-z_]+)=(\d+(?:\.\d+)?)$/;

/** A step span's mode, its `key=number` fields, and whether any other text was left unread; null when the text is no step span. */
function stepSpanParts(text: string): { mode: string; n: Record<string, number>; unread: boolean } | null {
  const m = SGLANG_STEP_SPAN.exec(text);
  if (!m) return null;
  const n: Record<string, number> = {};
  let unread = false;
  for (const kv of m[2].trim().split(/\s+/).filter(Boolean)) {
    const f = FIELD.exec(kv);
    if (f) n[f[1].toLowerCase()] = Number(f[2]);
    else unread = true;
  }
  return { mode: m[1].toUpperCase(), n, unread };
}

/**
 * The forward modes of the target model's step. Speculative decoding runs TARGET_VERIFY for the
 * target model and DRAFT_* forwards (the draft model's, inside the same run_batch: not steps).
 */
const KIND_OF_MODE: Record<string, SglangStepKind> = { EXTEND: 'prefill', PREFILL: 'prefill', SPLIT_PREFILL: 'prefill', DECODE: 'decode', TARGET_VERIFY: 'speculative', MIXED: 'mixed', IDLE: 'idle' };

export function isSglangStepSpan(text: string): boolean {
  return SGLANG_STEP_SPAN.test(text);
}

/** The kind of batch a step span names; null for draft-model forwards and unknown modes. */
export function stepSpanKind(text: string): SglangStepKind | null {
  const p = stepSpanParts(text);
  return p ? (KIND_OF_MODE[p.mode] ?? null) : null;
}

/** Counts of a step span's batch, before the partial flag. */
function spanCounts(kind: SglangStepKind | undefined, n: Record<string, number>): LabelCounts | null {
  const { bs, toks, c, g, dec, c_sq } = n;
  const counts = (ctx: number, ctxTokens: number | null, gen: number): LabelCounts => ({ iter: null, contextRequests: ctx, contextTokens: ctxTokens, generationRequests: gen, generationTokens: null });
  if (kind === 'idle') return counts(0, 0, 0);
  if (bs === undefined) return null;
  if (kind === 'prefill') return counts(bs, toks ?? c_sq ?? null, 0);
  if (kind === 'decode') return counts(0, 0, bs);
  if (kind === 'speculative') return { ...counts(0, 0, bs), speculative: true };
  if (kind === 'mixed' && c !== undefined && g !== undefined) return counts(c, c_sq ?? null, g);
  if (kind === 'mixed' && dec !== undefined && dec <= bs) return counts(bs - dec, null, dec);
  return null;
}

/**
 * Batch composition of a step span. EXTEND: `bs` new requests, `toks` prompt tokens, no decode;
 * DECODE: `bs` decode requests; TARGET_VERIFY: `bs` requests verifying drafts (speculative);
 * IDLE: nothing. MIXED only with its split (`c=` / `g=` of roofline annotations, or the old
 * `dec=`): `step[MIXED bs=B]` alone does not say how many of the B requests are decoding.
 */
export function parseSglangStepSpan(text: string): LabelCounts | null {
  const p = stepSpanParts(text);
  if (!p) return null;
  const label = spanCounts(KIND_OF_MODE[p.mode], p.n);
  if (!label) return null;
  const detail = rooflineDetail(p.n);
  return { ...label, ...(detail ? { detail } : {}), ...(p.unread ? { partial: true as const } : {}) };
}

/** One phase's roofline sums (`c_sq`, `c_sk`, `c_sqsq`, `c_sqsk`, or `g_...`); null unless all four are there. */
function rooflinePhase(n: Record<string, number>, prefix: 'c' | 'g'): PhaseTokenDetail | null {
  const [q, kv, qq, qk] = ['sq', 'sk', 'sqsq', 'sqsk'].map((k) => n[`${prefix}_${k}`]);
  return q === undefined || kv === undefined || qq === undefined || qk === undefined ? null : { queryTokens: q, kvTokens: kv, qqCompute: qq, qkCompute: qk };
}

/** The roofline annotation's token detail (SGLang #24197: the same sums as vLLM's detailed annotation); null without it. */
function rooflineDetail(n: Record<string, number>): StepTokenDetail | null {
  const context = rooflinePhase(n, 'c');
  const generation = rooflinePhase(n, 'g');
  return context || generation ? { scheduledTokens: null, context, generation } : null;
}

/** Kernel and CUDA-graph launch calls a step's `run_batch` made (on its own thread). */
export interface StepLaunches {
  graphLaunches: number;
  kernelLaunches: number;
}

const GRAPH_LAUNCH = /^cu(?:da)?GraphLaunch/;
const KERNEL_LAUNCH = /^cu(?:da)?Launch(?:Cooperative)?Kernel/;

/** Index of the last range starting at or before `t` (ranges sorted by start), or -1. */
export function lastStartingBy(ranges: readonly IterationRange[], t: number): number {
  let lo = 0;
  let hi = ranges.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ranges[mid].startNs <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/** Per range of one process's executor thread: the launch calls made inside it. */
export function launchesPerStep(ranges: readonly IterationRange[], api: ApiCallColumns, nameOf: (id: number) => string | undefined): StepLaunches[] {
  const out = ranges.map(() => ({ graphLaunches: 0, kernelLaunches: 0 }));
  if (ranges.length === 0) return out;
  const { pid, tid } = ranges[0];
  const kindOfName = new Map<number, 'graph' | 'kernel' | null>();
  for (let i = 0; i < api.count; i++) {
    if (api.pid[i] !== pid || api.tid[i] !== tid) continue;
    const k = lastStartingBy(ranges, api.start[i]);
    const r = ranges[k];
    if (k < 0 || r.rangeEndNs === null || api.start[i] > r.rangeEndNs) continue;
    const id = api.nameId[i];
    let kind = kindOfName.get(id);
    if (kind === undefined) {
      const name = nameOf(id) ?? '';
      kind = GRAPH_LAUNCH.test(name) ? 'graph' : KERNEL_LAUNCH.test(name) ? 'kernel' : null;
      kindOfName.set(id, kind);
    }
    if (kind === 'graph') out[k].graphLaunches++;
    else if (kind === 'kernel') out[k].kernelLaunches++;
  }
  return out;
}

/**
 * Which of SGLang's defaults tell a step's kind from its launches: decode batches up to
 * `--cuda-graph-max-bs` replay a CUDA graph, prefill batches run eager. The log's `cuda graph:`
 * field says when a run broke either: a prefill line with `cuda graph: True` (piecewise CUDA graphs)
 * voids "a graph launch means decode", a decode line with `cuda graph: False` (a batch above the
 * captured sizes) voids "eager kernels only mean prefill".
 */
export interface LaunchRule {
  graphMeansDecode: boolean;
  eagerMeansPrefill: boolean;
}

/** The kind a step's launches imply under `rule`; null when they imply none (or it launched nothing). */
export function kindFromLaunches(l: StepLaunches, rule: LaunchRule): SglangStepKind | null {
  if (l.graphLaunches > 0) return rule.graphMeansDecode ? 'decode' : null;
  if (l.kernelLaunches > 0) return rule.eagerMeansPrefill ? 'prefill' : null;
  return null;
}

/**
 * Why a step is cut by the capture window (`nsys profile --delay/--duration`, or a profiler
 * start/stop inside a step), or null: its range never closed; nothing else was recorded on its
 * thread before it (the capture may have begun inside it) or after it (may have ended inside it);
 * or, first and last steps only, some of its kernel or graph launches have no GPU work in the export.
 */
export function cutReasons(
  ranges: readonly IterationRange[],
  threadEvents: { firstNs: number; lastNs: number },
  launchesWithoutWork: (k: number) => number,
): (string | null)[] {
  return ranges.map((r, k) => {
    if (r.rangeEndNs === null) return 'its range never closed in the capture';
    if (r.startNs <= threadEvents.firstNs) return 'the capture began inside it (nothing recorded on its thread before it)';
    if (r.rangeEndNs >= threadEvents.lastNs) return 'the capture ended inside it (nothing recorded on its thread after it)';
    if (k === 0 || k === ranges.length - 1) {
      const missing = launchesWithoutWork(k);
      if (missing > 0) return `${missing} of its launches have no GPU work in the export`;
    }
    return null;
  });
}

/** Launch calls inside range `k` (on its thread) whose correlation id no GPU op of the process carries. */
export function launchesWithoutWork(range: IterationRange, api: ApiCallColumns, ops: GpuOpColumns, nameOf: (id: number) => string | undefined): number {
  const end = range.rangeEndNs ?? Infinity;
  const launched = new Set<number>();
  for (let i = 0; i < api.count; i++) {
    if (api.pid[i] !== range.pid || api.tid[i] !== range.tid || api.start[i] < range.startNs || api.start[i] > end) continue;
    const name = nameOf(api.nameId[i]) ?? '';
    if ((GRAPH_LAUNCH.test(name) || KERNEL_LAUNCH.test(name)) && !Number.isNaN(api.correlationId[i])) launched.add(api.correlationId[i]);
  }
  if (launched.size === 0) return 0;
  for (let i = 0; i < ops.count && launched.size > 0; i++) if (ops.pid[i] === range.pid) launched.delete(ops.correlationId[i]);
  return launched.size;
}
