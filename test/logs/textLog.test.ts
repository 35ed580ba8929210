/**
 * The PyTorch text log in its v1/v2/v3 variants (format strings from trtllm.md §1.4) and with
 * the logger prefixes seen in the wild.
 */
import { describe, expect, it } from 'vitest';
import { detectLineFormat, parseIterationLogLine, parseIterationLogText } from '../../src/logs/index.js';
import { onlyRecord } from './fixtures.js';

const only = (line: string) => onlyRecord(line, 7, 'x.log');

// v1, verbatim from TRT-LLM PR #6683
const V1 =
  "[08/07/2025-02:28:51] [TRT-LLM] [I] iter = 5, global_rank = 0, rank = 0, currank_total_requests = 0/0, elapsed_time = 0.0823206901550293s, timestamp = 2025-08-07 02:28:51, num_scheduled_requests: 1, states = {'num_ctx_requests': 1, 'num_ctx_tokens': 4096, 'num_generation_tokens': 0}";
// v2, written from the third-party regex: first iteration prints N/A glued to the unit
const V2_FIRST =
  "[11/20/2026-23:07:42] [TRT-LLM] [I] iter = 1, global_rank = 2, rank = 0, currank_total_requests = 3/8, host_step_time = 12.5ms, prev_device_step_time = N/Ams, timestamp = 2026-01-05 10:00:01, num_scheduled_requests: 3, states = {'num_ctx_requests': 3, 'num_ctx_tokens': 700, 'num_generation_tokens': 0}";
const V2 =
  "[11/20/2026-23:07:42] [TRT-LLM] [I] iter = 2, global_rank = 2, rank = 0, currank_total_requests = 3/8, host_step_time = 9.25ms, prev_device_step_time = 8.5ms, timestamp = 2026-01-05 10:00:01, num_scheduled_requests: 5, states = {'num_ctx_requests': 2, 'num_ctx_tokens': 300, 'num_generation_tokens': 3}";
// v3, from the current f-string, with adp_dummy_* fields, N/A kv util and an extra states key
const V3 =
  "[TRT-LLM] [I] [_torch][RANK 0] iter = 7, global_rank = 0, rank = 0, num_scheduled_requests = 8, adp_dummy_ctx_tokens = 0, adp_dummy_gen_tokens = 0, kv_cache_util = N/A, currank_total_requests = 1/8, host_step_time = 12.3ms, prev_device_step_time = N/A, timestamp = 2026-08-04 19:08:13, states = {'num_ctx_requests': 1, 'num_ctx_tokens': 64, 'num_generation_tokens': 7, 'cached_kv_tokens': 63821}";

describe('pytorch-text variants', () => {
  it('v1: elapsed_time in seconds, `num_scheduled_requests:`', () => {
    const r = only(V1);
    expect(r).toMatchObject({
      format: 'pytorch-text',
      iter: 4,
      sourceIter: 5,
      line: 7,
      file: 'x.log',
      scheduledRequests: 1,
      contextRequests: 1,
      contextTokens: 4096,
      generationTokens: 0,
      generationRequests: 0,
      hostStepTimeMs: null,
      prevDeviceStepTimeMs: null,
      timestamp: '2025-08-07 02:28:51',
      timestampMs: new Date(2025, 7, 7, 2, 28, 51).getTime(),
    });
    expect(r.latencyMs).toBeCloseTo(82.3206901550293, 9);
    expect(r.raw.currank_total_requests).toBe('0/0');
  });

  it('v2: host/prev device times, `N/Ams` is null', () => {
    expect(only(V2_FIRST)).toMatchObject({ iter: 0, hostStepTimeMs: 12.5, prevDeviceStepTimeMs: null, rank: 2, scheduledRequests: 3 });
    expect(only(V2)).toMatchObject({
      iter: 1,
      hostStepTimeMs: 9.25,
      prevDeviceStepTimeMs: 8.5,
      scheduledRequests: 5,
      contextRequests: 2,
      contextTokens: 300,
      generationTokens: 3,
      generationRequests: 3,
      latencyMs: null,
    });
  });

  it('v3: `num_scheduled_requests =`, N/A fields, extra states keys kept in raw', () => {
    const r = only(V3);
    expect(r).toMatchObject({
      iter: 6,
      sourceIter: 7,
      scheduledRequests: 8,
      contextRequests: 1,
      contextTokens: 64,
      generationTokens: 7,
      generationRequests: 7,
      hostStepTimeMs: 12.3,
      prevDeviceStepTimeMs: null,
      timestamp: '2026-08-04 19:08:13',
    });
    expect(r.raw.kv_cache_util).toBe('N/A');
    expect(r.raw.states).toMatchObject({ cached_kv_tokens: 63821 });
  });

  it('derives generation requests from scheduled - ctx, not from tokens (speculative decoding)', () => {
    const line = V3.replace("'num_generation_tokens': 7", "'num_generation_tokens': 28"); // 7 reqs × 4 tokens
    expect(only(line)).toMatchObject({ generationRequests: 7, generationTokens: 28 });
  });

  it.each([
    ['no prefix', ''],
    ['date prefix', '[11/20/2026-23:07:42] '],
    ['logger + rank prefix', '[11/20/2026-23:07:42] [TRT-LLM] [I] [_torch][RANK 0] '],
    ['mpirun prefix', '0: '],
    ['mpirun + date prefix', '1: [11/20/2026-23:07:42] [TRT-LLM] [I] '],
  ])('accepts %s', (_name, prefix) => {
    const body = V3.slice(V3.indexOf('iter = '));
    expect(detectLineFormat(prefix + body)).toBe('pytorch-text');
    expect(only(prefix + body)).toMatchObject({ iter: 6, contextTokens: 64 });
  });

  it('accepts durations with a space before the unit and CRLF line ends', () => {
    const log = parseIterationLogText(V2.replace('9.25ms', '9.25 ms') + '\r\n' + V1 + '\r\n');
    expect(log.records.map((r) => [r.iter, r.hostStepTimeMs, r.latencyMs])).toEqual([
      [1, 9.25, null],
      [4, null, expect.closeTo(82.3206901550293, 9)],
    ]);
    expect(log.linesRead).toBe(2);
  });

  it('skips a line cut off inside states', () => {
    const cut = V2.slice(0, V2.indexOf("'num_ctx_tokens'"));
    expect(parseIterationLogLine(cut)).toEqual({ kind: 'skipped', reason: expect.stringContaining('truncated') });
  });

  it('keeps a record whose states is not a dict literal, with null state fields', () => {
    const r = only(V3.replace(/states = \{.*\}$/, 'states = {<enum 1>}'));
    expect(r).toMatchObject({ iter: 6, scheduledRequests: 8, contextRequests: null, contextTokens: null, generationRequests: null });
    expect(r.raw.states).toBe('{<enum 1>}');
  });

  it('does not take other `iter = N` logs for records, and keeps iter 0', () => {
    expect(detectLineFormat('epoch 3, iter = 5, loss = 0.1')).toBeNull();
    expect(detectLineFormat('num_iter = 5, global_rank = 0')).toBeNull();
    // `iter = 0` is a record (issue 31: none is dropped for its counter), on loop -1 until the join finds the log's offset.
    expect(only(V3.replace('iter = 7', 'iter = 0'))).toMatchObject({ iter: -1, sourceIter: 0, scheduledRequests: 8 });
  });
});
