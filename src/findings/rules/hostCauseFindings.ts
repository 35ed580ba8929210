import type { Evidence, Finding, RuleContext } from '../finding.js';
import { causeIdleNs, formatNs, gapEvidence, makeFinding, pct, topGaps, topIterations } from './common.js';

const isGc = (c: string) => c === 'gc';
const isGil = (c: string) => c === 'gil_wait';
const isSync = (c: string) => c === 'sync';
const isLate = (c: string) => c === 'launch_late' || c.startsWith('nvtx:');

/** Whether a host cause is worth a finding: enough of the wall, or one long gap. */
function significant(ctx: RuleContext, idleNs: number, largestPartNs: number): boolean {
  const share = ctx.share(idleNs);
  return idleNs > 0 && ((share !== null && share >= ctx.t.minIdleShare) || largestPartNs >= ctx.t.minGapNs);
}

const SECTION_GAPS = 'idle';

/** GC pauses: gaps whose time is in `Python GC` ranges. Never claimed when GC was not traced. */
export function gcPauses(ctx: RuleContext): Finding[] {
  const { gaps, host } = ctx.input;
  if (!gaps.gcTraced) return [];
  const idle = causeIdleNs(ctx, isGc);
  const top = topGaps(ctx, isGc);
  if (!significant(ctx, idle, top[0]?.partNs ?? 0)) return [];
  const worst = top[0];
  const evidence: Evidence[] = top.map((x) => gapEvidence(x.gap, x.partNs, 'in Python GC'));
  evidence.push({ text: `${host.gc.collections} collections traced, ${formatNs(host.gc.totalNs)} in total, the longest ${formatNs(host.gc.longestNs)}` });
  return [
    makeFinding(ctx, {
      id: 'gc-pauses',
      title: `GC pauses: ${formatNs(idle)} of GPU idle time in Python garbage collection${worst?.gap.iter != null ? `, worst in iteration ${worst.gap.iter} (${formatNs(worst.partNs)})` : ''}`,
      recoverableNs: idle,
      restsOnNs: idle,
      estimate: 'the GPU idle time of gaps >= --min-gap spent in `Python GC` ranges, inside the iterations; freezing long-lived objects removes the long collections, so all of it is counted (an upper bound)',
      evidence,
      section: SECTION_GAPS,
      confidence: { level: 'measured', traced: ['Python GC NVTX ranges (TLLM_PROFILE_RECORD_GC=1)', 'GPU idle gaps'], notTraced: ['gaps shorter than --min-gap are not split by cause'] },
    }),
  ];
}

/** GIL contention: the executor waited for the GIL while the GPU idled; who held it. */
export function gilContention(ctx: RuleContext): Finding[] {
  const { gaps, gilHolders } = ctx.input;
  if (!gaps.gilTraced) return [];
  const idle = causeIdleNs(ctx, isGil);
  const top = topGaps(ctx, isGil);
  if (!significant(ctx, idle, top[0]?.partNs ?? 0)) return [];
  const proc = [...gilHolders].sort((a, b) => b.gapWaitNs - a.gapWaitNs)[0];
  const holder = proc?.holders[0];
  const evidence: Evidence[] = [];
  if (proc && holder) {
    for (const h of proc.holders.slice(0, ctx.t.evidenceRows)) {
      evidence.push({
        text: `thread ${h.tid}${h.name ? ` (${h.name})` : ''} held the GIL during ${pct(h.shareOfWaits)} of executor thread ${proc.executorTid}'s GIL waits (${formatNs(h.heldDuringWaitsNs)} of ${formatNs(proc.waitNs)}; ${formatNs(h.heldDuringGapWaitsNs)} of it while the GPU was idle); longest overlap ${formatNs(h.longestOverlapNs)}${h.longestOverlapStartNs !== null ? ` at ${formatNs(h.longestOverlapStartNs)}` : ''}`,
        tid: h.tid,
        ...(h.longestOverlapStartNs !== null ? { startNs: h.longestOverlapStartNs, durationNs: h.longestOverlapNs } : {}),
        valueNs: h.heldDuringWaitsNs,
      });
    }
    if (proc.unexplainedWaitNs > 0) evidence.push({ text: `${formatNs(proc.unexplainedWaitNs)} of the waits had no traced holder (between holds, or an untraced thread)`, valueNs: proc.unexplainedWaitNs });
  }
  evidence.push(...top.map((x) => gapEvidence(x.gap, x.partNs, 'waiting for the GIL')));
  evidence.push(...topIterations(ctx, isGil, 'gil_wait').slice(0, 3));
  // The holder's share of the waits inside gaps scales the idle time it explains.
  const holderShare = proc && holder && proc.gapWaitNs > 0 ? Math.min(1, holder.heldDuringGapWaitsNs / proc.gapWaitNs) : 1;
  const title = holder
    ? `GIL contention: thread ${holder.tid}${holder.name ? ` (${holder.name})` : ''} held the GIL during ${pct(holder.shareOfWaits)} of executor thread ${proc.executorTid}'s GIL waits; ${formatNs(idle)} of GPU idle time`
    : `GIL contention: ${formatNs(idle)} of GPU idle time while the executor thread waited for the GIL`;
  return [
    makeFinding(ctx, {
      id: 'gil-contention',
      title,
      recoverableNs: idle * holderShare,
      restsOnNs: idle,
      estimate: holder
        ? `gil_wait idle time in the iterations' gaps x the share of the executor's in-gap waits during which thread ${holder.tid} held the GIL (${pct(holderShare)})`
        : 'gil_wait idle time in the iterations\' gaps (no holder traced)',
      evidence,
      section: SECTION_GAPS,
      confidence: {
        level: holder ? 'measured' : 'inferred',
        traced: ['GIL Trace NVTX domain (nsys -t python-gil): Waiting for GIL / Holding GIL per thread'],
        notTraced: holder ? [] : ['no other thread\'s Holding GIL range overlaps the waits'],
      },
    }),
  ];
}

/** Host-side synchronization inside the iterations (`sync` cause: blocking CUDA API calls). */
export function hostSync(ctx: RuleContext): Finding[] {
  const { gaps } = ctx.input;
  const idle = causeIdleNs(ctx, isSync);
  const top = topGaps(ctx, isSync);
  if (!significant(ctx, idle, top[0]?.partNs ?? 0)) return [];
  const gapsWithSync = gaps.gaps.filter((g) => (g.causes.sync ?? 0) > 0 && (!gaps.iterationsFound || g.iter !== null)).length;
  const evidence: Evidence[] = [{ text: `blocking calls on the launching threads: ${gaps.syncApis.join(', ') || '(none named)'}; ${gapsWithSync} gaps contain one` }];
  evidence.push(...top.map((x) => gapEvidence(x.gap, x.partNs, 'in a blocking CUDA call')));
  return [
    makeFinding(ctx, {
      id: 'host-sync',
      title: `Host-side sync: ${formatNs(idle)} of GPU idle time while the executor blocked in ${gaps.syncApis.slice(0, 3).join(', ') || 'synchronizing calls'}`,
      recoverableNs: idle,
      restsOnNs: idle,
      estimate: 'GPU idle time of gaps >= --min-gap during blocking CUDA calls (synchronize, synchronous memcpy) of the launching threads, inside the iterations',
      evidence,
      section: SECTION_GAPS,
      confidence: { level: 'measured', traced: ['CUDA runtime API calls'], notTraced: ['implicit syncs inside libraries that do not call a blocking API'] },
    }),
  ];
}

/** Late launches and slow host steps: idle while the executor ran host code (`launch_late`, `nvtx:<range>`). */
export function lateLaunches(ctx: RuleContext): Finding[] {
  const idle = causeIdleNs(ctx, isLate);
  const top = topGaps(ctx, isLate);
  if (!significant(ctx, idle, top[0]?.partNs ?? 0)) return [];
  const byCause = new Map<string, number>();
  const g = ctx.input.gaps;
  // Ranges that carry counters (vLLM's `execute_context_4(1984)_generation_0(0)`) group as one step.
  // A cause's step is named once: each iteration lists the same few causes.
  const steps = new Map<string, string>();
  const stepName = (c: string) => {
    let step = steps.get(c);
    if (step === undefined) steps.set(c, (step = c.replace(/^nvtx:/, '').replace(/\d+/g, 'N')));
    return step;
  };
  for (const r of g.iterationsFound ? g.iterations.map((i) => i.idleByCauseNs) : [g.idleByCauseNs]) {
    // for...in (Object.entries' order): no pair arrays for each of thousands of iterations.
    for (const c in r) {
      if (!isLate(c)) continue;
      const step = stepName(c);
      byCause.set(step, (byCause.get(step) ?? 0) + r[c]);
    }
  }
  const breakdown = [...byCause].sort((a, b) => b[1] - a[1]);
  const evidence: Evidence[] = [{ text: `by host step: ${breakdown.map(([c, v]) => `${c} ${formatNs(v)}`).join(', ')}` }];
  evidence.push(...top.map((x) => gapEvidence(x.gap, x.partNs, 'launching late or in host code')));
  // Iterations whose GPU sat idle longer than it ran: the host step is the bottleneck there.
  const hostBound = (ctx.input.iterations?.iterations ?? []).filter((r) => r.gpuIdleNs > r.gpuBusyNs);
  if (hostBound.length) evidence.push({ text: `${hostBound.length} of ${ctx.input.iterations!.iterations.length} iterations have more GPU idle than busy time (host-bound)` });
  return [
    makeFinding(ctx, {
      id: 'late-launches',
      title: `Late launches and slow host steps: ${formatNs(idle)} of GPU idle time while the executor ran host code (largest: ${breakdown[0][0]})`,
      recoverableNs: idle,
      restsOnNs: idle,
      estimate: 'GPU idle time of gaps >= --min-gap attributed to launch_late or to an NVTX host range of the launching thread, inside the iterations; overlapping the host step with the GPU can hide all of it (an upper bound)',
      evidence,
      section: SECTION_GAPS,
      confidence: { level: 'measured', traced: ['CUDA runtime API calls', 'NVTX ranges of the launching threads'], notTraced: ['host work outside NVTX ranges shows as launch_late or unattributed'] },
    }),
  ];
}
