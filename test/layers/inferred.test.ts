import BetterSqlite3 from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { analyzeExport } from '../../src/pipeline/analyzeExport.js';
import type { ExportAnalysis } from '../../src/pipeline/exportAnalysis.js';
import type { LayersAnalysis } from '../../src/layers/types.js';
import { fixture } from '../helpers/fixtures.js';

/**
 * Marker-free layers on real captures: the split inferred from the repeating kernel sequence,
 * checked against the model's own structure read straight from SQLite. The generator's decoder
 * layer (generator/llm_loop.py) starts with an RMS norm (`rms(x, n1)`) and has a second one before
 * its MLP; the model ends with a final norm: a CUDA-graph decode replay has 2 * 8 + 1 norm kernels,
 * and layer j is its kernels from norm 2j to norm 2j + 2.
 */

function analyze(file: string, source: 'auto' | 'period' = 'auto'): ExportAnalysis {
  return withExport(file, (h) => analyzeExport(h, { parts: ['iterations', 'layers'], requireIterations: true, layers: { source } }));
}

interface GraphReplay {
  callStart: number;
  /** Kernel durations and whether each is a norm, in start order. */
  durs: number[];
  norms: number[];
}

/** Every cudaGraphLaunch of the export with the kernels it ran (graph nodes share its correlation id). */
function graphReplays(file: string): GraphReplay[] {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    const rows = db
      .prepare(
        `SELECT r.start AS callStart, k."end" - k.start AS dur, s.value AS name
         FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds rn ON rn.id = r.nameId
         JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.correlationId = r.correlationId AND (k.globalPid >> 24) = (r.globalTid >> 24)
         JOIN StringIds s ON s.id = k.demangledName
         WHERE rn.value LIKE 'cudaGraphLaunch%' ORDER BY r.start, k.start`,
      )
      .all() as { callStart: number; dur: number; name: string }[];
    const out = new Map<number, GraphReplay>();
    for (const r of rows) {
      let g = out.get(r.callStart);
      if (!g) out.set(r.callStart, (g = { callStart: r.callStart, durs: [], norms: [] }));
      if (r.name.includes('layer_norm')) g.norms.push(g.durs.length);
      g.durs.push(r.dur);
    }
    return [...out.values()];
  } finally {
    db.close();
  }
}

/** Layer j's kernel ns in a replay: from norm 2j to norm 2j + 2 (17 norms: 8 layers and the final one). */
function layerNsOfReplay(g: GraphReplay): number[] {
  expect(g.norms.length).toBe(17);
  return Array.from({ length: 8 }, (_, j) => g.durs.slice(g.norms[2 * j], g.norms[2 * j + 2]).reduce((a, b) => a + b, 0));
}

describe('layers inferred from the period (pytorch-dense: CUDA graphs traced per node, 8 layers)', () => {
  const file = fixture('pytorch-dense', 'trace.sqlite');
  let a: ExportAnalysis;
  let layers: LayersAnalysis;
  beforeAll(() => {
    a = analyze(file);
    layers = a.layers!;
  });

  it('finds 8 layers in every step, with no marker', () => {
    expect(layers.sources).toEqual({ period: a.iterations!.iterations.length });
    for (const s of layers.steps) {
      expect(s.layers.map((l) => l.layer)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      expect(s.fit!.fitShare).toBeGreaterThan(0.95);
    }
    expect(layers.notes.join('\n')).toMatch(/split by inference/);
  });

  it('puts every kernel of a step in a layer or outside, as the iteration row counts them', () => {
    const rows = new Map(a.iterations!.iterations.map((r) => [r.iter, r]));
    for (const s of layers.steps) {
      const row = rows.get(s.iter)!;
      expect(s.kernelCount).toBe(row.kernelCount);
      expect(s.kernelNs).toBeCloseTo(row.kernelNs, 0);
      const inLayers = s.layers.reduce((x, l) => x + l.kernelNs, 0);
      expect(inLayers + s.outsideNs).toBeCloseTo(s.kernelNs, 0);
      expect(s.layers.reduce((x, l) => x + l.kernelCount, 0) + s.outsideCount).toBe(s.kernelCount);
    }
  });

  it("splits each decode replay where the model's norms say its layers begin (SQL on the graph's kernels)", () => {
    const replays = graphReplays(file);
    const decode = layers.steps.filter((s) => s.phase === 'generation');
    expect(decode.length).toBeGreaterThan(90);
    const rows = a.iterations!.iterations;
    let checked = 0;
    for (const s of decode) {
      const i = rows.findIndex((r) => r.iter === s.iter);
      const from = rows[i].startNs;
      const to = i + 1 < rows.length ? rows[i + 1].startNs : Infinity;
      const inStep = replays.filter((g) => g.callStart >= from && g.callStart < to);
      expect(inStep).toHaveLength(1);
      expect(s.fit!.period).toBe(inStep[0].norms[2] - inStep[0].norms[0]);
      expect(s.layers.map((l) => l.kernelNs)).toEqual(layerNsOfReplay(inStep[0]));
      checked++;
    }
    expect(checked).toBe(decode.length);
  });

  it('keeps the same split when asked to infer only (no marker to ignore here)', () => {
    const p = analyze(file, 'period').layers!;
    expect(p.steps.map((s) => s.layers.map((l) => l.kernelNs))).toEqual(layers.steps.map((s) => s.layers.map((l) => l.kernelNs)));
  });
});

describe('layers inferred from the period (pytorch-tp2 rank 0: eager, 8 layers, NCCL all-reduce)', () => {
  const file = fixture('pytorch-tp2', 'trace.rank0.sqlite');
  it('finds 8 layers per step, each with its two all-reduces (attention and MLP) as communication', () => {
    const a = analyze(file);
    const layers = a.layers!;
    // The all-reduce kernels per step, from SQL: launched (runtime call) inside the step's window.
    const db = new BetterSqlite3(file, { readonly: true });
    const nccl = db
      .prepare(
        `SELECT r.start AS callStart, k."end" - k.start AS dur FROM CUPTI_ACTIVITY_KIND_KERNEL k
         JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId AND (k.globalPid >> 24) = (r.globalTid >> 24)
         JOIN StringIds s ON s.id = k.demangledName WHERE s.value LIKE '%nccl%'`,
      )
      .all() as { callStart: number; dur: number }[];
    db.close();
    const rows = a.iterations!.iterations;
    for (const s of layers.steps) {
      expect(s.layers).toHaveLength(8);
      const i = rows.findIndex((r) => r.iter === s.iter);
      const to = i + 1 < rows.length ? rows[i + 1].startNs : Infinity;
      const inStep = nccl.filter((k) => k.callStart >= rows[i].startNs && k.callStart < to);
      // Decode steps run the 8 layers once (16 all-reduces); a mixed step also runs each prefill.
      expect(inStep.length % 16).toBe(0);
      const sql = inStep.reduce((x, k) => x + k.dur, 0);
      const inLayers = s.layers.reduce((x, l) => x + (l.kindNs.communication ?? 0), 0);
      expect(inLayers).toBeCloseTo(sql, 0);
      expect(s.outsideKindNs.communication ?? 0).toBe(0);
    }
  });
});
