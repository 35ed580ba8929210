/** JSON / repr / legacy records built inline, and whole-text behaviour (noise, arrays, order). */
import { describe, expect, it } from 'vitest';
import {
  detectLineFormat,
  parseIterationLogLine,
  parseIterationLogText,
  recordsByIter,
  MAX_LINE_CHARS,
} from '../../src/logs/index.js';

/** A C++-executor-style IterationStats object (keys sorted, as nlohmann writes them). */
function statsJson(iter: number, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    cpuMemUsage: 3492,
    gpuMemUsage: 25330607135,
    inflightBatchingStats: {
      avgNumDecodedTokensPerIter: 0.0,
      microBatchId: 0,
      numContextRequests: 1,
      numCtxTokens: 16000 + iter,
      numGenRequests: 2,
      numPausedRequests: 3,
      numScheduledRequests: 3,
    },
    iter,
    iterLatencyMS: 2104.673455,
    kvCacheStats: { freeNumBlocks: 1745, maxNumBlocks: 7240, usedNumBlocks: 5495 },
    numActiveRequests: 1,
    numCompletedRequests: 0,
    numQueuedRequests: 7,
    staticBatchingStats: null,
    timestamp: '04-07-2025 20:33:17.747028',
    ...extra,
  });
}

const LEGACY =
  '[TensorRT-LLM][INFO] {"Active Request Count":249,"Context Requests":8,"Free KV cache blocks":0,"Generation Requests":231,"Iteration Counter":90,"Max KV cache blocks":2448,"Max Request Count":256,"MicroBatch ID":0,"Runtime CPU Memory Usage":28784,"Runtime GPU Memory Usage":540173600,"Runtime Pinned Memory Usage":0,"Scheduled Requests":239,"Timestamp":"12-13-2023 14:55:14","Tokens per KV cache block":128,"Total Context Tokens":6904,"Used KV cache blocks":2448}';

describe('per-line JSON and repr records', () => {
  it('reads a legacy line (docs example): Iteration Counter 90 → loop 89', () => {
    const result = parseIterationLogLine(LEGACY);
    expect(result.kind).toBe('records');
    if (result.kind !== 'records') return;
    expect(result.records[0]).toMatchObject({
      format: 'legacy-json',
      iter: 89,
      sourceIter: 90,
      activeRequests: 249,
      contextRequests: 8,
      contextTokens: 6904,
      generationRequests: 231,
      scheduledRequests: 239,
      kvBlocksFree: 0,
      kvBlocksUsed: 2448,
      kvBlocksMax: 2448,
      gpuMemBytes: 540173600,
      timestamp: '12-13-2023 14:55:14',
      timestampMs: new Date(2023, 11, 13, 14, 55, 14).getTime(),
    });
  });

  it('reads camelCase IterationStats JSON behind a logger prefix', () => {
    const line = `[TensorRT-LLM][INFO] ${statsJson(4)}`;
    expect(detectLineFormat(line)).toBe('iteration-stats-json');
    const result = parseIterationLogLine(line);
    if (result.kind !== 'records') throw new Error(JSON.stringify(result));
    expect(result.records[0]).toMatchObject({
      format: 'iteration-stats-json',
      iter: 4,
      sourceIter: 4,
      contextRequests: 1,
      contextTokens: 16004,
      generationRequests: 2,
      pausedRequests: 3,
      scheduledRequests: 3,
      activeRequests: 1,
      queuedRequests: 7,
      completedRequests: 0,
      kvBlocksUsed: 5495,
      kvBlocksFree: 1745,
      kvBlocksMax: 7240,
      latencyMs: 2104.673455,
      hostStepTimeMs: null,
      gpuMemBytes: 25330607135,
      timestampMs: new Date(2025, 3, 7, 20, 33, 17, 747).getTime() + 0.028,
    });
  });

  it('falls back to staticBatchingStats and reads generation tokens from it', () => {
    const line = statsJson(2, {
      inflightBatchingStats: null,
      staticBatchingStats: { numScheduledRequests: 4, numContextRequests: 4, numCtxTokens: 99, numGenTokens: 12, emptyGenSlots: 0 },
    });
    const result = parseIterationLogLine(line);
    if (result.kind !== 'records') throw new Error(JSON.stringify(result));
    expect(result.records[0]).toMatchObject({ contextRequests: 4, contextTokens: 99, generationTokens: 12, generationRequests: null });
  });

  it('reads a Python-repr dict with None, True, nested dicts and nan', () => {
    const line =
      "{'cpuMemUsage': 0, 'inflightBatchingStats': {'numContextRequests': 2, 'numCtxTokens': 10, 'numGenRequests': 1, 'numPausedRequests': 0, 'numScheduledRequests': 3}, 'iter': 12, 'iterLatencyMS': nan, 'specDecodingStats': None, 'timestamp': '01-02-2026 03:04:05.000001', 'attentionDpRank': 0, 'hostStepTimeMS': 3.1, 'prevDeviceStepTimeMS': None, 'kvCacheIterationStats': {'4096': {'iterReusedBlocks': 0}}, 'flag': True, 'rank': 1}";
    expect(detectLineFormat(line)).toBe('iteration-stats-pyrepr');
    const result = parseIterationLogLine(line);
    if (result.kind !== 'records') throw new Error(JSON.stringify(result));
    expect(result.records[0]).toMatchObject({
      format: 'iteration-stats-pyrepr',
      iter: 12,
      contextRequests: 2,
      generationRequests: 1,
      latencyMs: null, // nan is not a latency
      hostStepTimeMs: 3.1,
      prevDeviceStepTimeMs: null,
      rank: 1,
      timestampMs: new Date(2026, 0, 2, 3, 4, 5).getTime() + 0.001,
    });
    expect(result.records[0].raw.kvCacheIterationStats).toEqual({ '4096': { iterReusedBlocks: 0 } });
  });

  it('reads a one-line JSON array (a /metrics response in a log) as several records', () => {
    const result = parseIterationLogLine(`[TensorRT-LLM][INFO] [${statsJson(0)},${statsJson(1)}]`, 3);
    if (result.kind !== 'records') throw new Error(JSON.stringify(result));
    expect(result.records.map((r) => [r.iter, r.line])).toEqual([
      [0, 3],
      [1, 3],
    ]);
  });

  it('skips truncated JSON and repr lines with a reason', () => {
    const full = statsJson(1);
    const cutJson = `[TensorRT-LLM][INFO] ${full.slice(0, full.indexOf('"iter":1,') + 20)}`;
    const cutRepr = "{'cpuMemUsage': 0, 'iter': 3, 'inflightBatchingStats': {'numContextRequests': 2";
    expect(parseIterationLogLine(cutJson)).toEqual({ kind: 'skipped', reason: expect.stringMatching(/^invalid JSON/) });
    expect(parseIterationLogLine(cutRepr)).toEqual({ kind: 'skipped', reason: expect.stringMatching(/^invalid Python literal/) });
    expect(parseIterationLogLine(LEGACY.slice(0, -30)).kind).toBe('skipped');
  });

  it('skips records whose iteration number is unusable', () => {
    expect(parseIterationLogLine(statsJson(0, { iter: -1 })).kind).toBe('skipped');
    expect(parseIterationLogLine(statsJson(0, { iter: 'x' })).kind).toBe('skipped');
    // A counter of 0 is a number, not unusable: kept (issue 31), on loop -1 until the join finds the log's offset.
    const zero = parseIterationLogLine(LEGACY.replace('"Iteration Counter":90', '"Iteration Counter":0'));
    expect(zero.kind === 'records' && zero.records.map((r) => [r.iter, r.sourceIter])).toEqual([[-1, 0]]);
  });
});

describe('whole logs', () => {
  it('counts logger noise, garbage and truncated lines as skipped, blank lines as nothing', () => {
    const text = [
      '[11/20/2026-23:07:42] [TRT-LLM] [I] Starting executor loop',
      statsJson(0),
      '',
      'Traceback (most recent call last): {not json}',
      '   ',
      statsJson(1),
      statsJson(2).slice(0, -50),
    ].join('\n');
    const log = parseIterationLogText(text, 'mixed.log');
    expect(log.file).toBe('mixed.log');
    expect(log.records.map((r) => [r.iter, r.line])).toEqual([
      [0, 2],
      [1, 6],
    ]);
    expect(log.linesRead).toBe(7);
    expect(log.skippedLines).toBe(3);
    expect(log.skippedSamples.map((s) => s.line)).toEqual([1, 4, 7]);
    expect(log.formats).toEqual({ 'iteration-stats-json': 2 });
  });

  it('keeps at most 20 skipped samples but counts all', () => {
    const log = parseIterationLogText(Array.from({ length: 45 }, (_, i) => `noise ${i}`).join('\n') + '\n');
    expect(log.linesRead).toBe(45);
    expect(log.skippedLines).toBe(45);
    expect(log.skippedSamples).toHaveLength(20);
    expect(log.records).toEqual([]);
  });

  it('reads a pretty-printed JSON array file with element line numbers', () => {
    const array = [JSON.parse(statsJson(154)), { unrelated: true }, JSON.parse(statsJson(155))];
    const text = JSON.stringify(array, null, 2);
    const log = parseIterationLogText(`  ${text}\n`, 'metrics.json');
    expect(log.records.map((r) => r.iter)).toEqual([154, 155]);
    const lines = `  ${text}`.split('\n');
    for (const r of log.records) expect(lines[r.line - 1]).toMatch(/^ {2}\{$/);
    expect(lines[log.records[1].line]).toContain('"cpuMemUsage"');
    expect(log.skippedLines).toBe(1);
    expect(log.skippedSamples[0].reason).toContain('array element 1');
    expect(log.linesRead).toBe(lines.length);
  });

  it('treats an empty JSON array and empty text as zero records, not an error', () => {
    expect(parseIterationLogText('[]').records).toEqual([]);
    const empty = parseIterationLogText('');
    expect([empty.records.length, empty.linesRead, empty.skippedLines]).toEqual([0, 0, 0]);
  });

  it('does not mistake a log starting with `[` for a JSON array', () => {
    const log = parseIterationLogText(`${LEGACY}\n${LEGACY.replace(':90,', ':91,')}\n`);
    expect(log.records.map((r) => r.iter)).toEqual([89, 90]);
  });

  it('skips binary bytes and over-long lines without failing', () => {
    const long = 'x'.repeat(MAX_LINE_CHARS + 1);
    const text = [statsJson(0), 'PK\u0003\u0004\u0000\u0000\uFFFD\uFFFD', long, statsJson(1)].join('\n');
    const log = parseIterationLogText(text);
    expect(log.records.map((r) => r.iter)).toEqual([0, 1]);
    expect(log.skippedSamples).toEqual([
      { line: 2, reason: 'binary data or invalid UTF-8' },
      { line: 3, reason: expect.stringContaining('longer than') },
    ]);
  });

  it('keeps duplicate and out-of-order iterations in file order, reports duplicates, map keeps the last', () => {
    const text = [statsJson(5), statsJson(3), statsJson(4), statsJson(3, { numQueuedRequests: 99 }), statsJson(5), statsJson(1)].join('\n');
    const log = parseIterationLogText(text);
    expect(log.records.map((r) => r.iter)).toEqual([5, 3, 4, 3, 5, 1]);
    expect(log.duplicateIters).toEqual([3, 5]);
    const byIter = recordsByIter(log);
    expect([...byIter.keys()]).toEqual([1, 3, 4, 5]);
    expect(byIter.get(3)).toMatchObject({ line: 4, queuedRequests: 99 });
    expect(byIter.get(5)!.line).toBe(5);
  });

  it('merges several logs: first non-null wins, later logs fill nulls, timestamps move as a pair', () => {
    const a = parseIterationLogText(statsJson(0, { numQueuedRequests: null, timestamp: 'garbled' }), 'a');
    const b = parseIterationLogText(
      "iter = 1, global_rank = 3, num_scheduled_requests = 9, host_step_time = 1ms, timestamp = 2026-01-01 00:00:00, states = {'num_ctx_requests': 7, 'num_ctx_tokens': 5, 'num_generation_tokens': 2}",
      'b',
    );
    const m = recordsByIter([a, b]).get(0)!;
    expect(m).toMatchObject({
      file: 'a',
      format: 'iteration-stats-json',
      contextRequests: 1, // conflict: a wins
      scheduledRequests: 3,
      generationTokens: 2, // only b
      queuedRequests: null, // neither
      hostStepTimeMs: 1,
      rank: 3,
      timestamp: '2026-01-01 00:00:00',
      timestampMs: new Date(2026, 0, 1).getTime(),
    });
    expect(m.sources.map((s) => s.file)).toEqual(['a', 'b']);
    expect(m.raw).toBe(a.records[0].raw);
  });
});
