/**
 * Aligns the forward steps of an SGLang capture with the batch lines of its log (one scheduler's
 * lines, in order). A capture holds consecutive steps; the log holds one line per prefill batch and
 * one per `--decode-log-interval` decode batches, numbered only with SGLANG_LOG_FORWARD_ITERS=1.
 * Three ways, tried in order:
 * - forward numbers: the steps take the numbers N of the lines they fit (` [N]`);
 * - every step: the log shows a line per step (its adjacent decode lines are each one decode step
 *   apart) and the steps fit consecutive lines (as vLLM's `Iteration(N)`);
 * - prefill sequence: the capture's prefill steps fit consecutive prefill lines and the decode
 *   lines between two of them fit between the matching steps; a gap pins its decode lines to steps
 *   only when it holds as many lines as decode steps.
 * Only a unique fit joins anything.
 */
import type { IterationLogRecord } from '../logs/logRecords.js';
import type { SglangBatchLine } from '../logs/sglangBatchLines.js';
import { consecutiveFits } from './numbering.js';
import type { LabelCounts } from './rangeSpec.js';
import type { SglangStepKind } from './sglangSteps.js';

/** A forward step as the capture shows it. */
export interface SglangStep {
  /** From the step span, else from the launches (null: unknown, e.g. a cut step). */
  kind: SglangStepKind | null;
  /** Composition from the step span (torch traces); null without one. */
  label: LabelCounts | null;
  /**
   * What the step launched (`graph launches/kernel launches`), for steps of unknown kind: steps
   * that launched alike ran one code path, so one batch kind. Breaks a tie between fits only.
   */
  launchShape?: string | null;
}

/** One scheduler's log line. */
export interface SglangLine {
  record: IterationLogRecord;
  line: SglangBatchLine;
}

export type SglangAlignmentMode = 'forward-numbers' | 'every-step' | 'prefill-sequence';

export interface SglangAlignment {
  mode: SglangAlignmentMode;
  /** Per step: the index of its line in `lines`, or -1 (no line describes it). */
  lineOf: number[];
  /** Per step: SGLang's step number (forward number, or line position in an every-step log); null: unknown. */
  numbers: number[] | null;
  /** Of how many fits this one was chosen as the only one where steps that launched alike are batches of one kind (absent: the only fit). */
  chosenByLaunchShapeOf?: number;
}

/** The alignments that fit, at most two (two means ambiguous). */
export interface SglangFit {
  mode: SglangAlignmentMode;
  fits: SglangAlignment[];
}

const isPrefillKind = (k: SglangStepKind | null) => k === 'prefill' || k === 'mixed';

/** Whether a step can be the batch a line describes: same kind, and the same counts where the step span has them. */
export function stepFitsLine(step: SglangStep, l: SglangBatchLine): boolean {
  if (step.kind === 'idle') return false;
  if (step.kind !== null && isPrefillKind(step.kind) !== (l.batch === 'prefill')) return false;
  const label = step.label;
  if (!label) return true;
  if (l.batch === 'prefill') return label.contextRequests === l.newSeq && (label.contextTokens === null || label.contextTokens === l.newToken);
  return label.contextRequests === 0 && label.generationRequests === l.runningReq;
}

/**
 * Whether decode line `b` can be the decode step right after `a`: no request joins without a
 * prefill line, and each running request gains at most one KV token (speculative decoding: not
 * checked, its accept length varies by step). A line every 40 steps gains ~40 per request.
 */
export function oneDecodeStepApart(a: SglangBatchLine, b: SglangBatchLine): boolean {
  if (a.runningReq === null || b.runningReq === null || b.runningReq > a.runningReq) return false;
  if (a.acceptLen !== null || b.acceptLen !== null || a.tokens === null || b.tokens === null) return true;
  return b.tokens - a.tokens <= b.runningReq;
}

/**
 * Whether the log shows a line for every step: it has adjacent decode lines, and every such pair
 * is one decode step apart. A log without adjacent decode lines shows nothing either way.
 */
function everyStepLogged(lines: readonly SglangLine[]): boolean {
  let pairs = 0;
  for (let i = 1; i < lines.length; i++) {
    const a = lines[i - 1].line;
    const b = lines[i].line;
    if (a.batch !== 'decode' || b.batch !== 'decode') continue;
    if (!oneDecodeStepApart(a, b)) return false;
    pairs++;
  }
  return pairs > 0;
}

/** Forward numbers: offsets o such that step j is line N = o + j wherever the log has N, and no prefill step lacks its line. */
function byForwardNumbers(steps: readonly SglangStep[], lines: readonly SglangLine[]): SglangAlignment[] {
  const byN = new Map<number, number>();
  lines.forEach((l, i) => byN.set(l.line.forwardIter!, i));
  const ns = [...byN.keys()];
  const lo = Math.min(...ns);
  const hi = Math.max(...ns);
  // Anchor: the first prefill step has a line; without one, any step that fits a line.
  const anchor = steps.findIndex((s) => isPrefillKind(s.kind));
  const candidates = new Set<number>();
  for (const [n, i] of byN) {
    if (anchor >= 0) {
      if (stepFitsLine(steps[anchor], lines[i].line)) candidates.add(n - anchor);
    } else steps.forEach((s, j) => stepFitsLine(s, lines[i].line) && candidates.add(n - j));
  }
  const fits = consecutiveFits([...candidates].sort((a, b) => a - b), steps.length, (o, j) => {
    const i = byN.get(o + j);
    if (i !== undefined) return stepFitsLine(steps[j], lines[i].line);
    // Every prefill batch prints a line: inside the log's span, a prefill step needs one.
    return !(isPrefillKind(steps[j].kind) && o + j >= lo && o + j <= hi);
  }, 2);
  return fits
    .filter((o) => steps.some((_, j) => byN.has(o + j)))
    .map((o) => ({ mode: 'forward-numbers', lineOf: steps.map((_, j) => byN.get(o + j) ?? -1), numbers: steps.map((_, j) => o + j) }));
}

/** Every step (in a log that shows a line per step): offsets o such that step j is line o + j; the lines' positions are the steps' numbers. */
function byEveryStep(steps: readonly SglangStep[], lines: readonly SglangLine[]): SglangAlignment[] {
  const starts = Array.from({ length: Math.max(0, lines.length - steps.length + 1) }, (_, o) => o);
  const shaped = steps.some((s) => s.kind === null && s.launchShape);
  const fits = consecutiveFits(starts, steps.length, (o, j) => stepFitsLine(steps[j], lines[o + j].line), shaped ? Infinity : 2);
  const byShape = fits.length > 1 ? fits.filter((o) => launchShapesAgree(steps, (j) => lines[o + j].line.batch)) : [];
  const kept = byShape.length === 1 ? byShape : fits.slice(0, 2);
  return kept.map((o) => ({
    mode: 'every-step',
    lineOf: steps.map((_, j) => o + j),
    numbers: steps.map((_, j) => lines[o + j].record.iter),
    ...(byShape.length === 1 ? { chosenByLaunchShapeOf: fits.length } : {}),
  }));
}

/**
 * Whether, under one fit, the steps of unknown kind that launched alike are all batches of one
 * kind (an eager capture's decode steps launch one sequence, its prefills another). Used only to
 * choose among several fits, never to reject the only one: a model whose prefill and decode
 * launch alike simply leaves the tie.
 */
export function launchShapesAgree(steps: readonly SglangStep[], batchOf: (j: number) => SglangBatchLine['batch']): boolean {
  const kindOfShape = new Map<string, SglangBatchLine['batch']>();
  for (let j = 0; j < steps.length; j++) {
    const shape = steps[j].kind === null ? steps[j].launchShape : null;
    if (!shape) continue;
    const seen = kindOfShape.get(shape);
    if (seen === undefined) kindOfShape.set(shape, batchOf(j));
    else if (seen !== batchOf(j)) return false;
  }
  return true;
}

/**
 * Prefill sequence: the capture's prefill steps P[0..m) fit prefill lines k..k+m; between P[t] and
 * P[t+1], the d decode lines between those prefill lines fit the c decode steps between them (d <= c;
 * d == c pins each line to its step). Steps of unknown kind may only lie outside [P[0], P[m-1]].
 */
function byPrefillSequence(steps: readonly SglangStep[], lines: readonly SglangLine[]): SglangAlignment[] {
  const p = steps.flatMap((s, j) => (isPrefillKind(s.kind) ? [j] : []));
  if (p.length === 0 || steps.slice(p[0], p[p.length - 1]).some((s) => s.kind === null)) return [];
  const lp = lines.flatMap((l, i) => (l.line.batch === 'prefill' ? [i] : []));
  const out: SglangAlignment[] = [];
  for (let k = 0; k + p.length <= lp.length && out.length < 2; k++) {
    const lineOf = steps.map(() => -1);
    let ok = true;
    for (let t = 0; t < p.length && ok; t++) {
      ok = stepFitsLine(steps[p[t]], lines[lp[k + t]].line);
      lineOf[p[t]] = lp[k + t];
      if (!ok || t + 1 === p.length) continue;
      const decodeLines = lp[k + t + 1] - lp[k + t] - 1;
      // Idle batches (DP attention) print no line: the gap's decode steps are its other steps.
      const decodeSteps = steps.slice(p[t] + 1, p[t + 1]).flatMap((s, d) => (s.kind === 'idle' ? [] : [p[t] + 1 + d]));
      if (decodeLines > decodeSteps.length) ok = false;
      else if (decodeLines === decodeSteps.length) {
        decodeSteps.forEach((j, d) => {
          ok &&= stepFitsLine(steps[j], lines[lp[k + t] + 1 + d].line);
          lineOf[j] = lp[k + t] + 1 + d;
        });
      } else if (decodeSteps.every((j) => steps[j].label)) {
        // Each decode line is one of the gap's decode steps: its running requests must be one of their batch sizes.
        const sizes = new Set(decodeSteps.map((j) => steps[j].label!.generationRequests));
        for (let i = lp[k + t] + 1; i < lp[k + t + 1] && ok; i++) ok = sizes.has(lines[i].line.runningReq ?? -1);
      }
    }
    if (ok) out.push({ mode: 'prefill-sequence', lineOf, numbers: null });
  }
  return out;
}

/**
 * Every alignment of `steps` with one scheduler's `lines` in the one way that applies: forward
 * numbers when the lines have them, every step when the log shows a line per step, else the
 * prefill sequence.
 * At most two fits are looked for: two means the log cannot say which.
 */
export function alignSglangSteps(steps: readonly SglangStep[], lines: readonly SglangLine[]): SglangFit {
  if (steps.length === 0 || lines.length === 0) return { mode: 'every-step', fits: [] };
  if (lines.every((l) => l.line.forwardIter !== null)) return { mode: 'forward-numbers', fits: byForwardNumbers(steps, lines) };
  if (everyStepLogged(lines)) return { mode: 'every-step', fits: byEveryStep(steps, lines) };
  return { mode: 'prefill-sequence', fits: byPrefillSequence(steps, lines) };
}
