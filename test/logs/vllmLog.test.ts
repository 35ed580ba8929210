/** vLLM's iteration-details log: the fixtures' vllm.log files and the ways a line can go wrong. */
import { describe, expect, it } from 'vitest';
import { parseIterationLogFile, parseIterationLogLine, parseIterationLogText, recordsByIter } from '../../src/logs/index.js';
import { fixture, fixtureLines } from './fixtures.js';

/** An independent reading of one line: split on the known phrases. */
function oracle(line: string) {
  const m = /\(EngineCore_DP(\d+) pid=(\d+)\) INFO (\S+ \S+) \[core\.py:\d+\] Iteration\((\d+)\): (\d+) context requests, (\d+) context tokens, (\d+) generation requests, (\d+) generation tokens, iteration elapsed time: ([\d.]+) ms$/.exec(line)!;
  return { rank: +m[1], timestamp: m[3], iter: +m[4], contextRequests: +m[5], contextTokens: +m[6], generationRequests: +m[7], generationTokens: +m[8], latencyMs: +m[9] };
}

describe.each(['vllm-dense', 'fieldguide-vllm'])('%s/vllm.log', (dir) => {
  const lines = fixtureLines(`${dir}/vllm.log`);
  const log = parseIterationLogFile(fixture(`${dir}/vllm.log`));

  it('yields one vllm-iteration-details record per line, Iteration(0)..(N-1), nothing skipped', () => {
    expect(log.records).toHaveLength(lines.length);
    expect(log.skippedLines).toBe(0);
    expect(log.formats).toEqual({ 'vllm-iteration-details': lines.length });
    expect(log.records.map((r) => r.iter)).toEqual(lines.map((_, i) => i));
  });

  it('every record equals an independent reading of its line (counts, elapsed ms, DP rank, time text)', () => {
    log.records.forEach((r, i) => {
      expect(r).toMatchObject({ ...oracle(lines[i]), sourceIter: r.iter, line: i + 1, timestampMs: null });
    });
  });
});

describe('vLLM lines that are not whole records', () => {
  const LINE =
    '(EngineCore_DP1 pid=638) INFO 11-23 06:19:01 [core.py:349] Iteration(515): 0 context requests, 0 context tokens, 20 generation requests, 20 generation tokens, iteration elapsed time: 10.99 ms';

  it('reads the DP rank from the EngineCore_DPk prefix', () => {
    const r = parseIterationLogLine(LINE);
    expect(r.kind === 'records' && r.records[0]).toMatchObject({ iter: 515, rank: 1, generationRequests: 20, generationTokens: 20, latencyMs: 10.99 });
  });

  it('a truncated line is skipped with a reason, at every cut after Iteration(N):', () => {
    const start = LINE.indexOf('Iteration(');
    for (let cut = start + 'Iteration(515):'.length; cut < LINE.length; cut++) {
      const r = parseIterationLogLine(LINE.slice(0, cut));
      expect(r.kind, `cut at ${cut}`).toBe('skipped');
      if (r.kind === 'skipped') expect(r.reason).toMatch(/vLLM iteration line/);
    }
  });

  it('a whole log with a truncated last line, other formats and noise: counted, reported, never thrown', () => {
    const text = [
      '(APIServer pid=600) INFO 11-23 06:18:50 [api_server.py:1] Starting vLLM API server',
      LINE.replace('515', '0'),
      '[TensorRT-LLM][INFO] {"Active Request Count":8,"Context Requests":4,"Generation Requests":4,"Iteration Counter":2}',
      'garbage \u0000 bytes',
      LINE.replace('515', '1').slice(0, 120),
    ].join('\n');
    const log = parseIterationLogText(text);
    expect(log.records.map((r) => [r.format, r.iter])).toEqual([
      ['vllm-iteration-details', 0],
      ['legacy-json', 1],
    ]);
    expect(log.skippedLines).toBe(3);
    expect(log.skippedSamples.map((s) => s.line)).toEqual([1, 4, 5]);
    expect(log.skippedSamples[2].reason).toMatch(/truncated vLLM iteration line/);
    expect(recordsByIter(log).size).toBe(2);
  });
});
