import type { LayersAnalysis, ModuleKind, PhaseLayers, StepLayers } from '../../layers/types.js';
import type { Evidence, Finding, RuleContext } from '../finding.js';
import { formatNs, makeFinding } from './common.js';

// Their evidence is in the `layers` tables (`iterscope layers`, `iterations --layers`); the report
// has no layer section, so the findings point at its iterations section.

/** Time outside every layer from this share of a phase's kernel time is a finding. */
const OUTSIDE_SHARE = 0.25;
/** Attention's share of a step's kernel time growing by this much (points) from the shortest to the longest KV quartile. */
const ATTENTION_GROWTH = 0.1;

/** The findings of the layer split, when it ran (`layers` part): an outlier layer, time outside layers, attention growing with KV. */
export function layerFindings(ctx: RuleContext, layers: LayersAnalysis | null | undefined): Finding[] {
  if (!layers || layers.steps.length === 0) return [];
  return [...outlierLayers(ctx, layers), ...outsideLayers(ctx, layers), ...attentionWithKv(ctx, layers)];
}

function median(v: readonly number[]): number {
  if (!v.length) return 0;
  const s = [...v].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * Layers whose time per step is far above the median layer's (`PhaseLayers.outliers`): in an MoE
 * model, tokens routed unevenly load one layer's experts (routing imbalance); the excess over the
 * median in the steps where the layer was over the bar is what evening it out could recover.
 */
function outlierLayers(ctx: RuleContext, layers: LayersAnalysis): Finding[] {
  const hits = layers.phases.flatMap((p) => p.outliers.map((o) => ({ p, o })));
  if (hits.length === 0) return [];
  const byIter = new Map(layers.steps.map((s) => [s.iter, s]));
  let excess = 0;
  let restsOn = 0;
  const evidence: Evidence[] = [];
  for (const { p, o } of hits) {
    for (const iter of o.steps) {
      const s = byIter.get(iter)!;
      const f = s.layers.find((l) => l.layer === o.layer)!;
      const med = median(s.layers.map((l) => l.kernelNs));
      excess += Math.max(0, f.kernelNs - med);
      restsOn += f.kernelNs;
    }
    const why = mostlyKind(p, o.layer, 'moe') ? ' (mostly MoE kernels: routing imbalance)' : mostlyKind(p, o.layer, 'communication') ? ' (mostly collectives: waiting for another rank)' : '';
    evidence.push({
      text: `${p.phase}: layer ${o.layer} takes ${formatNs(o.meanNs)} per step, ${o.overMedian.toFixed(2)}x the median layer ${formatNs(p.medianLayerNs)}${why}; steps ${o.steps.join(', ')}`,
      valueNs: o.meanNs - p.medianLayerNs,
    });
  }
  return [
    makeFinding(ctx, {
      id: 'layer-outlier',
      title: `Layer outlier: ${hits.map((h) => `layer ${h.o.layer} (${h.p.phase}, ${h.o.overMedian.toFixed(1)}x the median layer)`).slice(0, 3).join(', ')}`,
      recoverableNs: excess,
      restsOnNs: restsOn,
      estimate: "the outlier layer's kernel time above its step's median layer, summed over the steps where it was over the bar",
      evidence: evidence.slice(0, ctx.t.evidenceRows),
      section: 'iterations',
      confidence: layers.sources.period
        ? { level: 'inferred', traced: ['kernel time per step'], notTraced: ['layer boundaries (inferred from the repeating kernel sequence)'] }
        : { level: 'measured', traced: ['kernel time per step', 'layer module markers'], notTraced: [] },
    }),
  ];
}

/** Whether kernels of `kind` are most of `layer`'s time in the phase. */
function mostlyKind(p: PhaseLayers, layer: number, kind: ModuleKind): boolean {
  const l = p.layers.find((x) => x.layer === layer);
  return !!l && (l.kindNs[kind] ?? 0) > 0.5 * l.meanNs;
}

/** Phases where a large share of the kernel time runs outside every layer (embedding, LM head, sampling, copies around them). */
function outsideLayers(ctx: RuleContext, layers: LayersAnalysis): Finding[] {
  const phases = layers.phases.filter((p) => p.outsideShare >= OUTSIDE_SHARE && p.layerCount > 0);
  if (phases.length === 0) return [];
  const steps = layers.steps.filter((s) => phases.some((p) => p.phase === s.phase));
  const outside = steps.reduce((a, s) => a + s.outsideNs, 0);
  return [
    makeFinding(ctx, {
      id: 'outside-layers',
      title: `Time outside the decoder layers: ${phases.map((p) => `${(p.outsideShare * 100).toFixed(0)}% of ${p.phase} kernel time`).join(', ')}`,
      // What is outside the layers is not waste by itself: nothing is counted as recoverable.
      recoverableNs: 0,
      restsOnNs: outside,
      severity: 'info',
      estimate: 'not estimated: the kernels outside the layers (embedding, final norm, LM head, sampling) are named, not judged',
      evidence: phases.map((p) => ({ text: `${p.phase}: ${formatNs(p.meanOutsideNs)} of ${formatNs(p.meanStepKernelNs)} kernel time per step outside any layer (${p.steps} steps)`, valueNs: p.meanOutsideNs })),
      section: 'iterations',
      confidence: { level: layers.sources.period ? 'inferred' : 'measured', traced: ['kernel time per step'], notTraced: [] },
    }),
  ];
}

/** Generation steps with KV lengths: attention's share of the step's kernel time, shortest vs longest KV quartile. */
function attentionWithKv(ctx: RuleContext, layers: LayersAnalysis): Finding[] {
  const steps = layers.steps.filter((s): s is StepLayers & { kvTokens: number } => s.phase === 'generation' && s.kvTokens != null && s.kvTokens > 0 && s.kernelNs > 0);
  if (steps.length < 8) return [];
  steps.sort((a, b) => a.kvTokens - b.kvTokens);
  const q = Math.floor(steps.length / 4);
  const share = (l: readonly StepLayers[]) => l.reduce((a, s) => a + (s.kindNs.attention ?? 0), 0) / l.reduce((a, s) => a + s.kernelNs, 0);
  const low = steps.slice(0, q);
  const high = steps.slice(-q);
  const growth = share(high) - share(low);
  if (growth < ATTENTION_GROWTH) return [];
  const attn = high.reduce((a, s) => a + (s.kindNs.attention ?? 0), 0);
  return [
    makeFinding(ctx, {
      id: 'attention-kv-growth',
      title: `Attention grows with KV length: ${(share(low) * 100).toFixed(0)}% of decode kernel time at ${low[0].kvTokens}..${low[low.length - 1].kvTokens} KV tokens, ${(share(high) * 100).toFixed(0)}% at ${high[0].kvTokens}..${high[high.length - 1].kvTokens}`,
      recoverableNs: 0,
      restsOnNs: attn,
      severity: 'info',
      estimate: "not estimated: attention reading more KV is expected; the finding says how much of the step it has become",
      evidence: [low, high].map((l) => ({ text: `steps ${l.map((s) => s.iter).slice(0, 10).join(', ')}${l.length > 10 ? ', ...' : ''}: attention ${(share(l) * 100).toFixed(1)}% of kernel time`, valueNs: l.reduce((a, s) => a + (s.kindNs.attention ?? 0), 0) / l.length })),
      section: 'iterations',
      confidence: { level: 'measured', traced: ['KV tokens per step', 'attention kernel time per step'], notTraced: [] },
    }),
  ];
}
