import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LayersAnalysis } from '../../src/layers/types.js';
import { runCli } from '../helpers/cli.js';
import { captured, capturedFixture, hasCaptured } from '../helpers/captured.js';

interface TraceEvent {
  ph: string;
  name: string;
  cat?: string;
  tid?: number;
  args: Record<string, unknown> & { iter?: number; layer?: number | null; kernelNs?: number; pass?: number; passes?: number; kindNs?: Record<string, number> };
}

/** `trace --layers` and `layers --format json` on one export: the trace's layer slices and the layer analysis. */
function traceAndLayers(file: string, extra: string[] = []): { events: TraceEvent[]; layers: LayersAnalysis; plain: TraceEvent[]; stderr: string } {
  const dir = mkdtempSync(join(tmpdir(), 'iterscope-trace-layers-'));
  const withLayers = runCli(['trace', file, '--layers', '-o', join(dir, 'layers.json'), ...extra]);
  expect(withLayers.status, withLayers.stderr).toBe(0);
  const plain = runCli(['trace', file, '-o', join(dir, 'plain.json'), ...extra]);
  expect(plain.status).toBe(0);
  const layers = runCli(['layers', file, '--format', 'json', ...extra]);
  expect(layers.status).toBe(0);
  const read = (f: string) => (JSON.parse(readFileSync(join(dir, f), 'utf8')) as { traceEvents: TraceEvent[] }).traceEvents;
  return { events: read('layers.json'), plain: read('plain.json'), layers: JSON.parse(layers.stdout) as LayersAnalysis, stderr: withLayers.stderr };
}

/** Every layer's ns in every step, and every step's ns outside layers, from the trace slices, against `layers`. */
function expectSameNs(events: TraceEvent[], layers: LayersAnalysis): void {
  const slices = events.filter((e) => e.cat === 'layer');
  const byLayer = new Map<string, number>();
  const outside = new Map<number, number>();
  for (const e of slices) {
    const { iter, layer, kernelNs } = e.args;
    if (layer === null) outside.set(iter!, (outside.get(iter!) ?? 0) + kernelNs!);
    else byLayer.set(`${iter}:${layer}`, (byLayer.get(`${iter}:${layer}`) ?? 0) + kernelNs!);
  }
  for (const s of layers.steps) {
    for (const f of s.layers) expect(byLayer.get(`${s.iter}:${f.layer}`), `step ${s.iter} L${f.layer}`).toBe(f.kernelNs);
    expect(outside.get(s.iter) ?? 0, `step ${s.iter} outside`).toBe(s.outsideNs);
  }
  expect(byLayer.size).toBe(layers.steps.reduce((a, s) => a + s.layers.length, 0));
}

const sglang = capturedFixture('layers-sglang');
const detailed = capturedFixture('vllm-detailed');
const detailedLog = capturedFixture('vllm-detailed', 'vllm.log');

describe('trace --layers: a track per GPU with the layers of every step', () => {
  it.skipIf(!!sglang.missing)('layers-sglang (markers): 40 steps x 8 layers slices on GPU 0 layers, ns as `layers` gives them', () => {
    const { events, layers, plain, stderr } = traceAndLayers(sglang.path);
    const slices = events.filter((e) => e.cat === 'layer' && e.args.layer !== null);
    expect(slices).toHaveLength(40 * 8);
    expect(new Set(slices.map((e) => e.name))).toEqual(new Set(['L0', 'L1', 'L2', 'L3', 'L4', 'L5', 'L6', 'L7']));
    for (const e of slices) {
      expect(e.args.source).toBe('layerwise-nvtx');
      expect(e.args.passes).toBe(1);
      // The breakdown by module kind adds up to the slice.
      expect(Object.values(e.args.kindNs!).reduce((a, b) => a + b, 0)).toBe(e.args.kernelNs);
    }
    expectSameNs(events, layers);
    const tracks = events.filter((e) => e.ph === 'M' && e.name === 'thread_name').map((e) => e.args.name);
    expect(tracks).toContain('GPU 0 layers');
    expect(stderr).toMatch(/320 layer slices and \d+ outside-layer slices of 40 steps/);
    // Without the option the trace is the same less the layer track.
    expect(plain.filter((e) => e.cat === 'layer')).toEqual([]);
    expect(plain.filter((e) => e.ph !== 'M')).toEqual(events.filter((e) => e.ph !== 'M' && e.cat !== 'layer'));
  });

  it.skipIf(!!detailed.missing)('vllm-detailed (period inferred): a slice per layer pass of every step, with the fit; ns as `layers` gives them', () => {
    const { events, layers } = traceAndLayers(detailed.path, ['--log', detailedLog.path]);
    const slices = events.filter((e) => e.cat === 'layer' && e.args.layer !== null);
    expect(layers.steps).toHaveLength(40);
    // Steps x layers, a layer run twice in a step (a mixed step: prefill, then decode) twice.
    expect(slices).toHaveLength(layers.steps.reduce((a, s) => a + s.layers.reduce((b, f) => b + f.passes, 0), 0));
    for (const s of layers.steps.filter((x) => x.phase === 'generation')) {
      expect(slices.filter((e) => e.args.iter === s.iter)).toHaveLength(8);
    }
    for (const e of slices) {
      expect(e.args.source).toBe('period');
      expect((e.args.fit as { layers: number }).layers).toBe(8);
    }
    expectSameNs(events, layers);
  });

  it.skipIf(!!sglang.missing)('with --iters A-B, the layers of the steps shown only', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'iterscope-trace-layers-')), 'window.json');
    const r = runCli(['trace', sglang.path, '--layers', '--iters', '3-5', '-o', out]);
    expect(r.status).toBe(0);
    const slices = (JSON.parse(readFileSync(out, 'utf8')) as { traceEvents: TraceEvent[] }).traceEvents.filter((e) => e.cat === 'layer');
    expect([...new Set(slices.map((e) => e.args.iter))]).toEqual([3, 4, 5]);
    expect(slices.filter((e) => e.args.layer !== null)).toHaveLength(3 * 8);
  });

  it.skipIf(!hasCaptured('gate', 'plain-a/trace.sqlite'))('a capture without steps: exit 2 with the one line `iterations` gives (layers are split per step)', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'iterscope-trace-layers-')), 'none.json');
    const r = runCli(['trace', captured('gate', 'plain-a', 'trace.sqlite'), '--layers', '-o', out]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^iterscope: .*plain-a\/trace\.sqlite: no iteration ranges found/);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});
