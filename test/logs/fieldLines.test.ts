/**
 * Iteration-log lines as TensorRT-LLM servers really printed them, pasted by users and maintainers
 * in public threads (each quoted with its source), and what the parser makes of them. No record
 * is dropped for its counter value (issue 31); which loop a counter names is decided at the join
 * (test/iterations/logCounters.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { parseIterationLogText } from '../../src/logs/index.js';
import { onlyRecord as only } from './fixtures.js';

/**
 * triton-inference-server/tensorrtllm_backend issue #217 (2023-12-18, "line 2386 of your log"):
 * the Triton backend's first batch, `"Iteration Counter":0`. The thread shows it wrapped at 120
 * columns ("Free KV cache \nblocks"); the backend writes one line, rejoined here.
 */
const TRITON_2023 =
  'I1218 03:35:37.688135 20559 libtensorrtllm.cc:1205] {"Active Request Count":1,"Context Requests":1,"Free KV cache blocks":480,"Generation Requests":0,"Iteration Counter":0,"Max KV cache blocks":513,"Max Request Count":64,"MicroBatch ID":0,"Runtime CPU Memory Usage":156,"Runtime GPU Memory Usage":3648012,"Runtime Pinned Memory Usage":16,"Scheduled Requests":1,"Timestamp":"12-18-2023 03:35:37","Tokens per KV cache block":64,"Total Context Tokens":2048,"Used KV cache blocks":1}';

/** NVIDIA/TensorRT-LLM issue #431 (2023-11-20), Triton with `--log-verbose=2`: only the always-present keys. */
const TRITON_2023_SHORT = 'I1120 02:29:01.795279 42888 libtensorrtllm.cc:1009] {"Active Request Count":1,"Iteration Counter":200,"Timestamp":"11-20-2023 02:29:01"}';

/** NVIDIA/TensorRT-LLM PR #3914 (2025-04-28): the PyTorch text log before and after `num_scheduled_requests` was added. */
const TEXT_V1_BEFORE =
  "[04/28/2025-09:56:44] [TRT-LLM] [I] iter = 198, global_rank = 0, rank = 0, currank_total_requests = 0/0, elapsed_time = 0.005060911178588867s, timestamp = 2025-04-28 09:56:44, states = {'num_ctx_requests': 0, 'num_ctx_tokens': 0, 'num_generation_tokens': 16}";
const TEXT_V1 =
  "[04/28/2025-09:56:44] [TRT-LLM] [I] iter = 198, global_rank = 0, rank = 0, currank_total_requests = 0/0, elapsed_time = 0.005060911178588867s, timestamp = 2025-04-28 09:56:44, num_scheduled_requests: 10, states = {'num_ctx_requests': 0, 'num_ctx_tokens': 0, 'num_generation_tokens': 16}";

describe('the Triton backend of 2023 (glog prefix, legacy keys)', () => {
  it('keeps the first batch\'s "Iteration Counter":0 with its composition (on loop -1 until the join decides)', () => {
    expect(only(TRITON_2023)).toMatchObject({
      format: 'legacy-json',
      sourceIter: 0,
      iter: -1,
      contextRequests: 1,
      contextTokens: 2048,
      generationRequests: 0,
      scheduledRequests: 1,
      activeRequests: 1,
      kvBlocksUsed: 1,
      kvBlocksFree: 480,
      kvBlocksMax: 513,
      gpuMemBytes: 3648012,
      timestamp: '12-18-2023 03:35:37',
    });
  });

  it('reads the short line of issue #431 (no composition)', () => {
    expect(only(TRITON_2023_SHORT)).toMatchObject({ format: 'legacy-json', sourceIter: 200, iter: 199, activeRequests: 1, contextRequests: null, generationRequests: null });
  });

  it('reads the same record when Triton (24.x on) writes the message as a JSON string', () => {
    // Triton 24.08 quotes and escapes each message: server issue #7649,
    // `I0924 12:01:22.876361 1 infer_request.cc:132] "[request id: <id_unknown>] Setting state from INITIALIZED to INITIALIZED"`.
    const payload = TRITON_2023.slice(TRITON_2023.indexOf('{'));
    const quoted = `I0924 12:01:22.876361 1 model_instance_state.cc:969] ${JSON.stringify(payload)}`;
    expect(quoted).toContain('"{\\"Active Request Count\\":1,');
    const { raw: quotedRaw, ...fromQuoted } = only(quoted);
    const { raw, ...plain } = only(TRITON_2023);
    expect(fromQuoted).toEqual(plain);
    expect(quotedRaw).toEqual(raw);
  });

  it('a log of such lines: every line a record, none skipped', () => {
    const log = parseIterationLogText([TRITON_2023, TRITON_2023.replace('"Iteration Counter":0', '"Iteration Counter":1'), TRITON_2023_SHORT].join('\n'));
    expect(log.records.map((r) => r.sourceIter)).toEqual([0, 1, 200]);
    expect(log.skippedLines).toBe(0);
  });
});

describe('the PyTorch text log, 2025 and the fields added since', () => {
  it('PR #3914: both forms of the v1 line', () => {
    expect(only(TEXT_V1_BEFORE)).toMatchObject({ iter: 197, sourceIter: 198, contextRequests: 0, generationTokens: 16, scheduledRequests: null, latencyMs: 5.060911178588867 });
    expect(only(TEXT_V1)).toMatchObject({ iter: 197, contextRequests: 0, contextTokens: 0, generationTokens: 16, scheduledRequests: 10, generationRequests: 10 });
  });

  it('PR #16323: `num_active`, `num_fetched`, `num_dummy`, `num_unscheduled` after `states = {...}`', () => {
    // PR #16323 (2026-07-13): "..., states = {...}, num_active = 14, num_fetched = 3, num_dummy = 1, num_unscheduled = 5"
    const line = `${TEXT_V1}, num_active = 14, num_fetched = 3, num_dummy = 1, num_unscheduled = 5`;
    expect(only(line)).toMatchObject({
      iter: 197,
      contextRequests: 0,
      generationTokens: 16,
      scheduledRequests: 10,
      activeRequests: 14,
      fetchedRequests: 3,
      dummyRequests: 1,
      unscheduledRequests: 5,
    });
  });

  it("PR #14734: `cached_kv_len = N` before `states`, with or without a comma, and states' `cached_kv_tokens`", () => {
    // PR #14734 (2026-05-29) validation output: "iter = 1 ... cached_kv_len = 0   states = {..., 'num_ctx_tokens': 12, 'num_generation_tokens': 0, ..."
    const states = "states = {'num_ctx_requests': 1, 'num_ctx_tokens': 12, 'num_generation_tokens': 0, 'cached_kv_tokens': 0}";
    const head = "[05/29/2026-10:00:00] [TRT-LLM] [I] iter = 1, global_rank = 0, rank = 0, num_scheduled_requests = 1, timestamp = 2026-05-29 10:00:00";
    for (const line of [`${head}, cached_kv_len = 0   ${states}`, `${head}, cached_kv_len = 0, ${states}`]) {
      expect(only(line), line).toMatchObject({ iter: 0, sourceIter: 1, cachedKvTokens: 0, contextRequests: 1, contextTokens: 12, generationRequests: 0, timestamp: '2026-05-29 10:00:00' });
    }
    expect(only(`${head}, cached_kv_len = 731   ${states}`).cachedKvTokens).toBe(731);
    // Only in states (the /metrics serializer's key): read from there.
    expect(only(`${head}, ${states.replace("'cached_kv_tokens': 0", "'cached_kv_tokens': 63821")}`).cachedKvTokens).toBe(63821);
  });
});
