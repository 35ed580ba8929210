/** Iteration sources as plug-ins: each default source on the fixture that carries its markers, the order, and the alignment's token check. */
import { describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { alignToLog } from '../../src/iterations/numbering.js';
import { parseIterationRangeSpec } from '../../src/iterations/rangeSpec.js';
import { DEFAULT_ITERATION_SOURCES, detectEngine, FALLBACK_ITERATION_SOURCES, findIterationRanges } from '../../src/iterations/sources/index.js';
import { nvtxRangeSource } from '../../src/iterations/sources/nvtxRange.js';
import { parseVllmStepLabel } from '../../src/iterations/sources/vllm.js';
import type { IterationRange } from '../../src/iterations/source.js';
import { fixture } from '../helpers/fixtures.js';
import { LoadedExport } from '../../src/load/loadedExport.js';

/** Ranges per process as plain SQL counts them: matching text, on the thread with the most matches. */
function rangesOnBusiestThread(file: string, where: string): number {
  return withExport(file, (h) => {
    const rows = h.sqlite
      .prepare(
        `SELECT globalTid AS t, count(*) AS n FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId
         WHERE n.eventType IN (59, 60, 70, 71) AND ${where} GROUP BY 1 ORDER BY 2 DESC`,
      )
      .all() as { t: number; n: number }[];
    return rows[0]?.n ?? 0;
  });
}

describe('default iteration sources', () => {
  it('are tried in order: TensorRT-LLM PyTorch, C++, vLLM, SGLang; no fallback registered here', () => {
    expect(DEFAULT_ITERATION_SOURCES.map((s) => s.id)).toEqual(['trtllm-pytorch', 'trtllm-cpp', 'vllm', 'sglang']);
    expect(DEFAULT_ITERATION_SOURCES.map((s) => s.profileRangeSemantics)).toEqual(['half-open', 'closed', 'closed', 'closed']);
    expect(FALLBACK_ITERATION_SOURCES).toEqual([]);
  });

  it.each([
    ['pytorch-dense', 'trace.sqlite', 'trtllm-pytorch', "coalesce(s.value, n.text) LIKE '[Executor] _forward_step%'"],
    ['cpp-legacy-windows', 'trace.2.sqlite', 'trtllm-cpp', "coalesce(s.value, n.text) = 'TrtGptModelInflightBatching::forwardAsync'"],
    ['vllm-dense', 'trace.sqlite', 'vllm', "coalesce(s.value, n.text) LIKE 'execute_context_%'"],
    ['sglang', 'trace.sqlite', 'sglang', "coalesce(s.value, n.text) = 'scheduler.run_batch'"],
  ])('%s/%s: the first source with ranges is %s, with every matching range', (dir, file, id, where) => {
    const path = fixture(dir, file);
    const found = withExport(path, (h) => findIterationRanges(new LoadedExport(h)));
    expect(found.source.id).toBe(id);
    const total = [...found.byPid.values()].reduce((a, l) => a + l.length, 0);
    expect(total).toBe(rangesOnBusiestThread(path, where));
    // detectEngine's cheap probe agrees with the full search.
    expect(withExport(path, (h) => detectEngine(new LoadedExport(h)))).toEqual({ engine: found.source.engine, source: id });
    // Every other default source finds nothing here: exactly one engine's markers per fixture.
    for (const s of DEFAULT_ITERATION_SOURCES) if (s.id !== id) expect(withExport(path, (h) => s.findRanges(new LoadedExport(h))).byPid.size).toBe(0);
    // With the pipeline's NVTX columns in memory the ranges come from them, not from SQL: the same
    // ranges, in the same order, with the same texts, domains and numbers.
    const fromColumns = withExport(path, (h) => {
      const loaded = new LoadedExport(h);
      loaded.nvtx();
      return findIterationRanges(loaded);
    });
    expect(fromColumns.byPid).toEqual(found.byPid);
    expect(fromColumns.ignoredOtherThreads).toBe(found.ignoredOtherThreads);
  });

  it('an export without any engine markers: no engine', () => {
    expect(withExport(fixture('external', 'nsys2024.6_nvfuser_matmul.sqlite'), (h) => detectEngine(new LoadedExport(h)))).toBeNull();
  });

  it('--iteration-range builds an nvtx-range source of unknown engine', () => {
    const spec = parseIterationRangeSpec('/^execute_context_(\\d+)/');
    const found = withExport(fixture('vllm-dense', 'trace.sqlite'), (h) => findIterationRanges(new LoadedExport(h), spec));
    expect(found.source).toMatchObject({ id: 'nvtx-range', engine: 'unknown' });
    expect(found.byPid.get(638)?.length).toBe(40);
    expect(nvtxRangeSource({ kind: 'name', name: 'x' }).parseLabel('execute_context_1(2)_generation_3(4)')).toBeNull();
  });
});

describe('vLLM step labels and token-aware alignment', () => {
  it('parses both label forms', () => {
    expect(parseVllmStepLabel('execute_context_1(512)_generation_15(15)')).toEqual({ iter: null, contextRequests: 1, contextTokens: 512, generationRequests: 15, generationTokens: 15 });
    expect(parseVllmStepLabel('execute_new_2_cached_7')).toEqual({ iter: null, contextRequests: 2, contextTokens: null, generationRequests: 7, generationTokens: null });
    expect(parseVllmStepLabel('execute_context_1(512)_generation_15')).toBeNull();
  });

  it('compares tokens only when both sides have them', () => {
    const range = (ctxTokens: number | null, genTokens: number | null) =>
      ({ label: { iter: null, contextRequests: 1, contextTokens: ctxTokens, generationRequests: 2, generationTokens: genTokens } }) as IterationRange;
    const records = [
      { iter: 0, contextRequests: 1, generationRequests: 2, contextTokens: 100, generationTokens: 2 },
      { iter: 1, contextRequests: 1, generationRequests: 2, contextTokens: 200, generationTokens: 2 },
    ];
    expect(alignToLog([range(null, null)], records)).toEqual([0, 1]);
    expect(alignToLog([range(200, 2)], records)).toEqual([1]);
    expect(alignToLog([range(100, 3)], records)).toEqual([]);
    expect(alignToLog([range(100, 2)], records.map((r) => ({ ...r, contextTokens: null, generationTokens: null })))).toEqual([0, 1]);
  });
});
