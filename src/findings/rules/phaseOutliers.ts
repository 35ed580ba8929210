import type { IterationRow } from '../../iterations/analyzeIterations.js';
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

/** Iterations whose GPU busy ns per token is far above their phase's median. */
export function phaseOutliers(ctx: RuleContext): Finding[] {
  const rows = ctx.input.iterations?.iterations ?? [];
  const byPhase = new Map<string, { r: IterationRow; perToken: number; tokens: number }[]>();
  for (const r of rows) {
    const tokens = tokensOf(r);
    if (!tokens || r.phase === 'unknown' || r.phase === 'empty') continue;
    const l = byPhase.get(r.phase) ?? [];
    l.push({ r, perToken: r.gpuBusyNs / tokens, tokens });
    byPhase.set(r.phase, l);
  }
  const outliers: { r: IterationRow; perToken: number; med: number; excessNs: number }[] = [];
  for (const l of byPhase.values()) {
    if (l.length < 5) continue;
    const med = median(l.map((x) => x.perToken));
    for (const x of l) if (med > 0 && x.perToken >= ctx.t.outlierFactor * med) outliers.push({ r: x.r, perToken: x.perToken, med, excessNs: x.r.gpuBusyNs - med * x.tokens });
  }
  if (outliers.length === 0) return [];
  outliers.sort((a, b) => b.excessNs - a.excessNs || a.r.iter - b.r.iter);
  const excess = outliers.reduce((a, o) => a + o.excessNs, 0);
  const busy = outliers.reduce((a, o) => a + o.r.gpuBusyNs, 0);
  const evidence: Evidence[] = outliers.slice(0, ctx.t.evidenceRows).map((o) => ({
    text: `${o.r.captureOrder ? iterationLabel(o.r) : `iteration ${o.r.iter}`} (${o.r.phase}: ${batchComposition(o.r)}, ${formatNs(o.r.startNs)}..${formatNs(o.r.endNs)}): ${formatNs(o.perToken)} GPU busy per token, ${(o.perToken / o.med).toFixed(1)}x its phase's median ${formatNs(o.med)}`,
    iter: o.r.iter,
    startNs: o.r.startNs,
    durationNs: o.r.wallNs,
    valueNs: o.excessNs,
  }));
  return [
    makeFinding(ctx, {
      id: 'phase-outliers',
      title: `Phase outliers: ${outliers.length} iteration(s) use at least ${ctx.t.outlierFactor}x their phase's median GPU time per token (worst: iteration ${outliers[0].r.iter})`,
      recoverableNs: excess,
      restsOnNs: busy,
      estimate: "GPU busy time above the phase's median ns per token, summed over the outlier iterations (tokens = context tokens + generation requests, from the log or the NVTX label)",
      evidence,
      section: 'iterations',
      confidence: { level: 'measured', traced: ['GPU busy per iteration', 'batch composition per iteration'], notTraced: ['sequence lengths of generation requests (attention cost grows with them)'] },
    }),
  ];
}
