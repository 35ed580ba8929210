/** The known records behind any logger prefix (issue 16): one test per prefix, each with every JSON/dict record kind. */
import { describe, expect, it } from 'vitest';
import { parseIterationLogLine, parseIterationLogText } from '../../src/logs/index.js';

/** Built the way the Triton backend's `ModelInstanceState::WaitForStats` appends its keys (values from the example). */
const TRITON =
  '{"Active Request Count":1,"Iteration Counter":0,"Max Request Count":64,"Runtime CPU Memory Usage":0,"Runtime GPU Memory Usage":2032,"Runtime Pinned Memory Usage":0,"Timestamp":"12-18-2024 03:35:37","Context Requests":1,"Generation Requests":0,"MicroBatch ID":0,"Paused Requests":0,"Scheduled Requests":1,"Total Context Tokens":2048,"Waiting Requests":0,"Free KV cache blocks":1000,"Max KV cache blocks":1032,"Tokens per KV cache block":64,"Used KV cache blocks":32,"Reused KV cache blocks":0,"Fraction used KV cache blocks":0.031008,"KV cache transfer time":0.000000,"Request count":0}';
const LEGACY =
  '{"Active Request Count":8,"Context Requests":4,"Free KV cache blocks":380,"Generation Requests":4,"Iteration Counter":2,"Max KV cache blocks":512,"Max Request Count":16,"MicroBatch ID":0,"Runtime CPU Memory Usage":28784,"Runtime GPU Memory Usage":2288844800,"Runtime Pinned Memory Usage":0,"Scheduled Requests":8,"Timestamp":"11-20-2026 23:09:09","Tokens per KV cache block":32,"Total Context Tokens":864,"Used KV cache blocks":132}';
const STATS_JSON =
  '{"cpuMemUsage":0,"gpuMemUsage":1024,"inflightBatchingStats":{"microBatchId":0,"numContextRequests":2,"numCtxTokens":300,"numGenRequests":5,"numPausedRequests":0,"numScheduledRequests":7},"iter":12,"iterLatencyMS":3.5,"numActiveRequests":7,"timestamp":"04-07-2025 20:33:17.747028"}';
const PYREPR =
  "{'cpuMemUsage': 0, 'gpuMemUsage': 1024, 'inflightBatchingStats': {'microBatchId': 0, 'numContextRequests': 2, 'numCtxTokens': 300, 'numGenRequests': 5, 'numPausedRequests': 0, 'numScheduledRequests': 7}, 'iter': 12, 'iterLatencyMS': 3.5, 'numActiveRequests': 7, 'timestamp': None}";

const EXPECTED = {
  triton: { format: 'triton-stats-json', iter: 0, sourceIter: 0, contextRequests: 1, contextTokens: 2048, generationRequests: 0, activeRequests: 1, kvBlocksUsed: 32 },
  legacy: { format: 'legacy-json', iter: 1, sourceIter: 2, contextRequests: 4, contextTokens: 864, generationRequests: 4 },
  statsJson: { format: 'iteration-stats-json', iter: 12, contextRequests: 2, contextTokens: 300, generationRequests: 5, latencyMs: 3.5 },
  pyrepr: { format: 'iteration-stats-pyrepr', iter: 12, contextRequests: 2, contextTokens: 300, generationRequests: 5, latencyMs: 3.5 },
};
const PAYLOADS = { triton: TRITON, legacy: LEGACY, statsJson: STATS_JSON, pyrepr: PYREPR };

function expectRecords(prefix: string): void {
  for (const [kind, payload] of Object.entries(PAYLOADS) as [keyof typeof PAYLOADS, string][]) {
    const result = parseIterationLogLine(prefix + payload);
    expect(result.kind, `${kind} behind ${JSON.stringify(prefix)}`).toBe('records');
    if (result.kind !== 'records') continue;
    expect(result.records).toHaveLength(1);
    expect(result.records[0]).toMatchObject(EXPECTED[kind]);
  }
}

describe('known records after any log prefix', () => {
  it('glog (Triton tensorrtllm_backend, the issue line)', () => {
    expectRecords('I1218 03:35:37.688135 20559 libtensorrtllm.cc:1205] ');
  });
  it('[TensorRT-LLM][INFO]', () => {
    expectRecords('[TensorRT-LLM][INFO] ');
  });
  it('Python logging (asctime - name - level - message)', () => {
    expectRecords('2025-01-02 03:04:05,123 - tensorrt_llm - INFO - ');
  });
  it("vLLM's engine-core prefix", () => {
    expectRecords('(EngineCore_DP0 pid=638) INFO 11-23 06:19:01 [core.py:349] ');
  });
  it('a prefix that holds braces of its own', () => {
    expectRecords('[rank0]{worker} {"not": "a record"} ');
  });

  it("Triton's Iteration Counter is the executor's iteration (no off-by-one, 0 is a real loop); a legacy 0 is kept too (issue 31), on loop -1 until the join finds the log's offset", () => {
    const log = parseIterationLogText([`I1218 03:35:37.688135 20559 libtensorrtllm.cc:1205] ${TRITON}`, `[TensorRT-LLM][INFO] ${LEGACY.replace('"Iteration Counter":2', '"Iteration Counter":0')}`].join('\n'));
    expect(log.records.map((r) => [r.format, r.iter, r.sourceIter])).toEqual([
      ['triton-stats-json', 0, 0],
      ['legacy-json', -1, 0],
    ]);
    expect(log.skippedLines).toBe(0);
  });
});
