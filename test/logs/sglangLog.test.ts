/**
 * SGLang's per-batch scheduler lines (research/sglang.md §3): every historical form, each as
 * SGLang's sources print it (the PR or commit that introduced the form is named per case), the
 * fixtures' sglang.log files, and the ways a line can go wrong.
 */
import { describe, expect, it } from 'vitest';
import { parseIterationLogFile, parseIterationLogLine, parseIterationLogText } from '../../src/logs/index.js';
import { sglangLineOf } from '../../src/logs/sglangBatchLines.js';
import type { IterationLogRecord } from '../../src/logs/logRecords.js';
import { fixture, fixtureLines } from './fixtures.js';

function record(line: string): IterationLogRecord {
  const r = parseIterationLogLine(line);
  if (r.kind !== 'records') throw new Error(`not a record: ${JSON.stringify(r)}`);
  expect(r.records).toHaveLength(1);
  return r.records[0];
}

interface Expected {
  batch: 'prefill' | 'decode';
  forwardIter?: number | null;
  contextRequests: number;
  contextTokens: number;
  generationRequests: number;
  queuedRequests: number | null;
  cudaGraph?: boolean | null;
  timestamp?: string;
  rank?: number | null;
  scheduler?: string;
}

/** [source of the form, line, what it says]. */
const FORMS: [string, string, Expected][] = [
  [
    'HEAD prefill (2026-04-10 #22480: #pending-token; 2026-03-19 #20885: ends with cuda graph, input throughput)',
    '[2026-07-20 12:00:01] Prefill batch, #new-seq: 2, #new-token: 512, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0, #pending-token: 0, cuda graph: False, input throughput (token/s): 0.00',
    { batch: 'prefill', forwardIter: null, contextRequests: 2, contextTokens: 512, generationRequests: 0, queuedRequests: 0, cudaGraph: false, timestamp: '2026-07-20 12:00:01', rank: null, scheduler: '' },
  ],
  [
    'HEAD decode (2026-01-30: no trailing ", ")',
    '[2026-07-20 12:00:01] Decode batch, #running-req: 2, #token: 514, token usage: 0.00, cuda graph: True, gen throughput (token/s): 95.31, #queue-req: 0',
    { batch: 'decode', forwardIter: null, contextRequests: 0, contextTokens: 0, generationRequests: 2, queuedRequests: 0, cudaGraph: true },
  ],
  [
    'forward-iteration number, always on in v0.5.4 (2025-10-23 #9366), SGLANG_LOG_FORWARD_ITERS=1 since #12116',
    '[2025-10-26 09:10:11] Prefill batch [41], #new-seq: 1, #new-token: 768, #cached-token: 64, token usage: 0.41, #running-req: 15, #queue-req: 44, ',
    { batch: 'prefill', forwardIter: 41, contextRequests: 1, contextTokens: 768, generationRequests: 0, queuedRequests: 44 },
  ],
  [
    'forward-iteration number on a decode line with the 2025-07-06 (#6094) trailing ", "',
    '[2025-10-26 09:10:11] Decode batch [42], #running-req: 16, #token: 6118, token usage: 0.37, cuda graph: True, gen throughput (token/s): 3974.07, #queue-req: 47, ',
    { batch: 'decode', forwardIter: 42, contextRequests: 0, contextTokens: 0, generationRequests: 16, queuedRequests: 47, cudaGraph: true },
  ],
  [
    'oldest prefill with cache hit rate and the always-on TP prefix (<= 2025-03-03, @61f42b573; TP0 before #5724)',
    '[2025-01-01 12:00:00 TP0] Prefill batch. #new-seq: 1, #new-token: 512, #cached-token: 0, cache hit rate: 0.00%, token usage: 0.01, #running-req: 0, #queue-req: 0',
    { batch: 'prefill', forwardIter: null, contextRequests: 1, contextTokens: 512, generationRequests: 0, queuedRequests: 0, cudaGraph: null, scheduler: 'TP0' },
  ],
  [
    'oldest decode (<= 2025-05-12: no cuda graph field, @61f42b573)',
    '[2025-01-01 12:00:00 TP0] Decode batch. #running-req: 1, #token: 540, token usage: 0.01, gen throughput (token/s): 40.12, #queue-req: 0',
    { batch: 'decode', contextRequests: 0, contextTokens: 0, generationRequests: 1, queuedRequests: 0, cudaGraph: null },
  ],
  [
    'prefill after 2025-03-03 (#3988: cache hit rate dropped)',
    '[2025-04-01 12:00:00 TP0] Prefill batch. #new-seq: 3, #new-token: 900, #cached-token: 100, token usage: 0.05, #running-req: 2, #queue-req: 7',
    { batch: 'prefill', contextRequests: 3, contextTokens: 900, generationRequests: 0, queuedRequests: 7 },
  ],
  [
    'decode with cuda graph (2025-05-12 #6201) and the July 2025 timestamp field (#6094)',
    '[2025-07-10 08:00:00] Decode batch. #running-req: 8, #token: 4000, token usage: 0.05, cuda graph: True, gen throughput (token/s): 800.00, #queue-req: 0, timestamp: 2025-07-10T08:00:00.123456, ',
    { batch: 'decode', contextRequests: 0, contextTokens: 0, generationRequests: 8, queuedRequests: 0, cudaGraph: true },
  ],
  [
    'DP/TP/EP rank prefix and SGLANG_LOG_MS milliseconds (utils/common.py::configure_logger)',
    '[2026-07-20 12:00:01.123 DP1 TP1 EP1] Decode batch, #running-req: 4, #token: 300, token usage: 0.01, cuda graph: True, gen throughput (token/s): 10.00, #queue-req: 2',
    { batch: 'decode', contextRequests: 0, contextTokens: 0, generationRequests: 4, queuedRequests: 2, timestamp: '2026-07-20 12:00:01.123', rank: 1, scheduler: 'DP1 TP1 EP1' },
  ],
  [
    'pipeline-parallel prefix',
    '[2026-07-20 12:00:01 PP1 TP0] Prefill batch, #new-seq: 1, #new-token: 64, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0, #pending-token: 0, cuda graph: False, input throughput (token/s): 5.00',
    { batch: 'prefill', contextRequests: 1, contextTokens: 64, generationRequests: 0, queuedRequests: 0, scheduler: 'PP1 TP0' },
  ],
  [
    'Ray actor prefix (test/manual/debug_utils/test_log_parser.py)',
    '(SGLangEngine pid=35555) [2025-10-31 03:45:20 TP0] Decode batch [51341], #running-req: 128, #token: 90000, token usage: 0.70, cuda graph: True, gen throughput (token/s): 5000.00, #queue-req: 3, ',
    { batch: 'decode', forwardIter: 51341, contextRequests: 0, contextTokens: 0, generationRequests: 128, queuedRequests: 3, scheduler: 'pid 35555 TP0', timestamp: '2025-10-31 03:45:20' },
  ],
  [
    'speculative decoding insert (metrics_reporter.py: accept len, accept rate)',
    '[2026-07-20 12:00:01] Decode batch, #running-req: 8, #token: 4000, token usage: 0.05, accept len: 3.12, accept rate: 0.71, cuda graph: True, gen throughput (token/s): 800.00, #queue-req: 0',
    { batch: 'decode', contextRequests: 0, contextTokens: 0, generationRequests: 8, queuedRequests: 0, cudaGraph: true },
  ],
  [
    'PD prefill insert (#bootstrap-req, #inflight-req, #optimistic-req)',
    '[2026-07-20 12:00:01] Prefill batch, #new-seq: 2, #new-token: 1024, #cached-token: 0, token usage: 0.02, #running-req: 0, #queue-req: 1, #pending-token: 0, #bootstrap-req: 0, #inflight-req: 1, #optimistic-req: 0, cuda graph: False, input throughput (token/s): 900.00',
    { batch: 'prefill', contextRequests: 2, contextTokens: 1024, generationRequests: 0, queuedRequests: 1, cudaGraph: false },
  ],
  [
    'PD decode insert (pre-allocated usage, #prealloc-req, #transfer-req, #retracted-req)',
    '[2026-07-20 12:00:01] Decode batch, #running-req: 32, #token: 20000, token usage: 0.20, pre-allocated usage: 0.01, #prealloc-req: 2, #transfer-req: 1, #retracted-req: 0, cuda graph: True, gen throughput (token/s): 3000.00, #queue-req: 0',
    { batch: 'decode', contextRequests: 0, contextTokens: 0, generationRequests: 32, queuedRequests: 0, cudaGraph: true },
  ],
  [
    'hybrid (SWA) pool insert instead of #token',
    '[2026-07-20 12:00:01] Decode batch, #running-req: 4, #full token: 100, full token usage: 0.01, #swa token: 50, swa token usage: 0.01, cuda graph: True, gen throughput (token/s): 10.00, #queue-req: 0',
    { batch: 'decode', contextRequests: 0, contextTokens: 0, generationRequests: 4, queuedRequests: 0 },
  ],
  [
    '--enable-mfu-metrics suffix',
    '[2026-07-20 12:00:01] Decode batch, #running-req: 4, #token: 300, token usage: 0.01, cuda graph: True, gen throughput (token/s): 10.00, #queue-req: 0, est. decode TFLOPS/s (per GPU): 12.34, est. read BW (GB/s per GPU): 1234.56, est. write BW (GB/s per GPU): 12.34',
    { batch: 'decode', contextRequests: 0, contextTokens: 0, generationRequests: 4, queuedRequests: 0, cudaGraph: true },
  ],
  [
    'cpu graph label on CPU devices',
    '[2026-07-20 12:00:01] Decode batch, #running-req: 1, #token: 20, token usage: 0.00, cpu graph: False, gen throughput (token/s): 1.00, #queue-req: 0',
    { batch: 'decode', contextRequests: 0, contextTokens: 0, generationRequests: 1, queuedRequests: 0, cudaGraph: false },
  ],
];

describe('SGLang batch lines: every form', () => {
  it.each(FORMS)('%s', (_source, line, want) => {
    const r = record(line);
    expect(r.format).toBe('sglang-batch');
    expect(r).toMatchObject({ contextRequests: want.contextRequests, contextTokens: want.contextTokens, generationRequests: want.generationRequests, queuedRequests: want.queuedRequests });
    const l = sglangLineOf(r)!;
    expect(l.batch).toBe(want.batch);
    if (want.forwardIter !== undefined) expect(l.forwardIter).toBe(want.forwardIter);
    if (want.forwardIter != null) expect(r.iter).toBe(want.forwardIter);
    if (want.cudaGraph !== undefined) expect(l.cudaGraph).toBe(want.cudaGraph);
    if (want.timestamp !== undefined) expect(r.timestamp).toBe(want.timestamp);
    if (want.rank !== undefined) expect(r.rank).toBe(want.rank);
    if (want.scheduler !== undefined) expect(l.scheduler).toBe(want.scheduler);
  });

  it('a truncated line never gives a wrong count: at every cut it is skipped or says what the whole line says', () => {
    for (const [, line] of FORMS) {
      const whole = record(line);
      for (let cut = line.indexOf(' batch') + 8; cut < line.length; cut++) {
        const r = parseIterationLogLine(line.slice(0, cut));
        if (r.kind === 'skipped') continue;
        expect(r.kind, `cut at ${cut} of ${line}`).toBe('records');
        if (r.kind !== 'records') continue;
        const got = r.records[0];
        expect([got.contextRequests, got.contextTokens, got.generationRequests], `cut at ${cut} of ${line}`).toEqual([whole.contextRequests, whole.contextTokens, whole.generationRequests]);
      }
    }
  });

  it('lines that only mention a batch are not records', () => {
    for (const line of [
      '[2026-07-20 12:00:01] Prefill batch size limit reached',
      'Decode batch',
      '[2026-07-20 12:00:01] Prefill. latency: 0.01234 s, throughput:   41493.12 token/s',
      '[2026-07-20 12:00:01] Decode 0. Batch size: 16, latency: 0.00800 s, throughput:  2000.00 token/s',
    ]) {
      expect(parseIterationLogLine(line).kind, line).toBe('skipped');
    }
  });

  it('without [N], lines are numbered by position per scheduler; a line without [N] among numbered ones is skipped', () => {
    const log = parseIterationLogText(
      [
        '[2026-07-20 12:00:01 DP0] Prefill batch, #new-seq: 1, #new-token: 8, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0, #pending-token: 0, cuda graph: False, input throughput (token/s): 0.00',
        '[2026-07-20 12:00:01 DP1] Prefill batch, #new-seq: 2, #new-token: 9, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0, #pending-token: 0, cuda graph: False, input throughput (token/s): 0.00',
        'INFO some other line',
        '[2026-07-20 12:00:01 DP0] Decode batch, #running-req: 1, #token: 9, token usage: 0.00, cuda graph: True, gen throughput (token/s): 1.00, #queue-req: 0',
        '[2026-07-20 12:00:02] Decode batch [7], #running-req: 3, #token: 9, token usage: 0.00, cuda graph: True, gen throughput (token/s): 1.00, #queue-req: 0',
        '[2026-07-20 12:00:02] Decode batch, #running-req: 3, #token: 9, token usage: 0.00, cuda graph: True, gen throughput (token/s): 1.00, #queue-req: 0',
      ].join('\n'),
    );
    expect(log.records.map((r) => [sglangLineOf(r)!.scheduler, r.iter, r.line])).toEqual([
      ['DP0', 0, 1],
      ['DP1', 0, 2],
      ['DP0', 1, 4],
      ['', 7, 5],
    ]);
    expect(log.skippedLines).toBe(2);
    expect(log.skippedSamples.map((s) => s.line)).toEqual([3, 6]);
    expect(log.skippedSamples[1].reason).toMatch(/without a forward-iteration number/);
  });
});

describe.each(['sglang', 'sglang-torch'])('%s/sglang.log', (dir) => {
  const lines = fixtureLines(`${dir}/sglang.log`);
  const log = parseIterationLogFile(fixture(`${dir}/sglang.log`));

  it('one sglang-batch record per line, numbered 0..N-1 by position, nothing skipped', () => {
    expect(log.records).toHaveLength(lines.length);
    expect(log.skippedLines).toBe(0);
    expect(log.formats).toEqual({ 'sglang-batch': lines.length });
    expect(log.records.map((r) => r.iter)).toEqual(lines.map((_, i) => i));
  });

  it('every record equals a plain regex reading of its line', () => {
    log.records.forEach((r, i) => {
      const p = /^\[(\S+ \S+)\] Prefill batch, #new-seq: (\d+), #new-token: (\d+), .*#queue-req: (\d+),/.exec(lines[i]);
      const d = /^\[(\S+ \S+)\] Decode batch, #running-req: (\d+), .*#queue-req: (\d+)$/.exec(lines[i]);
      const want = p
        ? { timestamp: p[1], contextRequests: +p[2], contextTokens: +p[3], generationRequests: 0, queuedRequests: +p[4] }
        : { timestamp: d![1], contextRequests: 0, contextTokens: 0, generationRequests: +d![2], queuedRequests: +d![3] };
      expect(r, `line ${i + 1}`).toMatchObject({ ...want, line: i + 1, format: 'sglang-batch' });
    });
  });
});
