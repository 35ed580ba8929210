import type { IterationRow } from '../../iterations/types.js';
import { batchComposition, iterationLabel } from '../../iterations/naming.js';
import type { Evidence, Finding, RuleContext } from '../finding.js';
import { formatNs, makeFinding } from './common.js';

function median(v: number[]): number {
  const s = [...v].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Tokens an iteration processes: context tokens plus one per generation request. */
function tokensOf(r: IterationRow): number | null {
  if (r.contextTokens == null && r.generationRequests == null) return null;
  return (r.contextTokens ?? 0) + (r.generationRequests ?? 0);
}

/** One iteration of a phase with the GPU time its batch predicts (`expectedNs`). */
interface Scored {
  r: IterationRow;
  tokens: number;
  expectedNs: number;
}

/**
 * The GPU busy time each iteration of a phase is expected to take: the phase's median busy ns per
 * token times its tokens. With KV lengths (vLLM's detailed annotation, on every iteration of the
 * phase) attention grows with the KV tokens it reads and the rest with the tokens, so a second
 * prediction is the median non-attention busy ns per token x tokens + the median attention ns per
 * KV token x KV tokens; the larger of the two is expected. A long-context step is then not called
 * slow for the attention its KV explains, and no step is called slow that the per-token median
 * alone would not call slow.
 */
function expectedBusy(l: readonly { r: IterationRow; tokens: number }[]): { scored: Scored[]; byKv: boolean } {
  const med = median(l.map((x) => x.r.gpuBusyNs / x.tokens));
  const byKv = l.every((x) => x.r.kvTokens != null && x.r.kvTokens > 0 && x.r.categoryNs.attention !== undefined);
  if (!byKv) return { scored: l.map((x) => ({ ...x, expectedNs: med * x.tokens })), byKv };
  const attn = (r: IterationRow) => Math.min(r.categoryNs.attention ?? 0, r.gpuBusyNs);
  const restPerToken = median(l.map((x) => (x.r.gpuBusyNs - attn(x.r)) / x.tokens));
  const attnPerKv = median(l.map((x) => attn(x.r) / (x.r.kvTokens as number)));
  const scored = l.map((x) => ({ ...x, expectedNs: Math.max(med * x.tokens, restPerToken * x.tokens + attnPerKv * (x.r.kvTokens as number)) }));
  return { scored, byKv };
}

/** Iterations whose GPU busy time is far above what their phase's median predicts for their batch. */
export function phaseOutliers(ctx: RuleContext): Finding[] {
  const rows = ctx.input.iterations?.iterations ?? [];
  const byPhase = new Map<string, { r: IterationRow; tokens: number }[]>();
  for (const r of rows) {
    const tokens = tokensOf(r);
    if (!tokens || r.phase === 'unknown' || r.phase === 'empty') continue;
    const l = byPhase.get(r.phase) ?? [];
    l.push({ r, tokens });
    byPhase.set(r.phase, l);
  }
  const outliers: { r: IterationRow; perToken: number; med: number; excessNs: number }[] = [];
  let kvModel = false;
  for (const l of byPhase.values()) {
    if (l.length < 5) continue;
    const { scored, byKv } = expectedBusy(l);
    kvModel ||= byKv;
    for (const x of scored) {
      if (x.expectedNs > 0 && x.r.gpuBusyNs >= ctx.t.outlierFactor * x.expectedNs) outliers.push({ r: x.r, perToken: x.r.gpuBusyNs / x.tokens, med: x.expectedNs / x.tokens, excessNs: x.r.gpuBusyNs - x.expectedNs });
    }
  }
  if (outliers.length === 0) return [];
  return [outlierFinding(ctx, outliers, kvModel)];
}

function outlierFinding(ctx: RuleContext, outliers: { r: IterationRow; perToken: number; med: number; excessNs: number }[], kvModel: boolean): Finding {
  outliers.sort((a, b) => b.excessNs - a.excessNs || a.r.iter - b.r.iter);
  const excess = outliers.reduce((a, o) => a + o.excessNs, 0);
  const busy = outliers.reduce((a, o) => a + o.r.gpuBusyNs, 0);
  const evidence: Evidence[] = outliers.slice(0, ctx.t.evidenceRows).map((o) => ({
    text: `${o.r.captureOrder ? iterationLabel(o.r) : `iteration ${o.r.iter}`} (${o.r.phase}: ${batchComposition(o.r)}${o.r.kvTokens != null ? `, ${o.r.kvTokens} KV tokens` : ''}, ${formatNs(o.r.startNs)}..${formatNs(o.r.endNs)}): ${formatNs(o.perToken)} GPU busy per token, ${(o.perToken / o.med).toFixed(1)}x ${kvModel ? 'what its phase\'s medians predict for its tokens and KV length' : 'its phase\'s median'} ${formatNs(o.med)}`,
    iter: o.r.iter,
    startNs: o.r.startNs,
    durationNs: o.r.wallNs,
    valueNs: o.excessNs,
  }));
  return makeFinding(ctx, {
    id: 'phase-outliers',
    title: `Phase outliers: ${outliers.length} iteration(s) use at least ${ctx.t.outlierFactor}x their phase's median GPU time per token (worst: iteration ${outliers[0].r.iter})`,
    recoverableNs: excess,
    restsOnNs: busy,
    estimate: kvModel
      ? "GPU busy time above what the phase's medians predict (the larger of median ns per token x tokens and median non-attention ns per token x tokens + median attention ns per KV token x KV tokens), summed over the outlier iterations (tokens and KV tokens from the step annotation)"
      : "GPU busy time above the phase's median ns per token, summed over the outlier iterations (tokens = context tokens + generation requests, from the log or the NVTX label)",
    evidence,
    section: 'iterations',
    confidence: kvModel
      ? { level: 'measured', traced: ['GPU busy per iteration', 'batch composition per iteration', 'KV tokens per iteration'], notTraced: [] }
      : { level: 'measured', traced: ['GPU busy per iteration', 'batch composition per iteration'], notTraced: ['sequence lengths of generation requests (attention cost grows with them)'] },
  });
}
