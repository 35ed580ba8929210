/**
 * Parsing the real fixture logs. Expected numbers were read from the files with grep/head
 * (commands quoted next to them) and, where cheap, are re-derived from the file text here.
 */
import { describe, expect, it } from 'vitest';
import { parseIterationLogFile, recordsByIter } from '../../src/logs/index.js';
import { fixture, fixtureLines } from './fixtures.js';

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('pytorch-dense/iteration_log.txt (trtllm-bench --iteration_log, Python reprs)', () => {
  const log = parseIterationLogFile(fixture('pytorch-dense/iteration_log.txt'));

  it('yields one record per line, iter 0..119, all pyrepr', () => {
    // wc -l → 120; grep -c "^{'" → 120
    expect(log.linesRead).toBe(120);
    expect(log.records).toHaveLength(120);
    expect(log.skippedLines).toBe(0);
    expect(log.formats).toEqual({ 'iteration-stats-pyrepr': 120 });
    expect(log.records.map((r) => r.iter)).toEqual(range(0, 119));
    expect(log.records.every((r) => r.iter === r.sourceIter)).toBe(true);
    expect(log.duplicateIters).toEqual([]);
  });

  it('normalizes record 0 as written in line 1', () => {
    // head -1: 'numContextRequests': 4, 'numCtxTokens': 1984, 'numGenRequests': 0, 'numScheduledRequests': 4,
    // 'iterLatencyMS': 302.80752899999896, usedNumBlocks 66, freeNumBlocks 446, maxNumBlocks 512,
    // numActiveRequests 4, numQueuedRequests 36, gpuMemUsage 2272133120, prevDeviceStepTimeMS None
    const r = log.records[0];
    expect(r).toMatchObject({
      iter: 0,
      line: 1,
      format: 'iteration-stats-pyrepr',
      contextRequests: 4,
      contextTokens: 1984,
      generationRequests: 0,
      scheduledRequests: 4,
      pausedRequests: 0,
      activeRequests: 4,
      queuedRequests: 36,
      completedRequests: 0,
      kvBlocksUsed: 66,
      kvBlocksFree: 446,
      kvBlocksMax: 512,
      latencyMs: 302.80752899999896,
      hostStepTimeMs: 302.80752899999896,
      prevDeviceStepTimeMs: null,
      gpuMemBytes: 2272133120,
      timestamp: '11-20-2026 23:07:42.002542',
    });
    expect(r.timestampMs).toBeCloseTo(new Date(2026, 10, 20, 23, 7, 42, 2).getTime() + 0.542, 3);
    expect(r.raw.schedulerMode).toBe('non_overlap');
    expect(r.raw.specDecodingStats).toBeNull();
  });
});

describe('pytorch-dense/executor.log (PyTorch text log)', () => {
  const path = 'pytorch-dense/executor.log';
  const log = parseIterationLogFile(fixture(path));
  const lines = fixtureLines(path);

  it('has a record for every `iter = ` line and skips the rest', () => {
    // grep -c 'iter = [0-9]*, global_rank' → 119 of 120 lines; the other is "Starting executor loop"
    const recordLines = lines.filter((l) => /iter = \d+, global_rank/.test(l)).length;
    expect(recordLines).toBe(119);
    expect(log.records).toHaveLength(recordLines);
    expect(log.skippedLines).toBe(lines.length - recordLines);
    expect(log.skippedSamples).toEqual([{ line: 1, reason: 'not an iteration record' }]);
    expect(log.formats).toEqual({ 'pytorch-text': 119 });
  });

  it('maps `iter = K` to loop K-1', () => {
    expect(log.records.map((r) => r.sourceIter)).toEqual(range(1, 119));
    expect(log.records.map((r) => r.iter)).toEqual(range(0, 118));
  });

  it('reads loop 0 from the `iter = 1` line', () => {
    // line 2: num_scheduled_requests = 4, host_step_time = 302.808ms, prev_device_step_time = 272.527ms,
    // timestamp = 2026-11-20 23:07:42, states = {'num_ctx_requests': 4, 'num_ctx_tokens': 1984, 'num_generation_tokens': 0}
    const r = log.records[0];
    expect(r).toMatchObject({
      iter: 0,
      sourceIter: 1,
      line: 2,
      contextRequests: 4,
      contextTokens: 1984,
      generationTokens: 0,
      generationRequests: 0,
      scheduledRequests: 4,
      hostStepTimeMs: 302.808,
      prevDeviceStepTimeMs: 272.527,
      latencyMs: null,
      rank: 0,
      timestamp: '2026-11-20 23:07:42',
      timestampMs: new Date(2026, 10, 20, 23, 7, 42).getTime(),
    });
    expect(r.raw.kv_cache_util).toBe('0.250');
    expect(r.raw.states).toEqual({ num_ctx_requests: 4, num_ctx_tokens: 1984, num_generation_tokens: 0 });
  });
});

describe('merging pytorch-dense iteration_log.txt with executor.log', () => {
  const stats = parseIterationLogFile(fixture('pytorch-dense/iteration_log.txt'));
  const text = parseIterationLogFile(fixture('pytorch-dense/executor.log'));
  const statsByIter = recordsByIter(stats);
  const textByIter = recordsByIter(text);
  const merged = recordsByIter([stats, text]);

  it('the two logs agree on the batch of every loop they share', () => {
    const shared = [...textByIter.keys()].filter((i) => statsByIter.has(i));
    expect(shared).toEqual(range(0, 118));
    for (const iter of shared) {
      const s = statsByIter.get(iter)!;
      const t = textByIter.get(iter)!;
      expect([iter, t.contextRequests, t.contextTokens, t.scheduledRequests]).toEqual([
        iter,
        s.contextRequests,
        s.contextTokens,
        s.scheduledRequests,
      ]);
      // derived gen requests (scheduled - ctx) and greedy gen tokens both equal numGenRequests
      expect([iter, t.generationRequests, t.generationTokens]).toEqual([iter, s.generationRequests, s.generationRequests]);
      // host_step_time is iterLatencyMS rounded to 3 decimals by the text log
      expect(Math.abs(t.hostStepTimeMs! - s.hostStepTimeMs!)).toBeLessThanOrEqual(0.0005 + 1e-9);
    }
  });

  it('combines both field sets into one record per loop', () => {
    expect([...merged.keys()]).toEqual(range(0, 119));
    const m0 = merged.get(0)!;
    expect(m0.sources.map((s) => s.format)).toEqual(['iteration-stats-pyrepr', 'pytorch-text']);
    expect(m0.format).toBe('iteration-stats-pyrepr');
    expect(m0.queuedRequests).toBe(36); // only in the stats dict
    expect(m0.rank).toBe(0); // only in the text line (global_rank)
    expect(m0.prevDeviceStepTimeMs).toBe(272.527); // stats has None here, text fills it
    expect(m0.hostStepTimeMs).toBe(302.80752899999896); // first log wins where both have a value
    expect(m0.timestamp).toBe('11-20-2026 23:07:42.002542');
    expect(merged.get(119)!.sources).toHaveLength(1); // loop 119 is reported only by the stats log
  });
});

describe('cpp-legacy-windows/executor.log (legacy gptManagerBenchmark)', () => {
  const path = 'cpp-legacy-windows/executor.log';
  const log = parseIterationLogFile(fixture(path));
  const lines = fixtureLines(path);

  it('reads every "Iteration Counter" line as legacy-json with iter = K-1', () => {
    const counters = lines.flatMap((l) => {
      const m = /"Iteration Counter":(\d+)/.exec(l);
      return m ? [Number(m[1])] : [];
    });
    expect(counters).toHaveLength(80); // grep -c '"Iteration Counter":' → 80
    expect(log.formats).toEqual({ 'legacy-json': counters.length });
    expect(log.records.map((r) => r.sourceIter)).toEqual(counters);
    expect(log.records.map((r) => r.iter)).toEqual(counters.map((k) => k - 1));
    expect(log.skippedLines).toBe(lines.length - counters.length);
  });

  it('maps "Iteration Counter":21 to loop 20', () => {
    // grep '"Iteration Counter":21,': Active 16, Context 0, Free 312, Generation 16, Max 512,
    // GPU mem 2288910336, Scheduled 16, Timestamp "11-20-2026 23:09:10", Total Context Tokens 0, Used 200
    const r = log.records.find((x) => x.sourceIter === 21)!;
    expect(r).toMatchObject({
      iter: 20,
      format: 'legacy-json',
      activeRequests: 16,
      contextRequests: 0,
      contextTokens: 0,
      generationRequests: 16,
      scheduledRequests: 16,
      kvBlocksUsed: 200,
      kvBlocksFree: 312,
      kvBlocksMax: 512,
      gpuMemBytes: 2288910336,
      latencyMs: null,
      timestamp: '11-20-2026 23:09:10',
      timestampMs: new Date(2026, 10, 20, 23, 9, 10).getTime(),
    });
    expect(r.raw['MicroBatch ID']).toBe(0);
  });

  it('covers the captured loops 20 and 40..45', () => {
    const byIter = recordsByIter(log);
    for (const loop of [20, 40, 41, 42, 43, 44, 45]) expect(byIter.has(loop)).toBe(true);
  });
});

describe('pytorch-moe-window logs (profile window 100-150)', () => {
  const stats = parseIterationLogFile(fixture('pytorch-moe-window/iteration_log.txt'));
  const text = parseIterationLogFile(fixture('pytorch-moe-window/executor.log'));

  it('cover loops 0..149 together', () => {
    expect(stats.records.map((r) => r.iter)).toEqual(range(0, 149));
    // `iter = 1..149` → loops 0..148; the loop-149 line would print at the start of loop 150
    expect(text.records.map((r) => r.iter)).toEqual(range(0, 148));
    expect([...recordsByIter([stats, text]).keys()]).toEqual(range(0, 149));
  });

  it('skips exactly the non-record lines of executor.log', () => {
    // 151 lines: "Starting executor loop" and "Profiling started at iteration 100." are not records
    expect(text.linesRead).toBe(151);
    expect(text.skippedLines).toBe(2);
    expect(text.skippedSamples.map((s) => s.line)).toEqual([1, 102]);
    expect(fixtureLines('pytorch-moe-window/executor.log')[101]).toContain('Profiling started at iteration 100.');
  });
});

describe('pytorch-tp2 per-rank logs', () => {
  it('parse the same loop range on both ranks', () => {
    for (const rank of [0, 1]) {
      const stats = parseIterationLogFile(fixture(`pytorch-tp2/iteration_log.rank${rank}.txt`));
      const text = parseIterationLogFile(fixture(`pytorch-tp2/executor.rank${rank}.log`));
      expect(stats.records.map((r) => r.iter)).toEqual(range(0, 69));
      expect(text.records.map((r) => r.iter)).toEqual(range(0, 68));
      expect(text.skippedLines).toBe(2);
    }
  });
});
