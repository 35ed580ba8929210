import type { Phase } from '../iterations/phase.js';
import { OUTSIDE_LAYERS_METRIC, type PhaseLayerGate } from '../summary/layerGate.js';
import type { RunSummary } from '../summary/runSummary.js';
import type { Comparability } from './comparability.js';
import { SKETCH_POINTS, type Sketch } from '../math/sketch.js';

/** What one gated metric needs: its name, scope, base and head means and samples, and why it is off the gate (null: on). */
export interface LayerMetricInput {
  metric: string;
  scope: Phase;
  base: Sketch;
  head: Sketch;
  offGate: string | null;
}

/** The layer metrics to compare, and the notes that say what could not be (for `comparability`). */
export interface LayerMetricInputs {
  inputs: LayerMetricInput[];
  notes: string[];
}

const sourcesOf = (p: PhaseLayerGate) => Object.keys(p.sources).sort().join(', ');

/**
 * `compare --layers`: per phase both runs have, per layer index and per module kind the kernel ns per
 * step, and the ns outside any layer per step, each with both runs' per-step samples. A different
 * layer count takes the per-layer metrics off the gate (layer i is not the same layer); module kinds
 * and the time outside layers are still compared. Module kinds from markers on one side and from
 * kernel categories on the other (a marked run against an unmarked one) are off the gate too.
 */
export function layerMetricInputs(base: RunSummary, head: RunSummary, cmp: Comparability): LayerMetricInputs {
  const notes: string[] = [];
  const [bl, hl] = [base.gate.layers, head.gate.layers];
  if (cmp.basis !== 'iterations') {
    notes.push('--layers: the layer split is made per step, and the captures are compared without iterations: no per-layer metrics');
    return { inputs: [], notes };
  }
  if (!bl || !hl) {
    const without = [!bl && 'base', !hl && 'head'].filter(Boolean).join(' and ');
    notes.push(`--layers: no layer samples in the ${without} (a summary JSON keeps them only when written by \`summarize --layers\`; an export is split on the fly): no per-layer metrics`);
    return { inputs: [], notes };
  }
  const off = cmp.gateNothing ? 'off the gate: the captures are not comparable (see comparability)' : null;
  const inputs: LayerMetricInput[] = [];
  for (const p of Object.keys(bl.phases) as Phase[]) {
    const [b, h] = [bl.phases[p], hl.phases[p]];
    if (!b || !h) continue;
    let layersOff = off;
    if (b.layerCount !== h.layerCount) {
      layersOff ??= `off the gate: layer counts differ in ${p} (base ${b.layerCount}, head ${h.layerCount})`;
      notes.push(`${p}: layer counts differ (base ${b.layerCount}, head ${h.layerCount}): per-layer metrics are off the gate; module kinds and time outside layers are compared`);
    }
    let kindsOff = off;
    if (sourcesOf(b) !== sourcesOf(h)) {
      kindsOff ??= `off the gate: layers come from ${sourcesOf(b)} in base and ${sourcesOf(h)} in head`;
      notes.push(`${p}: layers come from ${sourcesOf(b)} in base and ${sourcesOf(h)} in head: module kinds (from markers or from kernel categories) are off the gate`);
    }
    const names = [...new Set([...Object.keys(b.samples), ...Object.keys(h.samples)])];
    const layerNames = names.filter((m) => m.startsWith('layer ')).sort((x, y) => layerIndex(x) - layerIndex(y));
    const moduleNames = names.filter((m) => m.startsWith('module '));
    const add = (metric: string, offGate: string | null) => inputs.push({ metric, scope: p, base: b.samples[metric] ?? zeros(b.steps), head: h.samples[metric] ?? zeros(h.steps), offGate });
    for (const m of layerNames) add(m, layersOff);
    for (const m of moduleNames) add(m, kindsOff);
    add(OUTSIDE_LAYERS_METRIC, off);
  }
  return { inputs, notes };
}

const layerIndex = (metric: string) => Number(/^layer (\d+)/.exec(metric)?.[1] ?? NaN);

/** A layer or module kind absent from every step of a phase: as many zero samples as the phase has steps. */
function zeros(n: number): Sketch {
  return { n, sum: 0, points: new Array<number>(Math.min(n, SKETCH_POINTS)).fill(0) };
}

