/**
 * An eager SGLang capture (`layers-sglang/`: `--disable-cuda-graph`, log interval 1): its steps name
 * no kind and launch no graph, so a line-per-step log fits them at every offset by kind alone. The
 * steps that launched alike (decode: one sequence; prefill: another) must be batches of one kind,
 * which leaves one offset. Oracle: `truth.jsonl`, written by the serving loop for every step.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { launchShapesAgree, type SglangStep } from '../../src/iterations/sglangAlignment.js';
import { captured, CAPTURED_SKIP_REASON, hasCaptured } from '../helpers/captured.js';
import { runCli } from '../helpers/cli.js';

interface Truth { step: number; kind: 'EXTEND' | 'DECODE'; ctx_reqs: number; ctx_tokens: number; gen_reqs: number; profiled: boolean }
interface Row { iter: number; phase: string; contextRequests: number | null; contextTokens: number | null; generationRequests: number | null }

describe.skipIf(!hasCaptured('layers-sglang'))(`layers-sglang: eager steps numbered by the log ${hasCaptured('layers-sglang') ? '' : CAPTURED_SKIP_REASON}`, () => {
  it('numbers the 40 steps 20..59 and gives each the batch and phase truth.jsonl records', () => {
    const truth = readFileSync(captured('layers-sglang', 'truth.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Truth).filter((t) => t.profiled);
    const r = runCli(['iterations', captured('layers-sglang', 'trace.sqlite'), '--log', captured('layers-sglang', 'sglang.log'), '--format', 'json']);
    expect(r.status).toBe(0);
    expect(r.stderr).toContain('the only one of 51 fits where steps that launched alike are batches of one kind');
    expect(r.stderr).toContain('(confidence: medium)');
    const rows = (JSON.parse(r.stdout) as { iterations: Row[] }).iterations;
    expect(rows.map((x) => x.iter)).toEqual(truth.map((t) => t.step));
    expect(truth.filter((t) => t.kind === 'EXTEND')).toHaveLength(5);
    for (const [k, t] of truth.entries()) {
      const row = rows[k];
      expect({ iter: row.iter, phase: row.phase, ctx: row.contextRequests, ctxTokens: row.contextTokens, gen: row.generationRequests }).toEqual({
        iter: t.step,
        phase: t.kind === 'EXTEND' ? 'context' : 'generation',
        ctx: t.ctx_reqs,
        ctxTokens: t.ctx_tokens,
        gen: t.gen_reqs,
      });
    }
  });
});

describe('launchShapesAgree', () => {
  const step = (launchShape: string | null): SglangStep => ({ kind: null, label: null, launchShape });
  it('holds when each launch shape is one batch kind, and fails when one shape is both', () => {
    const steps = [step('0/373'), step('0/341'), step('0/373')];
    expect(launchShapesAgree(steps, (j) => (j === 1 ? 'prefill' : 'decode'))).toBe(true);
    expect(launchShapesAgree(steps, (j) => (j === 2 ? 'prefill' : 'decode'))).toBe(false);
  });
  it('ignores steps of known kind and steps without a shape', () => {
    const steps: SglangStep[] = [{ kind: 'decode', label: null, launchShape: '0/373' }, step(null), step('0/373')];
    expect(launchShapesAgree(steps, (j) => (j === 2 ? 'decode' : 'prefill'))).toBe(true);
  });
});
