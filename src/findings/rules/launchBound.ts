import type { Evidence, Finding, RuleContext } from '../finding.js';
import { formatCount, formatNs, makeFinding, pct } from './common.js';

/**
 * Launch-bound execution: many idle gaps shorter than --min-gap between kernels (the GPU waits
 * for each launch) and much of the kernel time in short kernels.
 */
export function launchBound(ctx: RuleContext): Finding[] {
  const { gaps, kernels, info } = ctx.input;
  const its = gaps.iterations;
  const fragNs = gaps.iterationsFound ? its.reduce((a, i) => a + i.fragmentedIdleNs, 0) : gaps.devices.reduce((a, d) => a + d.fragmentedIdleNs, 0);
  const fragGaps = gaps.iterationsFound ? its.reduce((a, i) => a + i.fragmentedGaps, 0) : gaps.devices.reduce((a, d) => a + d.fragmentedGaps, 0);
  let shortNs = 0;
  let shortCount = 0;
  let kernelNs = 0;
  for (const k of kernels.rows) {
    kernelNs += k.total;
    if (k.avg < ctx.t.shortKernelNs) {
      shortNs += k.total;
      shortCount += k.count;
    }
  }
  const shortShare = kernelNs > 0 ? shortNs / kernelNs : 0;
  const fragShare = ctx.share(fragNs) ?? 0;
  if (fragNs <= 0 || (fragShare < ctx.t.fragmentedIdleShare && shortShare < ctx.t.shortKernelShare)) return [];
  const evidence: Evidence[] = [
    { text: `${formatCount(fragGaps)} idle gaps shorter than ${formatNs(gaps.minGapNs)} add up to ${formatNs(fragNs)} (${pct(fragShare)} of the iterations' wall; threshold ${pct(ctx.t.fragmentedIdleShare)})`, valueNs: fragNs },
    { text: `${pct(shortShare)} of kernel time (${formatNs(shortNs)}, ${formatCount(shortCount)} launches) is in kernels averaging under ${formatNs(ctx.t.shortKernelNs)} (threshold ${pct(ctx.t.shortKernelShare)})`, valueNs: shortNs },
    { text: `CUDA-graph trace: ${info.graphTraceMode}${info.graphTraceModeConfigured ? ` (configured ${info.graphTraceModeConfigured})` : ''}` },
  ];
  // With CUDA graphs already replayed, the short gaps sit between eager kernels and replays.
  const graphLaunches = (ctx.input.iterations?.iterations ?? []).reduce((a, r) => a + r.graphLaunches, 0);
  if (graphLaunches > 0) evidence.push({ text: `${formatCount(graphLaunches)} CUDA-graph launches in the iterations: graphs are on, so the short gaps are in the eager parts and between replays (widen the captured region and batch sizes)` });
  for (const d of gaps.devices) evidence.push({ text: `device ${d.deviceId}: busy ${pct(d.spanNs > 0 ? d.busyNs / d.spanNs : 0)} of its span; ${formatCount(d.fragmentedGaps)} short gaps, ${formatNs(d.fragmentedIdleNs)}`, deviceId: d.deviceId, valueNs: d.fragmentedIdleNs });
  const worst = [...its].sort((a, b) => b.fragmentedIdleNs - a.fragmentedIdleNs || a.iter - b.iter).slice(0, ctx.t.evidenceRows);
  for (const it of worst) evidence.push({ text: `iteration ${it.iter} (${it.phase}): ${it.fragmentedGaps} short gaps, ${formatNs(it.fragmentedIdleNs)}`, iter: it.iter, startNs: it.startNs, durationNs: it.endNs - it.startNs, valueNs: it.fragmentedIdleNs });
  return [
    makeFinding(ctx, {
      id: 'launch-bound',
      title: `Launch-bound: ${formatNs(fragNs)} of GPU idle time in ${formatCount(fragGaps)} gaps shorter than ${formatNs(gaps.minGapNs)} between kernels`,
      recoverableNs: fragNs,
      restsOnNs: fragNs,
      estimate: 'the idle time of gaps shorter than --min-gap inside the iterations: CUDA graphs replay the launches back to back, so most of it can go (an upper bound)',
      evidence,
      section: 'idle',
      confidence: { level: 'measured', traced: ['every GPU op (busy/idle union per device)'], notTraced: ['short gaps are not split by host cause'] },
    }),
  ];
}
