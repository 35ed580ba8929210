import { describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { analyzeExport } from '../../src/pipeline/analyzeExport.js';
import type { ExportAnalysis } from '../../src/pipeline/exportAnalysis.js';
import { parseIterationLogFile } from '../../src/logs/parse.js';
import { timelinePayload } from '../../reports/html/timelineHtml.js';
import { PAGE_SCRIPT, pageScript } from '../../reports/html/pageScript.js';
import { capturedFixture } from '../helpers/captured.js';

/**
 * Issue 57: the HTML step timeline's layer lane (`report --format html --layers`). Each drawn step
 * carries the `layers` part's spans of that step: a span per pass of a layer, and per run of
 * kernels outside layers, on the GPU it ran on; checked against the layers part's figures.
 */
const sglang = capturedFixture('layers-sglang');
const sglangLog = capturedFixture('layers-sglang', 'sglang.log');
const detailed = capturedFixture('vllm-detailed');
const detailedLog = capturedFixture('vllm-detailed', 'vllm.log');

function analyze(file: string, log: string, spans = true): ExportAnalysis {
  return withExport(file, (h) => analyzeExport(h, { parts: ['stepTimeline', 'layers'], requireIterations: true, logs: [parseIterationLogFile(log)], layers: { spans } }));
}

/** Every drawn step's lane against the layers part's step: counts, order, window, ns inside and outside layers. */
function expectLanesMatchLayers(a: ExportAnalysis): void {
  const steps = a.stepTimeline!.steps;
  expect(steps.length).toBeGreaterThan(0);
  for (const s of steps) {
    const lane = s.layers!;
    expect(lane, `iteration ${s.iter}`).toBeDefined();
    const split = a.layers!.steps.find((x) => x.iter === s.iter && x.pid === s.pid)!;
    const passes = split.layers.reduce((n, f) => n + f.passes, 0);
    const layerSpans = lane.spans.filter((x) => x.layer !== null);
    // One span per pass of each layer: as many as the layers part counts.
    expect(layerSpans.length).toBe(passes);
    expect(lane.passes).toBe(passes);
    expect(lane.layerCount).toBe(split.layers.length);
    expect(lane.source).toBe(split.source);
    for (const f of split.layers) {
      const mine = layerSpans.filter((x) => x.layer === f.layer);
      expect(mine.map((x) => x.pass)).toEqual(Array.from({ length: f.passes }, (_, k) => k + 1));
      expect(mine.reduce((n, x) => n + x.kernelNs, 0)).toBe(f.kernelNs);
      expect(mine.reduce((n, x) => n + x.kernelCount, 0)).toBe(f.kernelCount);
    }
    // Outside layers: the layers part's outside time of the step.
    const outside = lane.spans.filter((x) => x.layer === null);
    expect(outside.reduce((n, x) => n + x.kernelNs, 0)).toBe(split.outsideNs);
    expect(outside.reduce((n, x) => n + x.kernelCount, 0)).toBe(split.outsideCount);
    // In order, each inside the step: from the window's start (kernels start after their launch) to the end of its last op.
    for (let k = 0; k < lane.spans.length; k++) {
      const x = lane.spans[k];
      expect(x.startNs).toBeGreaterThanOrEqual(s.startNs);
      expect(x.endNs).toBeLessThanOrEqual(s.viewEndNs);
      expect(x.endNs).toBeGreaterThan(x.startNs);
      if (k > 0) expect(x.startNs).toBeGreaterThanOrEqual(lane.spans[k - 1].endNs);
    }
  }
}

describe('the step timeline has a layer lane with the layers part (spans asked for)', () => {
  it.skipIf(!!sglang.missing)('layers-sglang (markers): every drawn step has 8 layer spans and 2 outside on GPU 0, ns as the layers part', () => {
    const a = analyze(sglang.path, sglangLog.path);
    expect(a.stepTimeline!.steps.map((s) => s.iter)).toEqual([50, 46, 49, 44, 20, 26, 42, 33]);
    expectLanesMatchLayers(a);
    for (const s of a.stepTimeline!.steps) {
      expect(s.layers!.source).toBe('layerwise-nvtx');
      expect(s.layers!.spans.map((x) => x.layer)).toEqual([null, 0, 1, 2, 3, 4, 5, 6, 7, null]);
      expect(new Set(s.layers!.spans.map((x) => x.deviceId))).toEqual(new Set([0]));
    }
  });

  it.skipIf(!!detailed.missing)('vllm-detailed (inferred by period): a prefill step run twice has 16 passes, the note gives the fit', () => {
    const a = analyze(detailed.path, detailedLog.path);
    expectLanesMatchLayers(a);
    const slowest = a.stepTimeline!.steps[0];
    expect(slowest.iter).toBe(49);
    expect(slowest.layers!.source).toBe('period');
    expect(slowest.layers!.fit).toMatchObject({ period: 46, layers: 8, runs: 2 });
    expect(slowest.layers!.passes).toBe(16);
    // Each layer twice: passes 1 then 2, the second run after the first.
    const l3 = slowest.layers!.spans.filter((x) => x.layer === 3);
    expect(l3.map((x) => x.pass)).toEqual([1, 2]);
    // What the page gets: the same spans relative to the view's start, and the note with the fit.
    const payload = timelinePayload(a.stepTimeline!, []).steps[0];
    expect(payload.layers!.spans).toHaveLength(slowest.layers!.spans.length);
    expect(payload.layers!.spans[1]).toEqual([0, Math.round(slowest.layers!.spans[1].startNs - slowest.viewStartNs), Math.round(slowest.layers!.spans[1].endNs - slowest.viewStartNs), 0, 1, slowest.layers!.spans[1].kernelNs, slowest.layers!.spans[1].kernelCount, slowest.layers!.spans[1].kindNs]);
    expect(payload.layers!.note).toBe('8 layers, 16 passes; inferred by period (no layer marker): 46 kernels a layer, 8 layers x 2 runs, fit 98.6% of its kernels.');
    expect(payload.layers!.source).toBe('period 99%');
  });

  it.skipIf(!!sglang.missing)('without spans (every other command) the timeline has no layer lane', () => {
    const a = analyze(sglang.path, sglangLog.path, false);
    expect(a.layers!.steps.length).toBeGreaterThan(0);
    expect(a.stepTimeline!.steps.every((s) => s.layers === undefined)).toBe(true);
    expect(timelinePayload(a.stepTimeline!, []).steps.every((s) => !('layers' in s))).toBe(true);
  });
});

describe('the page script draws layer lanes only on a page that has them', () => {
  it('without layers it is PAGE_SCRIPT, with no layer code; with layers it parses and adds the lane', () => {
    expect(pageScript()).toBe(PAGE_SCRIPT);
    expect(pageScript({ layers: false })).toBe(PAGE_SCRIPT);
    expect(PAGE_SCRIPT).not.toContain('layer');
    const withLayers = pageScript({ layers: true });
    expect(() => new Function(withLayers)).not.toThrow();
    expect(withLayers).toContain('function layerLane(s, d)');
    // Only added lines: the plain script's lines are all there, in order.
    const lines = withLayers.split('\n');
    let at = 0;
    for (const line of PAGE_SCRIPT.split('\n')) {
      while (at < lines.length && lines[at] !== line) at++;
      expect(at, line).toBeLessThan(lines.length);
      at++;
    }
    expect(lines.length).toBeGreaterThan(PAGE_SCRIPT.split('\n').length);
  });
});
