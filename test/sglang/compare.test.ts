/**
 * `compare`'s engine table with SGLang on one side: SGLang (sglang/) vs vLLM (vllm-dense/) and
 * TensorRT-LLM (pytorch-dense/) vs SGLang, every figure recomputed here from each run's
 * `iterations --format json` rows; with a sparse SGLang log, no per-token figure from partial counts.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';
import { expectedEngineFigures, iterationRows, type EngineRow } from '../helpers/engineFigures.js';

const RUNS = {
  sglang: { file: fixture('sglang', 'trace.sqlite'), log: fixture('sglang', 'sglang.log') },
  vllm: { file: fixture('vllm-dense', 'trace.sqlite'), log: fixture('vllm-dense', 'vllm.log') },
  'tensorrt-llm': { file: fixture('pytorch-dense', 'trace.sqlite'), log: fixture('pytorch-dense', 'iteration_log.txt') },
};

interface Comparison {
  engines: { base: { engine: string }; head: { engine: string }; scopes: { scope: string; base: Record<string, number | null> | null; head: Record<string, number | null> | null }[] };
}

function compare(base: { file: string; log: string }, head: { file: string; log: string }): Comparison {
  const r = runCli(['compare', base.file, head.file, '--base-log', base.log, '--head-log', head.log, '--format', 'json']);
  expect([0, 1]).toContain(r.status);
  return JSON.parse(r.stdout) as Comparison;
}

function expectFigures(json: Comparison, sides: { base: EngineRow[]; head: EngineRow[] }) {
  for (const s of json.engines.scopes) {
    for (const side of ['base', 'head'] as const) {
      const rs = s.scope === 'all' ? sides[side] : sides[side].filter((r) => r.phase === s.scope);
      const got = s[side];
      if (rs.length === 0) {
        expect(got, `${side} ${s.scope}`).toBeNull();
        continue;
      }
      for (const [k, v] of Object.entries(expectedEngineFigures(rs))) {
        if (v === null) expect(got![k], `${side} ${s.scope} ${k}`).toBeNull();
        else expect(got![k] as number, `${side} ${s.scope} ${k}`).toBeCloseTo(v, 6);
      }
    }
  }
}

describe('compare with SGLang: per context token and per generated token', () => {
  const rows: Record<string, EngineRow[]> = {};
  beforeAll(() => {
    for (const [engine, run] of Object.entries(RUNS)) rows[engine] = iterationRows(run.file, run.log);
  });

  it('SGLang vs vLLM: both engines named, every figure per phase recomputed from the rows', () => {
    const json = compare(RUNS.sglang, RUNS.vllm);
    expect([json.engines.base.engine, json.engines.head.engine]).toEqual(['sglang', 'vllm']);
    expect(json.engines.scopes.map((s) => s.scope)).toEqual(['all', 'context', 'mixed', 'generation']);
    expectFigures(json, { base: rows.sglang, head: rows.vllm });
    const ctx = json.engines.scopes.find((s) => s.scope === 'context')!.base!;
    expect(ctx.gpuNsPerContextToken).toBeGreaterThan(0);
    expect(json.engines.scopes.find((s) => s.scope === 'generation')!.base!.gpuNsPerGeneratedToken).toBeGreaterThan(0);
  });

  it('TensorRT-LLM vs SGLang: the same, the other way round', () => {
    const json = compare(RUNS['tensorrt-llm'], RUNS.sglang);
    expect([json.engines.base.engine, json.engines.head.engine]).toEqual(['tensorrt-llm', 'sglang']);
    expectFigures(json, { base: rows['tensorrt-llm'], head: rows.sglang });
  });

  it('a sparse SGLang log (a decode line every 40 steps, with [N]): no per-token figure from partial counts', () => {
    const dir = mkdtempSync(join(tmpdir(), 'iterscope-sglang-compare-'));
    let decodes = 0;
    const sparse = readFileSync(RUNS.sglang.log, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l, step) => l.replace(/(Prefill|Decode) batch,/, `$1 batch [${step}],`))
      .filter((l) => !l.includes('Decode batch') || ++decodes % 40 === 0);
    const log = join(dir, 'sparse.log');
    writeFileSync(log, sparse.join('\n'));
    const json = compare({ file: RUNS.sglang.file, log }, RUNS.vllm);
    const sparseRows = iterationRows(RUNS.sglang.file, log);
    // Prefill steps all have their line; only some decode steps do.
    expect(sparseRows.filter((r) => r.phase === 'generation').some((r) => r.generationRequests === null)).toBe(true);
    expect(sparseRows.filter((r) => r.phase === 'generation').some((r) => r.generationRequests !== null)).toBe(true);
    expectFigures(json, { base: sparseRows, head: rows.vllm });
    const scope = (name: string) => json.engines.scopes.find((s) => s.scope === name)!.base!;
    expect(scope('context').gpuNsPerContextToken).toBeGreaterThan(0);
    expect(scope('generation').gpuNsPerGeneratedToken).toBeNull();
    expect(scope('all').gpuNsPerGeneratedToken).toBeNull();
  });
});
