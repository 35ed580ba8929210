import { describe, expect, it } from 'vitest';
import { phaseOutliers } from '../../src/findings/rules/phaseOutliers.js';
import { DEFAULT_THRESHOLDS, type RuleContext } from '../../src/findings/finding.js';
import type { IterationRow } from '../../src/iterations/types.js';

/**
 * Decode steps of one batch size whose attention grows with the KV tokens they read (vLLM's
 * detailed annotation): 1 us of non-attention work per token, 10 ns of attention per KV token.
 * Step 5 reads 10x the KV of the others; step 6 is slow for no reason its batch gives.
 */
function decodeStep(iter: number, kvTokens: number | null, extraNs = 0): IterationRow {
  const attention = (kvTokens ?? 2000) * 10;
  const rest = 16 * 1000 + extraNs;
  return {
    iter,
    pid: 1,
    startNs: iter * 1e6,
    endNs: iter * 1e6 + 5e5,
    wallNs: 5e5,
    gpuBusyNs: attention + rest,
    gpuIdleNs: 0,
    kernelNs: attention + rest,
    kernelCount: 10,
    categoryNs: { attention, gemm: rest },
    phase: 'generation',
    contextRequests: 0,
    contextTokens: 0,
    generationRequests: 16,
    generationTokens: 16,
    ...(kvTokens === null ? {} : { kvTokens }),
  } as unknown as IterationRow;
}

function context(rows: IterationRow[]): RuleContext {
  return {
    input: { iterations: { iterations: rows } },
    t: DEFAULT_THRESHOLDS,
    engine: 'vllm',
    wallNs: 1e9,
    share: (ns: number) => ns / 1e9,
    severity: () => 'medium',
  } as unknown as RuleContext;
}

const KV = [2000, 2100, 1900, 2050, 20000, 2000, 1950];

describe('phase outliers read against the KV length (issue #54)', () => {
  it('without KV tokens, the long-context step is called slow', () => {
    const rows = KV.map((kv, i) => decodeStep(i, null, 0)).map((r, i) => ({ ...r, gpuBusyNs: 16_000 + KV[i] * 10 }));
    const [f] = phaseOutliers(context(rows));
    expect(f.evidence.map((e) => e.iter)).toEqual([4]);
    expect(f.estimate).toMatch(/median ns per token/);
  });

  it('with KV tokens, the long-context step is explained and the slow one is not', () => {
    const rows = KV.map((kv, i) => decodeStep(i, kv, i === 6 ? 80_000 : 0));
    const [f] = phaseOutliers(context(rows));
    expect(f.evidence.map((e) => e.iter)).toEqual([6]);
    // Step 6 is expected to take the larger of the phase's median per token x 16 (2281.25 ns x 16 =
    // 36.5 us) and 1 us x 16 + 10 ns x 1950 KV tokens (35.5 us): the excess over 36.5 us.
    expect(f.evidence[0].valueNs).toBe(16_000 + 19_500 + 80_000 - 36_500);
    expect(f.evidence[0].text).toContain('1950 KV tokens');
    expect(f.estimate).toMatch(/attention ns per KV token x KV tokens/);
  });
});
