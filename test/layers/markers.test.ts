import BetterSqlite3 from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { analyzeExport } from '../../src/pipeline/analyzeExport.js';
import type { ExportAnalysis } from '../../src/pipeline/exportAnalysis.js';
import { modulePathOf, moduleRefOf } from '../../src/layers/moduleRefs.js';
import { capturedFixture } from '../helpers/captured.js';
import { parseIterationLogFile } from '../../src/logs/parse.js';

describe('the layerwise NVTX marker text (vLLM and SGLang)', () => {
  // vLLM vllm/utils/nvtx_pytorch_hooks.py at f0183d3edde5946ea4058591f55462c2472af7b5,
  // construct_marker_dict_and_push: marker_dict["Module"] = module_name first, then
  // "TrainableParams", "Inputs" / "Outputs", tensor kwargs, "StaticParams";
  // nvtx.range_push("{}".format(marker_dict)). The forward hook pops, then pushes and pops an
  // output marker of the same module; a torch.compile'd model is wrapped in
  // layerwise_nvtx_marker_context("Torch Compiled Module (input):<Class>", ...).
  it('reads the module path, layer index and kind', () => {
    const input = "{'Module': 'model.layers.17.self_attn.qkv_proj', 'TrainableParams': {'weight': [6144, 4096]}, 'Inputs': [[7, 4096]], 'StaticParams': {'in_features': 4096, 'out_features': 6144}}";
    expect(modulePathOf(input)).toBe('model.layers.17.self_attn.qkv_proj');
    expect(moduleRefOf('model.layers.17.self_attn.qkv_proj')).toEqual({ path: 'model.layers.17.self_attn.qkv_proj', layer: 17, kind: 'attention' });
    expect(modulePathOf("{'Module': 'model.layers.3.mlp', 'Outputs': [[7, 4096]]}")).toBe('model.layers.3.mlp');
    expect(modulePathOf("{'Module': 'Torch Compiled Module (input):LlamaForCausalLM', 'Inputs': [[7]]}")).toBe('Torch Compiled Module (input):LlamaForCausalLM');
    expect(moduleRefOf('Torch Compiled Module (input):LlamaForCausalLM').layer).toBeNull();
    expect(moduleRefOf('model.layers.3.mlp.experts').kind).toBe('moe');
    expect(moduleRefOf('model.layers.3.mlp.gate').kind).toBe('moe');
    expect(moduleRefOf('model.layers.3.input_layernorm').kind).toBe('norm');
    expect(moduleRefOf('model.layers.3')).toEqual({ path: 'model.layers.3', layer: 3, kind: 'other' });
    expect(moduleRefOf('model.embed_tokens')).toEqual({ path: 'model.embed_tokens', layer: null, kind: 'embedding' });
    expect(moduleRefOf('lm_head').kind).toBe('lmHead');
    expect(modulePathOf('scheduler.run_batch')).toBeNull();
  });
});

const sglang = capturedFixture('layers-sglang');
if (sglang.missing) console.log(`skipped: ${sglang.missing}`);

/**
 * Kernel ns by (layer index, module) from SQL alone: each kernel joined to its launch call
 * (correlationId + pid), and to the SGLang module ranges (inline text) of the launching thread
 * that hold the call's start.
 */
function sqlBuckets(file: string): Record<'' | '.self_attn' | '.mlp', Map<number, number>> {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    const rows = db
      .prepare(
        `WITH m AS MATERIALIZED (SELECT globalTid, start, "end", text FROM NVTX_EVENTS WHERE text GLOB '{''Module'': ''model.layers.[0-9]*')
         SELECT m.text AS text, sum(k."end" - k.start) AS ns
         FROM CUPTI_ACTIVITY_KIND_KERNEL k
         JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId AND (k.globalPid >> 24) = (r.globalTid >> 24)
         JOIN m ON m.globalTid = r.globalTid AND m.start <= r.start AND r.start < m."end"
         GROUP BY m.text`,
      )
      .all() as { text: string; ns: number }[];
    const out = { '': new Map<number, number>(), '.self_attn': new Map<number, number>(), '.mlp': new Map<number, number>() };
    for (const r of rows) {
      const m = /^\{'Module': 'model\.layers\.(\d+)((?:\.[a-z_]+)?)'/.exec(r.text)!;
      const into = out[m[2] as keyof typeof out];
      if (into) into.set(Number(m[1]), (into.get(Number(m[1])) ?? 0) + r.ns);
    }
    return out;
  } finally {
    db.close();
  }
}

describe.skipIf(!!sglang.missing)("layers from SGLang's layerwise NVTX markers (layers-sglang: eager, 8 layers)", () => {
  let a: ExportAnalysis;
  let sql: ReturnType<typeof sqlBuckets>;
  beforeAll(() => {
    a = withExport(sglang.path, (h) => analyzeExport(h, { parts: ['iterations', 'layers'], requireIterations: true }));
    sql = sqlBuckets(sglang.path);
  });

  it('splits every step by its markers, 8 layers in each', () => {
    const layers = a.layers!;
    expect(layers.sources).toEqual({ 'layerwise-nvtx': 40 });
    for (const s of layers.steps) expect(s.layers.map((l) => l.layer)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it("gives each layer the kernel ns SQL buckets by launch inside that layer's ranges", () => {
    const ours = new Map<number, number>();
    for (const s of a.layers!.steps) for (const l of s.layers) ours.set(l.layer, (ours.get(l.layer) ?? 0) + l.kernelNs);
    expect([...sql[''].keys()].sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    for (const [layer, ns] of sql['']) expect(ours.get(layer)).toBeCloseTo(ns, 0);
  });

  it("takes module kinds from the module path: attention is the kernels of `.self_attn`, MLP those of `.mlp`", () => {
    const attn = sql['.self_attn'];
    const mlp = sql['.mlp'];
    const ours = (kind: 'attention' | 'mlp', layer: number) => a.layers!.steps.reduce((x, s) => x + (s.layers.find((l) => l.layer === layer)?.kindNs[kind] ?? 0), 0);
    for (let layer = 0; layer < 8; layer++) {
      expect(ours('attention', layer)).toBeCloseTo(attn.get(layer)!, 0);
      expect(ours('mlp', layer)).toBeCloseTo(mlp.get(layer)!, 0);
    }
  });

  it('infers, with the markers ignored, the same layer for at least 95% of every step\'s kernel time', () => {
    const agreement = a.layers!.agreement!;
    expect(agreement.steps).toBe(40);
    expect(agreement.sameLayerCount).toBe(40);
    expect(agreement.minShareSameLayer).toBeGreaterThanOrEqual(0.95);
    // The same through --layer-source period: a whole analysis without the markers.
    const p = withExport(sglang.path, (h) => analyzeExport(h, { parts: ['iterations', 'layers'], requireIterations: true, layers: { source: 'period' } })).layers!;
    expect(p.sources).toEqual({ period: 40 });
    a.layers!.steps.forEach((s, i) => {
      const q = p.steps[i];
      expect(q.iter).toBe(s.iter);
      let same = 0;
      for (const l of s.layers) same += Math.min(l.kernelNs, q.layers.find((x) => x.layer === l.layer)?.kernelNs ?? 0);
      expect(same / s.kernelNs).toBeGreaterThanOrEqual(0.95 - s.outsideNs / s.kernelNs);
      expect(q.layers).toHaveLength(8);
    });
  });
});

const detailed = capturedFixture('vllm-detailed');
if (detailed.missing) console.log(`skipped: ${detailed.missing}`);

describe.skipIf(!!detailed.missing)('layers inferred on vllm-detailed (CUDA graphs traced per node, 8 layers)', () => {
  it('finds the 8 layers the workload has in every decode step (truth.jsonl), with the fit', async () => {
    const { readFileSync } = await import('node:fs');
    const truth = readFileSync(capturedFixture('vllm-detailed', 'truth.jsonl').path, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { layers: number });
    // The log numbers the captured steps (the annotation has no step number).
    const logs = [parseIterationLogFile(capturedFixture('vllm-detailed', 'vllm.log').path)];
    const a = withExport(detailed.path, (h) => analyzeExport(h, { parts: ['iterations', 'layers'], requireIterations: true, logs }));
    const decode = a.layers!.steps.filter((s) => s.phase === 'generation');
    expect(decode.length).toBeGreaterThan(20);
    for (const s of decode) {
      expect(s.source).toBe('period');
      expect(s.layers).toHaveLength(truth[0].layers);
      expect(s.fit!.layers).toBe(8);
      expect(s.fit!.fitShare).toBeGreaterThan(0.95);
    }
  });
});
