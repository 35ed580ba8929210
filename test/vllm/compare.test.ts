/**
 * `compare` of a TensorRT-LLM run (pytorch-dense) and a vLLM run (vllm-dense): the engine table
 * names both engines, and its per-phase figures are recomputed here from the two runs'
 * `iterations --format json` rows.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';
import { expectedEngineFigures, iterationRows, type EngineRow } from '../helpers/engineFigures.js';

const TRT = fixture('pytorch-dense', 'trace.sqlite');
const TRT_LOG = fixture('pytorch-dense', 'iteration_log.txt');
const VLLM = fixture('vllm-dense', 'trace.sqlite');
const VLLM_LOG = fixture('vllm-dense', 'vllm.log');

describe('compare pytorch-dense (TensorRT-LLM) vs vllm-dense (vLLM)', () => {
  let trt: EngineRow[];
  let vllm: EngineRow[];
  let json: { engines: { base: { engine: string }; head: { engine: string }; scopes: { scope: string; base: Record<string, unknown> | null; head: Record<string, unknown> | null }[] } };
  let md: string;
  beforeAll(() => {
    trt = iterationRows(TRT, TRT_LOG);
    vllm = iterationRows(VLLM, VLLM_LOG);
    const args = ['compare', TRT, VLLM, '--base-log', TRT_LOG, '--head-log', VLLM_LOG];
    const j = runCli([...args, '--format', 'json']);
    // The gate may or may not fire on two different engines; the engine table is printed either way.
    expect([0, 1]).toContain(j.status);
    json = JSON.parse(j.stdout);
    md = runCli([...args, '--format', 'md']).stdout;
  });

  it('names both engines in the table and its columns', () => {
    expect(json.engines.base.engine).toBe('tensorrt-llm');
    expect(json.engines.head.engine).toBe('vllm');
    expect(md).toContain('### Engines side by side: base tensorrt-llm vs head vllm');
    expect(md).toContain('| Phase | Figure | Unit | Base (tensorrt-llm) | Head (vllm) | Head / base |');
  });

  it('per phase, every figure equals the one recomputed from the iterations JSON of each run', () => {
    const scopes = ['all', 'context', 'mixed', 'generation'];
    expect(json.engines.scopes.map((s) => s.scope)).toEqual(scopes);
    for (const s of json.engines.scopes) {
      for (const [side, rows] of [['base', trt], ['head', vllm]] as const) {
        const rs = s.scope === 'all' ? rows : rows.filter((r) => r.phase === s.scope);
        const got = s[side];
        if (rs.length === 0) {
          expect(got, `${side} ${s.scope}`).toBeNull();
          continue;
        }
        const want = expectedEngineFigures(rs);
        for (const [k, v] of Object.entries(want)) {
          if (v === null) expect(got![k], `${side} ${s.scope} ${k}`).toBeNull();
          else expect(got![k] as number, `${side} ${s.scope} ${k}`).toBeCloseTo(v, 6);
        }
      }
    }
  });

  it('prints the per-token figures rounded as computed (generation phase, both sides)', () => {
    const gen = (rows: EngineRow[]) => expectedEngineFigures(rows.filter((r) => r.phase === 'generation'));
    const line = md.split('\n').find((l) => l.startsWith('| generation | GPU ns per generated token |'))!;
    const cells = line.split('|').map((c) => c.trim());
    expect(Number(cells[4])).toBe(Math.round(gen(trt).gpuNsPerGeneratedToken! * 10) / 10);
    expect(Number(cells[5])).toBe(Math.round(gen(vllm).gpuNsPerGeneratedToken! * 10) / 10);
    const ctxLine = md.split('\n').find((l) => l.startsWith('| mixed | GPU ns per context token |'))!.split('|').map((c) => c.trim());
    const mixed = (rows: EngineRow[]) => expectedEngineFigures(rows.filter((r) => r.phase === 'mixed'));
    expect(Number(ctxLine[4])).toBe(Math.round(mixed(trt).gpuNsPerContextToken! * 10) / 10);
    expect(Number(ctxLine[5])).toBe(Math.round(mixed(vllm).gpuNsPerContextToken! * 10) / 10);
  });
});
