import { PHASES } from '../iterations/phase.js';
import type { RunSummary } from '../summary/runSummary.js';
import type { GateBasis } from '../summary/gateSamples.js';

/**
 * What differs between two captures in a way that makes numbers incomparable, found before any
 * delta: each difference is a note, and the ones that invalidate metrics take them off the gate.
 */
export interface Comparability {
  /** The basis both captures have: iterations only when both have iteration samples. */
  basis: GateBasis;
  notes: string[];
  /** Nothing is gated (other GPUs, another GPU count, another engine): the deltas are information. */
  gateNothing: boolean;
  /** Kernel counts and per-kernel figures are off the gate (graph- vs node-level CUDA-graph traces). */
  gateKernelCounts: boolean;
}

const list = (xs: readonly (string | null)[]) => (xs.length ? xs.map((x) => x ?? 'unnamed').join(', ') : 'none');

function gpuNotes(base: RunSummary, head: RunSummary, out: Comparability): void {
  const b = base.capture.gpus;
  const h = head.capture.gpus;
  if (b.length !== h.length) {
    out.notes.push(`GPU count differs (base ${b.length}, head ${h.length}): nothing is gated`);
    out.gateNothing = true;
  }
  const unnamed = [b.some((g) => g == null) && 'base', h.some((g) => g == null) && 'head'].filter(Boolean);
  if (unnamed.length) out.notes.push(`no GPU names in ${unnamed.length === 2 ? 'either file' : `the ${unnamed[0]} file`}: the GPU model is not checked`);
  else if (b.length === h.length && b.some((g, i) => g !== h[i])) {
    out.notes.push(`GPU models differ (base ${list(b)}; head ${list(h)}): nothing is gated`);
    out.gateNothing = true;
  }
}

function captureNotes(base: RunSummary, head: RunSummary, out: Comparability): void {
  const b = base.capture;
  const h = head.capture;
  if (b.engine !== 'unknown' && h.engine !== 'unknown' && b.engine !== h.engine) {
    out.notes.push(`engines differ (base ${b.engine}, head ${h.engine}): an engine comparison, not a regression check; nothing is gated`);
    out.gateNothing = true;
  }
  if (b.graphTrace !== h.graphTrace) {
    out.notes.push(`CUDA-graph trace differs (base ${b.graphTrace}, head ${h.graphTrace}): kernel counts and per-kernel figures are not comparable and are off the gate`);
    out.gateKernelCounts = false;
  }
  const traced = (t: string[]) => [...t].sort().join(',');
  if (traced(b.traced) !== traced(h.traced)) out.notes.push(`traced APIs differ (base ${b.traced.join(',') || 'unknown'}; head ${h.traced.join(',') || 'unknown'}): tracing overhead differs, host-side figures may shift`);
  const trimmed = [b.opsWithoutLaunch > 0 && `base (${b.opsWithoutLaunch} GPU ops)`, h.opsWithoutLaunch > 0 && `head (${h.opsWithoutLaunch} GPU ops)`].filter(Boolean);
  if (trimmed.length) out.notes.push(`time-trimmed window in ${trimmed.join(' and ')}: GPU work without its launch call; figures are of the windows, rates per second of span are comparable, totals are not`);
  if (b.captureNs && h.captureNs && Math.max(b.captureNs, h.captureNs) > 1.5 * Math.min(b.captureNs, h.captureNs)) {
    out.notes.push(`capture lengths differ (base ${(b.captureNs / 1e9).toFixed(2)} s, head ${(h.captureNs / 1e9).toFixed(2)} s): totals are not comparable; means, rates and shares are`);
  }
}

function phaseNotes(base: RunSummary, head: RunSummary, out: Comparability): void {
  const [bp, hp] = [Object.keys(base.phases), Object.keys(head.phases)];
  if (!bp.some((p) => hp.includes(p))) out.notes.push(`no phase in common (base ${bp.join(', ') || 'none'}; head ${hp.join(', ') || 'none'}; phases need the log's counts or the markers'): nothing is gated, all phases together are shown`);
  const bt = Object.values(base.capture.phaseMix).reduce((a, x) => a + (x ?? 0), 0);
  const ht = Object.values(head.capture.phaseMix).reduce((a, x) => a + (x ?? 0), 0);
  for (const p of PHASES) {
    const bs = (base.capture.phaseMix[p] ?? 0) / (bt || 1);
    const hs = (head.capture.phaseMix[p] ?? 0) / (ht || 1);
    if (Math.abs(bs - hs) > 0.1) out.notes.push(`phase mix differs: ${p} is ${(bs * 100).toFixed(0)}% of base iterations, ${(hs * 100).toFixed(0)}% of head's; compare phase by phase (all phases together are not gated)`);
    const bb = base.capture.batch[p];
    const hb = head.capture.batch[p];
    if (bb != null && hb != null && Math.max(bb, hb) > 1.2 * Math.min(bb, hb)) out.notes.push(`mean batch in ${p} differs (base ${bb.toFixed(1)}, head ${hb.toFixed(1)} requests per iteration): that phase's per-iteration figures depend on it`);
  }
}

/** Why a side has no iterations, in its first words (the full hint is what `iterations` prints). */
function iterationNotes(base: RunSummary, head: RunSummary, out: Comparability): void {
  const why = (s: RunSummary) => s.capture.noIterations?.split(/ \(|; /)[0] ?? null;
  const [b, h] = [why(base), why(head)];
  if (b && b === h) out.notes.push(`no iterations in either capture: ${b} (\`iterscope iterations\` says how to find them)`);
  else for (const [side, w] of [['base', b], ['head', h]] as const) if (w) out.notes.push(`no iterations in ${side}: ${w} (\`iterscope iterations\` says how to find them)`);
}

/** The basis both captures have, and what differs between them that matters for the numbers. */
export function checkComparability(base: RunSummary, head: RunSummary): Comparability {
  const both = base.gate.iterations && head.gate.iterations;
  const out: Comparability = { basis: both ? 'iterations' : 'kernel instances', notes: [], gateNothing: false, gateKernelCounts: true };
  if (!both && (base.gate.iterations || head.gate.iterations)) {
    const has = base.gate.iterations ? 'base' : 'head';
    out.notes.push(`only the ${has} has iteration markers: compared on the kernel instances of the serving span; per-iteration figures cannot be compared`);
  }
  if (!both) iterationNotes(base, head, out);
  if (!both && (!base.gate.span || !head.gate.span)) out.notes.push('a capture without a serving span: nothing to compare on kernel instances');
  gpuNotes(base, head, out);
  captureNotes(base, head, out);
  if (both) phaseNotes(base, head, out);
  return out;
}
