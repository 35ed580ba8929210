import type { MoeRoutingReading } from '../moeRoutingReading.js';
import type { Evidence, Finding, RuleContext } from '../finding.js';
import { formatNs, makeFinding, pct } from './common.js';

/**
 * Stragglers and collective wait across ranks (one export per rank): the rank the others waited
 * for in the most collective time, from the cross-rank view.
 */
export function stragglers(ctx: RuleContext): Finding[] {
  const view = ctx.input.crossRank;
  if (!view || view.ranks.length < 2 || view.iterations.length === 0) return [];
  // The time the ranks lose per iteration is the longest wait of any rank in it.
  const caused = new Map<number, { ns: number; iters: number[] }>();
  let totalWait = 0;
  for (const it of view.iterations) {
    totalWait += it.maxCollectiveWaitNs;
    const c = caused.get(it.straggler) ?? { ns: 0, iters: [] };
    c.ns += it.maxCollectiveWaitNs;
    c.iters.push(it.iter);
    caused.set(it.straggler, c);
  }
  const share = ctx.share(totalWait);
  if (totalWait <= 0 || (share !== null && share < ctx.t.collectiveWaitShare)) return [];
  const [rank, worst] = [...caused].sort((a, b) => b[1].ns - a[1].ns || a[0] - b[0])[0];
  const basis = [...new Set(view.iterations.map((i) => i.stragglerBasis))].join(', ');
  const evidence: Evidence[] = [];
  for (const r of view.ranks) {
    const c = caused.get(r.rank);
    evidence.push({
      text: `rank ${r.rank} (${r.file}): straggler in ${r.stragglerIterations} of ${view.iterations.length} iterations, the others waited ${formatNs(c?.ns ?? 0)} for it; it waited ${formatNs(r.totalCollectiveWaitNs)} itself`,
      rank: r.rank,
      valueNs: c?.ns ?? 0,
    });
  }
  const top = view.iterations.filter((i) => i.straggler === rank).sort((a, b) => b.maxCollectiveWaitNs - a.maxCollectiveWaitNs || a.iter - b.iter).slice(0, ctx.t.evidenceRows);
  for (const it of top) {
    const lag = it.ranks.find((c) => c.rank === rank)?.arrivalLagNs;
    evidence.push({ text: `iteration ${it.iter}: the other ranks waited up to ${formatNs(it.maxCollectiveWaitNs)} in collectives for rank ${rank}${lag != null ? ` (it arrived ${formatNs(lag)} late, summed over ${it.collectives ?? 0} collectives)` : ''}`, iter: it.iter, rank, valueNs: it.maxCollectiveWaitNs });
  }
  return [
    makeFinding(ctx, {
      id: 'stragglers',
      title: `Straggler: rank ${rank} made the other ranks wait ${formatNs(worst.ns)} in collectives (straggler in ${worst.iters.length} of ${view.iterations.length} iterations)`,
      recoverableNs: worst.ns,
      restsOnNs: totalWait,
      estimate: `per iteration the longest collective wait of any rank, summed over the iterations where rank ${rank} was the straggler (found by ${basis}); the collective wait of all iterations is ${formatNs(totalWait)}${share !== null ? ` (${pct(share)} of the wall)` : ''}`,
      evidence,
      section: 'ranks',
      confidence: {
        level: view.iterations.every((i) => i.stragglerBasis === 'arrival') ? 'measured' : 'inferred',
        traced: [`one export per rank (${view.ranks.length} ranks), clocks aligned by ${view.clock.basis}`],
        notTraced: view.iterationsNotOnAllRanks.length ? [`${view.iterationsNotOnAllRanks.length} iterations are not on every rank`] : [],
      },
    }),
  ];
}

/** MoE routing imbalance: TensorRT-LLM's perfect-router reading (> 10% faster = routing matters). */
export function moeRouting(ctx: RuleContext, reading: MoeRoutingReading): Finding[] {
  const n = ctx.input.iterations?.iterations.length ?? 0;
  const saved = Math.max(0, reading.baseGpuBusyNs - reading.headGpuBusyNs) * n;
  if (!(reading.speedup > ctx.t.moeSpeedup)) return [];
  return [
    makeFinding(ctx, {
      id: 'moe-routing',
      title: `MoE routing imbalance: the perfect router is ${pct(reading.speedup)} faster per iteration (threshold ${pct(ctx.t.moeSpeedup)})`,
      recoverableNs: saved,
      restsOnNs: reading.baseGpuBusyNs * n,
      estimate: 'GPU busy per iteration of the normal run minus that of the perfect-router run, times the iterations of this run',
      evidence: [
        { text: `GPU busy per iteration: ${formatNs(reading.baseGpuBusyNs)} normal, ${formatNs(reading.headGpuBusyNs)} with ENABLE_PERFECT_ROUTER=1` },
        { text: `MoE kernel time per iteration: ${formatNs(reading.baseMoeNs)} normal, ${formatNs(reading.headMoeNs)} perfect router` },
        { text: reading.reading },
      ],
      section: 'categories',
      confidence: { level: 'measured', traced: ['two runs of the same workload, one with the perfect router'], notTraced: ['per-expert token counts'] },
    }),
  ];
}
