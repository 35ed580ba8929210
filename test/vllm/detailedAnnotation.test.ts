/**
 * vLLM's detailed step annotation on real captures (issue #54): `vllm-detailed/` (nsys, CUDA graphs
 * traced per node) and `vllm-torch-stack/` (the PyTorch profiler's trace, the annotation as a
 * `user_annotation` span). The oracle is `truth.jsonl`, written by the serving loop from the same
 * variables the annotation is made of: every step's batch, KV tokens included.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { analyzeIterations } from '../../src/iterations/analyzeIterations.js';
import type { IterationRow } from '../../src/iterations/types.js';
import { summarizeByPhase } from '../../src/iterations/summary.js';
import { parseIterationLogFile } from '../../src/logs/index.js';
import { LoadedExport } from '../../src/load/loadedExport.js';
import { captured, CAPTURED_SKIP_REASON, hasCaptured } from '../helpers/captured.js';
import { runCli } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';

interface Truth {
  step: number;
  annotation: string;
  ctx_reqs: number;
  ctx_tokens: number;
  gen_reqs: number;
  gen_kv_tokens: number;
}

function truth(name: string): Map<number, Truth> {
  const lines = readFileSync(captured(name, 'truth.jsonl'), 'utf8').trim().split('\n');
  return new Map(lines.map((l) => JSON.parse(l) as Truth).map((t) => [t.step, t]));
}

/** What the row says of its batch, in truth.jsonl's terms. */
function batchOf(r: IterationRow) {
  return { ctx_reqs: r.contextRequests, ctx_tokens: r.contextTokens, gen_reqs: r.generationRequests, gen_kv_tokens: r.tokenDetail?.generation?.kvTokens };
}

function expectRowsMatchTruth(rows: IterationRow[], t: Map<number, Truth>, first: number, count: number): void {
  expect(rows.map((r) => r.iter)).toEqual(Array.from({ length: count }, (_, i) => first + i));
  for (const r of rows) {
    const want = t.get(r.iter)!;
    expect(r.label).toBe(want.annotation);
    expect(batchOf(r)).toEqual({ ctx_reqs: want.ctx_reqs, ctx_tokens: want.ctx_tokens, gen_reqs: want.gen_reqs, gen_kv_tokens: want.gen_kv_tokens });
    // The annotation's scheduled tokens are both phases' query tokens.
    expect(r.tokenDetail!.scheduledTokens).toBe(want.ctx_tokens + want.gen_reqs);
  }
}

describe.skipIf(!hasCaptured('vllm-detailed'))('vllm-detailed/: the detailed annotation under nsys', () => {
  const file = hasCaptured('vllm-detailed') ? captured('vllm-detailed', 'trace.sqlite') : '';
  const t = hasCaptured('vllm-detailed') ? truth('vllm-detailed') : new Map();

  it('every step of 20..59 has its batch and KV tokens, from the label alone and with the log', () => {
    const fromLabel = withExport(file, (h) => analyzeIterations(new LoadedExport(h), { selection: { firstIter: 20 } }));
    expectRowsMatchTruth(fromLabel.iterations, t, 20, 40);
    const logs = [parseIterationLogFile(captured('vllm-detailed', 'vllm.log'))];
    const withLog = withExport(file, (h) => analyzeIterations(new LoadedExport(h), { logs }));
    expectRowsMatchTruth(withLog.iterations, t, 20, 40);
    expect(withLog.coverage.labelMismatches).toEqual([]);
    expect(withLog.coverage.notes.some((n) => /form not understood/.test(n))).toBe(false);
  });

  it('attention ns per 1k KV tokens: per iteration and per phase, from the attention category and the KV tokens', () => {
    const a = withExport(file, (h) => analyzeIterations(new LoadedExport(h), { selection: { firstIter: 20 } }));
    for (const r of a.iterations) {
      const kv = (r.tokenDetail!.context?.kvTokens ?? 0) + (r.tokenDetail!.generation?.kvTokens ?? 0);
      expect(r.kvTokens).toBe(kv);
      expect(r.attentionNsPer1kKvTokens).toBeCloseTo((r.categoryNs.attention * 1000) / kv, 9);
    }
    const gen = summarizeByPhase(a.iterations, a.categories).find((p) => p.phase === 'generation')!;
    const rows = a.iterations.filter((r) => r.phase === 'generation');
    const sum = (f: (r: IterationRow) => number) => rows.reduce((s, r) => s + f(r), 0);
    expect(gen.attentionNsPer1kKvTokens).toBeCloseTo((sum((r) => r.categoryNs.attention) * 1000) / sum((r) => r.kvTokens!), 9);
  });

  it('the CSV has the detailed columns; an export without the detailed form has none of them', () => {
    const csv = runCli(['iterations', file, '--first-iter', '20', '--format', 'csv']);
    expect(csv.status).toBe(0);
    const [header, first] = csv.stdout.split('\n');
    expect(header).toContain('Ctx KV tokens,Gen KV tokens,Ctx q*q,Ctx q*kv,Gen q*q,Gen q*kv,Attention ns / 1k KV tokens');
    const cells = Object.fromEntries(header.split(',').map((h, i) => [h, first.split(',')[i]]));
    expect(Number(cells['Gen KV tokens'])).toBe(t.get(20)!.gen_kv_tokens);
    const plain = runCli(['iterations', fixture('vllm-dense', 'trace.sqlite'), '--log', fixture('vllm-dense', 'vllm.log'), '--format', 'csv']);
    expect(plain.stdout.split('\n')[0]).not.toMatch(/KV tokens|q\*q/);
  });
});

describe.skipIf(!hasCaptured('vllm-torch-stack', 'truth.jsonl'))('vllm-torch-stack/: the detailed annotation as a torch span', () => {
  it('every step of 20..39 has its batch and KV tokens (numbered by the log)', () => {
    const trace = captured('vllm-torch-stack', 'rank0.1796616322881279453.pt.trace.json.gz');
    const logs = [parseIterationLogFile(captured('vllm-torch-stack', 'vllm.log'))];
    const a = withExport(trace, (h) => analyzeIterations(new LoadedExport(h), { logs }));
    expectRowsMatchTruth(a.iterations, truth('vllm-torch-stack'), 20, 20);
  });
});

it.skipIf(hasCaptured('vllm-detailed'))(`vllm-detailed: ${CAPTURED_SKIP_REASON}`, () => {});
