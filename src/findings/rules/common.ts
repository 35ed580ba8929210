import { formatCount, formatNs } from '../../formatNs.js';
import type { GapRow } from '../../gaps/analyzeGaps.js';
import { REMEDIES } from '../remedies.js';
import type { Evidence, Finding, RuleContext } from '../finding.js';

export { formatCount, formatNs };

/** `12.3%` of a 0..1 share. */
export const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

/**
 * Idle time of one host cause (or of the causes `match` accepts) inside the iteration windows, or
 * in every reported gap when the export has no iterations: what a host-cause finding rests on.
 */
export function causeIdleNs(ctx: RuleContext, match: (cause: string) => boolean): number {
  const g = ctx.input.gaps;
  const recs = g.iterationsFound ? g.iterations.map((i) => i.idleByCauseNs) : [g.idleByCauseNs];
  let ns = 0;
  for (const r of recs) for (const c in r) if (match(c)) ns += r[c];
  return ns;
}

/** The part of a gap that `match` accepts. */
export function gapPartNs(g: GapRow, match: (cause: string) => boolean): number {
  let ns = 0;
  // for...in (same order as Object.entries): no pair arrays on every gap of a long capture.
  for (const c in g.causes) if (match(c)) ns += g.causes[c];
  return ns;
}

/** Gaps (inside iterations when there are any) with the most time of the matched causes. */
export function topGaps(ctx: RuleContext, match: (cause: string) => boolean): { gap: GapRow; partNs: number }[] {
  const g = ctx.input.gaps;
  const k = Math.trunc(ctx.t.evidenceRows);
  // The first k of a stable sort (most time, then earliest), kept while scanning: a long capture has
  // ~100k gaps, and four rules ask for a handful of them each.
  const top: { gap: GapRow; partNs: number }[] = [];
  if (k <= 0) return top;
  const before = (a: { gap: GapRow; partNs: number }, b: { gap: GapRow; partNs: number }) => b.partNs - a.partNs || a.gap.startNs - b.gap.startNs;
  for (const gap of g.gaps) {
    if (g.iterationsFound && gap.iter === null) continue;
    const partNs = gapPartNs(gap, match);
    if (!(partNs > 0)) continue;
    const x = { gap, partNs };
    if (top.length === k && before(top[k - 1], x) <= 0) continue;
    // After every kept row that sorts before it or level with it (those came first).
    let at = top.length;
    while (at > 0 && before(top[at - 1], x) > 0) at--;
    top.splice(at, 0, x);
    if (top.length > k) top.pop();
  }
  return top;
}

/** One gap as evidence: where it is, how long, how much of it the finding counts. */
export function gapEvidence(gap: GapRow, partNs: number, label: string): Evidence {
  const where = gap.iter !== null ? `iteration ${gap.iter}` : 'outside the iterations';
  return {
    text: `${where}: ${formatNs(gap.durationNs)} GPU idle gap at ${formatNs(gap.startNs)} on device ${gap.deviceId}, ${formatNs(partNs)} of it ${label}${gap.launchCall ? ` (ended by ${gap.launchCall.name})` : ''}`,
    ...(gap.iter !== null ? { iter: gap.iter } : {}),
    deviceId: gap.deviceId,
    startNs: gap.startNs,
    durationNs: gap.durationNs,
    valueNs: partNs,
  };
}

/** Iterations with the most idle time of the matched causes. */
export function topIterations(ctx: RuleContext, match: (cause: string) => boolean, label: string): Evidence[] {
  return ctx.input.gaps.iterations
    .map((it) => ({ it, ns: Object.entries(it.idleByCauseNs).reduce((a, [c, v]) => a + (match(c) ? v : 0), 0) }))
    .filter((x) => x.ns > 0)
    .sort((a, b) => b.ns - a.ns || a.it.iter - b.it.iter)
    .slice(0, ctx.t.evidenceRows)
    .map(({ it, ns }) => ({
      text: `iteration ${it.iter} (${it.phase}, ${formatNs(it.startNs)}..${formatNs(it.endNs)}): ${formatNs(ns)} idle in ${label}`,
      iter: it.iter,
      startNs: it.startNs,
      durationNs: it.endNs - it.startNs,
      valueNs: ns,
    }));
}

/** Assembles a finding: clamps the estimate to what it rests on, fills share, severity and remedy. */
export function makeFinding(
  ctx: Pick<RuleContext, 'engine' | 'share' | 'severity'>,
  f: Omit<Finding, 'recoverableShare' | 'severity' | 'remedy'> & { severity?: Finding['severity']; remedy?: string },
): Finding {
  // Whole ns, never more than what the finding rests on.
  const recoverableNs = Math.min(Math.round(Math.max(0, f.recoverableNs)), Math.floor(f.restsOnNs));
  const remedy = f.remedy ?? REMEDIES[f.id]?.[ctx.engine] ?? REMEDIES[f.id]?.unknown ?? '';
  return { ...f, recoverableNs, recoverableShare: ctx.share(recoverableNs), severity: f.severity ?? ctx.severity(recoverableNs), remedy };
}
