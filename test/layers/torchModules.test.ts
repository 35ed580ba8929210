import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { analyzeExport } from '../../src/pipeline/analyzeExport.js';
import { parseIterationLogFile } from '../../src/logs/parse.js';
import { capturedFixture } from '../helpers/captured.js';

const log = capturedFixture('vllm-torch-stack', 'vllm.log');
const traceFile = capturedFixture('vllm-torch-stack', 'rank0.1796616322881279453.pt.trace.json.gz');
if (log.missing) console.log(`skipped: ${log.missing}`);

interface Ev {
  cat?: string;
  name: string;
  ts: number;
  dur: number;
  tid: number | string;
  args?: { correlation?: number };
}

/**
 * vllm-torch-stack (the PyTorch profiler with with_stack: `nn.Module: DecoderLayer_N` among the
 * Python frames; CUDA graphs; 6 layers): the one step whose prefill ran eagerly inside module
 * spans is split by them, its decode replay by the period. Both read from the JSON here, apart:
 * each DecoderLayer_N span's kernels (launch call inside the span, joined by correlation), and the
 * replay's kernels split at the model's norms (2 per layer and a final one, generator/llm_loop.py).
 */
describe.skipIf(!!log.missing)('layers from the PyTorch-profiler module spans (vllm-torch-stack)', () => {
  it('gives each layer of the marked step its module span kernels plus its part of the decode replay, as the JSON says', () => {
    const trace = traceFile.path;
    const events = (JSON.parse(gunzipSync(readFileSync(trace)).toString('utf8')) as { traceEvents: Ev[] }).traceEvents;
    const layerSpans = events.filter((e) => e.cat === 'python_function' && /^nn\.Module: DecoderLayer_\d+$/.test(e.name));
    expect(layerSpans).toHaveLength(6);
    const kernelsByCorr = new Map<number, Ev[]>();
    for (const e of events) if (e.cat === 'kernel' && e.args?.correlation != null) kernelsByCorr.set(e.args.correlation, [...(kernelsByCorr.get(e.args.correlation) ?? []), e]);
    // Launch calls: runtime and driver (cuDNN launches its kernels through the driver API).
    const runtime = events.filter((e) => e.cat === 'cuda_runtime' || e.cat === 'cuda_driver');
    const ns = (list: readonly Ev[]) => list.reduce((a, k) => a + Math.round(k.dur * 1000), 0);
    // Each layer span's kernels: launched (runtime call) inside it on its thread.
    const spanNs = layerSpans.map((s) => ns(runtime.filter((r) => r.tid === s.tid && r.ts >= s.ts && r.ts < s.ts + s.dur).flatMap((r) => kernelsByCorr.get(r.args!.correlation!) ?? [])));
    // The step (its annotation span) around the module spans, and its graph replay split at the norms.
    const step = events.find((e) => e.cat === 'user_annotation' && e.ts <= layerSpans[0].ts && layerSpans[0].ts < e.ts + e.dur)!;
    const launch = runtime.filter((r) => r.name.startsWith('cudaGraphLaunch') && r.ts >= step.ts && r.ts < step.ts + step.dur);
    expect(launch).toHaveLength(1);
    const replay = [...kernelsByCorr.get(launch[0].args!.correlation!)!].sort((a, b) => a.ts - b.ts);
    const norms = replay.flatMap((k, i) => (k.name.includes('layer_norm') ? [i] : []));
    expect(norms).toHaveLength(13);
    const replayNs = Array.from({ length: 6 }, (_, j) => ns(replay.slice(norms[2 * j], norms[2 * j + 2])));

    const a = withExport(trace, (h) => analyzeExport(h, { parts: ['iterations', 'layers'], requireIterations: true, logs: [parseIterationLogFile(log.path)] }));
    const layers = a.layers!;
    expect(layers.sources['torch-modules']).toBe(1);
    const marked = layers.steps.find((s) => s.source === 'torch-modules')!;
    expect(marked.layers.map((l) => l.passes)).toEqual([2, 2, 2, 2, 2, 2]);
    marked.layers.forEach((l, j) => {
      // ns rounded per kernel on either side: within a ns per kernel.
      expect(Math.abs(l.kernelNs - (spanNs[j] + replayNs[j]))).toBeLessThanOrEqual(l.kernelCount);
    });
    // Every other step is a decode replay, split by the period into the 6 layers.
    for (const s of layers.steps.filter((x) => x !== marked)) {
      expect(s.source).toBe('period');
      expect(s.layers).toHaveLength(6);
    }
    expect(layers.agreement!.minShareSameLayer).toBeGreaterThanOrEqual(0.95);
  });
});
