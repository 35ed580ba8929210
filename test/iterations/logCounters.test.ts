/**
 * Which loop a log's counter names differs across TensorRT-LLM servers and versions: the Triton
 * backend of 2023 printed `"Iteration Counter":0` for its first batch (tensorrtllm_backend issue
 * #217), gptManagerBenchmark prints K for loop K-1 (trtllm.md §1.1), and the PyTorch stats `iter`
 * named the next loop under the overlap scheduler until PR #14127. The join takes the offset at
 * which the records' batch compositions agree with the NVTX labels, and says which it used.
 *
 * The logs are the pytorch-dense run's own stats (iteration_log.txt) rewritten in each server's
 * line format: the #217 line with that loop's counts, or the stats line with `iter` moved.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { analyzeIterations } from '../../src/iterations/analyzeIterations.js';
import type { IterationAnalysis } from '../../src/iterations/types.js';
import { parseIterationLogFile, parseIterationLogText, type IterationLogRecord } from '../../src/logs/index.js';
import { counterShift } from '../../src/iterations/numbering.js';
import { fixture } from '../helpers/fixtures.js';
import { LoadedExport } from '../../src/load/loadedExport.js';

const EXPORT = fixture('pytorch-dense', 'trace.sqlite');
const STATS_FILE = fixture('pytorch-dense', 'iteration_log.txt');
const stats = parseIterationLogFile(STATS_FILE).records;

/** tensorrtllm_backend issue #217's line, with loop `r`'s counts and the counter `counter`. */
function tritonLine(r: IterationLogRecord, counter: number): string {
  return (
    `I1218 03:35:37.688135 20559 libtensorrtllm.cc:1205] {"Active Request Count":${r.activeRequests},"Context Requests":${r.contextRequests},"Free KV cache blocks":480,` +
    `"Generation Requests":${r.generationRequests},"Iteration Counter":${counter},"Max KV cache blocks":513,"Max Request Count":64,"MicroBatch ID":0,` +
    `"Runtime CPU Memory Usage":156,"Runtime GPU Memory Usage":3648012,"Runtime Pinned Memory Usage":16,"Scheduled Requests":${r.scheduledRequests},` +
    `"Timestamp":"12-18-2023 03:35:37","Tokens per KV cache block":64,"Total Context Tokens":${r.contextTokens},"Used KV cache blocks":1}`
  );
}

function analyzeWith(text: string, file: string): IterationAnalysis {
  const log = parseIterationLogText(text, file);
  return withExport(EXPORT, (h) => analyzeIterations(new LoadedExport(h), { logs: [log] }));
}

/** Every iteration that has a record: does the record describe that iteration's batch? */
function joinedAndAgreeing(a: IterationAnalysis): { joined: number; disagree: number[] } {
  const joined = a.iterations.filter((r) => r.matched);
  return { joined: joined.length, disagree: joined.filter((r) => r.labelMatchesLog === false).map((r) => r.iter) };
}

describe('the counter offset of a log, found at the join', () => {
  it('Triton 2023 (counter 0 for the first batch): K is loop K, and the note says a 0 was printed', () => {
    const a = analyzeWith(stats.map((r) => tritonLine(r, r.iter)).join('\n'), 'triton-2023.log');
    expect(joinedAndAgreeing(a)).toEqual({ joined: 120, disagree: [] });
    expect(a.coverage.notes).toContain('triton-2023.log (legacy-json): counter K read as iteration K, not K-1 as documented: the log prints a counter of 0, so it counts before the increment');
  });

  it('the same server from loop 5 on (no 0 printed): the labels find K, and the note gives the agreement on both sides', () => {
    const a = analyzeWith(stats.filter((r) => r.iter >= 5).map((r) => tritonLine(r, r.iter)).join('\n'), 'triton-2023-late.log');
    expect(joinedAndAgreeing(a)).toEqual({ joined: 115, disagree: [] });
    const note = a.coverage.notes.find((n) => n.startsWith('triton-2023-late.log'))!;
    expect(note).toMatch(/^triton-2023-late\.log \(legacy-json\): counter K read as iteration K, not K-1 as documented: the batch compositions of the NVTX labels agree with 115 of 115 records there, \d+ at K-1$/);
  });

  it('gptManagerBenchmark (counter incremented first): K-1, as documented, and said so', () => {
    const a = analyzeWith(stats.map((r) => tritonLine(r, r.iter + 1)).join('\n'), 'gptm.log');
    expect(joinedAndAgreeing(a)).toEqual({ joined: 120, disagree: [] });
    expect(a.coverage.notes).toContain('gptm.log (legacy-json): counter K read as iteration K-1, as documented; the batch compositions of the NVTX labels agree with 120 of 120 records there');
  });

  it('PyTorch stats before PR #14127 (iter stamped one loop late): K-1', () => {
    const lines = readFileSync(STATS_FILE, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => l.replace(/'iter': (\d+),/, (_, n: string) => `'iter': ${Number(n) + 1},`));
    const a = analyzeWith(lines.join('\n'), 'pre-14127.txt');
    expect(joinedAndAgreeing(a)).toEqual({ joined: 120, disagree: [] });
    expect(a.coverage.notes.find((n) => n.startsWith('pre-14127.txt'))).toMatch(/\(iteration-stats-pyrepr\): counter K read as iteration K-1, not K as documented: .* agree with 120 of 120 records there/);
  });

  it("the run's own logs keep their documented offsets", () => {
    const logs = [parseIterationLogFile(STATS_FILE), parseIterationLogFile(fixture('pytorch-dense', 'executor.log'))];
    const a = withExport(EXPORT, (h) => analyzeIterations(new LoadedExport(h), { logs }));
    expect(joinedAndAgreeing(a)).toEqual({ joined: 120, disagree: [] });
    expect(a.coverage.notes.filter((n) => /counter K read as/.test(n)).map((n) => n.replace(/^.*\((.*)\): counter K read as iteration (\S+),.*$/, '$1 $2'))).toEqual(['iteration-stats-pyrepr K', 'pytorch-text K-1']);
  });
});

describe('counterShift', () => {
  const label = (c: number, g: number) => ({ iter: null, contextRequests: c, contextTokens: null, generationRequests: g, generationTokens: null });
  const rec = (iter: number, c: number, g: number) => ({ iter, contextRequests: c, generationRequests: g });

  it('keeps the documented reading when the compositions cannot tell (steady decode: every batch alike)', () => {
    const labels = new Map([0, 1, 2, 3, 4].map((n) => [n, label(0, 8)] as const));
    expect(counterShift(labels, [1, 2, 3, 4].map((i) => rec(i, 0, 8)))).toMatchObject({ shift: 0, basis: 'documented', agree: 4, compared: 4 });
  });

  it('moves one loop when the labels agree there on more records, and on at least 80% of those compared', () => {
    const labels = new Map([0, 1, 2, 3, 4].map((n) => [n, label(n, 4)] as const));
    // Loop n's batch (n ctx reqs) printed as n-1.
    expect(counterShift(labels, [1, 2, 3, 4].map((n) => rec(n - 1, n, 4)))).toMatchObject({ shift: 1, basis: 'labels', agree: 4, compared: 4, agreeAtDefault: 0 });
  });
});
