import { describe, expect, it } from 'vitest';
import { isVllmStepLabel, parseVllmStepLabel } from '../../src/iterations/sources/vllm.js';
import { PYTORCH_FORWARD_STEP_FAMILY } from '../../src/iterations/sources/trtllmPytorch.js';
import { parseSglangStepSpan, stepSpanKind } from '../../src/iterations/sglangSteps.js';
import { unparsedLabelsNote } from '../../src/iterations/analyzeIterations.js';

/**
 * The step annotations as engines write them (issue #54: families, not strings). vLLM's forms are
 * `Worker.annotate_profile` in vllm/v1/worker/gpu_worker.py:
 * - `f"execute_new_{num_new}_cached_{num_cached}"`: vllm-project/vllm at 35d5cda123ec28581759b6d34cde8052314fb1e6;
 * - `"execute_context_", num_ctx_requests, "(", num_ctx_tokens, ")_generation_", num_generation_requests,
 *   "(", num_generation_tokens, ")"`: the same file after compute_iteration_details (2025-12);
 * - with `profiler_config.detailed_trace_annotation`: `"execute_", total_scheduled_tokens, "_context_", n,
 *   "(sq", num_ctx_tokens, "sk", ctx_seq_len_sum, "sqsq", ctx_qq_compute, "sqsk", ctx_qk_compute,
 *   ")_generation_", m, "(sq", ..., ")"` (2026);
 * - token fields with more than one number, `execute_context_1(888_788544)_generation_0(0)` (888^2 = 788544),
 *   and the detailed example below: spans of real vLLM torch traces published in another project's
 *   tests, quoted in issue #54.
 */
describe('vLLM step annotations, every form', () => {
  it('reads the old request-count form', () => {
    expect(parseVllmStepLabel('execute_new_2_cached_7')).toEqual({ iter: null, contextRequests: 2, contextTokens: null, generationRequests: 7, generationTokens: null });
  });

  it('reads the context/generation form', () => {
    expect(parseVllmStepLabel('execute_context_0(0)_generation_16(96)')).toEqual({ iter: null, contextRequests: 0, contextTokens: 0, generationRequests: 16, generationTokens: 96 });
  });

  it('reads the first number of a token field that carries several, and says it read it in part', () => {
    expect(parseVllmStepLabel('execute_context_1(888_788544)_generation_0(0)')).toEqual({
      iter: null,
      contextRequests: 1,
      contextTokens: 888,
      generationRequests: 0,
      generationTokens: 0,
      partial: true,
    });
  });

  it('reads the detailed annotation: query and KV tokens and the compute proxies per phase', () => {
    const label = parseVllmStepLabel('execute_8192_context_9(sq8155sk8430sqsq7475785sqsk7671310)_generation_37(sq37sk34489sqsq37sqsk34489)');
    expect(label).toEqual({
      iter: null,
      contextRequests: 9,
      contextTokens: 8155,
      generationRequests: 37,
      generationTokens: 37,
      detail: {
        scheduledTokens: 8192,
        context: { queryTokens: 8155, kvTokens: 8430, qqCompute: 7475785, qkCompute: 7671310 },
        generation: { queryTokens: 37, kvTokens: 34489, qqCompute: 37, qkCompute: 34489 },
      },
    });
    // The scheduled tokens are both phases' query tokens.
    expect(label!.detail!.scheduledTokens).toBe(label!.contextTokens! + label!.generationTokens!);
  });

  it('keeps what parses of a field it does not know, and calls any execute_ text with a number a step', () => {
    expect(parseVllmStepLabel('execute_context_2(n/a)_generation_3(3)')).toMatchObject({ contextRequests: 2, contextTokens: null, generationRequests: 3, generationTokens: 3, partial: true });
    expect(parseVllmStepLabel('execute_context_1(512)_generation_15')).toBeNull();
    expect(isVllmStepLabel('execute_context_1(512)_generation_15')).toBe(true);
    expect(isVllmStepLabel('execute_model')).toBe(false);
    expect(isVllmStepLabel('execute_dummy_batch')).toBe(false);
  });

  it('one note names the engine, counts the forms not understood and quotes one', () => {
    expect(unparsedLabelsNote('vllm', { unparsed: 3, partial: 2, example: 'execute_ctx1_gen2' })).toBe(
      "vllm step markers in a form not understood: 3 without a batch that could be read, 2 read in part (the rest left empty); e.g. 'execute_ctx1_gen2'",
    );
    expect(unparsedLabelsNote('vllm', { unparsed: 0, partial: 1, example: 'x'.repeat(200) })).toMatch(/e\.g\. 'x{157}\.\.\.'$/);
  });
});

describe('TensorRT-LLM and SGLang step families', () => {
  it('every [Executor] _forward_step range is a TensorRT-LLM step', () => {
    expect(PYTORCH_FORWARD_STEP_FAMILY.test('[Executor] _forward_step 12: 1 ctx reqs, 3 gen reqs')).toBe(true);
    expect(PYTORCH_FORWARD_STEP_FAMILY.test('[Executor] _forward_step 12: 1 ctx requests, 3 generation requests, 2 draft')).toBe(true);
    expect(PYTORCH_FORWARD_STEP_FAMILY.test('[Executor] _forward_step_inner')).toBe(false);
  });

  it('SGLang speculative verify steps are their own phase, draft forwards no step', () => {
    expect(stepSpanKind('step[TARGET_VERIFY bs=8]')).toBe('speculative');
    expect(stepSpanKind('step[target_verify bs=8]')).toBe('speculative');
    expect(parseSglangStepSpan('step[TARGET_VERIFY bs=8]')).toMatchObject({ contextRequests: 0, generationRequests: 8, speculative: true });
    expect(stepSpanKind('step[DRAFT_DECODE bs=8]')).toBeNull();
  });

  it('SGLang spans of the 2026 forms: lower case, roofline sums as token detail, unread fields kept partial', () => {
    expect(parseSglangStepSpan('step[extend bs=4 toks=1984]')).toMatchObject({ contextRequests: 4, contextTokens: 1984, generationRequests: 0 });
    expect(parseSglangStepSpan('step[MIXED bs=2 c=1 g=1 c_sq=5 c_sk=8 c_sqsq=25 c_sqsk=40 g_sq=1 g_sk=12 g_sqsq=1 g_sqsk=12]')).toMatchObject({
      detail: { context: { queryTokens: 5, kvTokens: 8, qqCompute: 25, qkCompute: 40 }, generation: { queryTokens: 1, kvTokens: 12, qqCompute: 1, qkCompute: 12 } },
    });
    expect(parseSglangStepSpan('step[DECODE bs=16 util=0.7 mode=graph]')).toMatchObject({ generationRequests: 16, partial: true });
    expect(stepSpanKind('step[DECODE bs=16 util=0.7 mode=graph]')).toBe('decode');
  });
});
