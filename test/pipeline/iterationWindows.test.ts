/**
 * Issue 30: the iteration windows are a part of their own (`iterationWindows`) that reads every
 * NVTX row the iteration analysis needs. Past SHARED_NVTX_ROWS it runs with the NVTX readers,
 * before the NVTX columns are let go; the iteration analysis after it reads no NVTX by SQL (the
 * ranges, SGLang's other scheduler ranges) and equals the analysis that finds its own windows.
 */
import { describe, expect, it } from 'vitest';
import type { ExportHandle } from '../../src/export/openExport.js';
import { withExport } from '../../src/export/openExport.js';
import { analyzeIterations, findWindows } from '../../src/iterations/analyzeIterations.js';
import { LoadedExport } from '../../src/load/loadedExport.js';
import { parseIterationLogFile } from '../../src/logs/index.js';
import { analyzeExport } from '../../src/pipeline/analyzeExport.js';
import { partsFor, planRun } from '../../src/pipeline/plan.js';
import { REPORT_PARTS, resolveParts } from '../../src/pipeline/request.js';
import { fixture } from '../helpers/fixtures.js';

const names = (plan: { part: { name: string } }[]) => plan.map((p) => p.part.name);

/** The SQL statements prepared on `h` while `fn` runs (`fn` sees them as they come). */
function preparedDuring<T>(h: ExportHandle, fn: (sql: readonly string[]) => T): { value: T; sql: string[] } {
  const sqlite = h.sqlite as unknown as { prepare: (sql: string) => unknown };
  const prepare = sqlite.prepare;
  const sql: string[] = [];
  sqlite.prepare = function (this: unknown, text: string) {
    sql.push(text);
    return prepare.call(this, text);
  };
  try {
    return { value: fn(sql), sql };
  } finally {
    sqlite.prepare = prepare;
  }
}

describe('the iteration windows part in the run order', () => {
  it('report past SHARED_NVTX_ROWS: found with the NVTX readers, the NVTX columns let go after it, before the GPU ops are read', () => {
    const plan = planRun(partsFor(resolveParts(REPORT_PARTS)), { largeNvtx: true, inBackground: () => false });
    const order = names(plan);
    const release = order.indexOf(plan.find((p) => p.release.includes('nvtx'))!.part.name);
    expect(order.indexOf('iterationWindows')).toBeLessThanOrEqual(release);
    expect(release).toBeLessThan(order.indexOf('launches'));
    expect(order.indexOf('iterationRun')).toBeGreaterThan(order.indexOf('launches'));
  });

  it('below it: right before the iteration analysis (where the NVTX worker is waited for, as before); the columns stay', () => {
    const parts = partsFor(resolveParts(REPORT_PARTS));
    for (const inBackground of [() => false, (n: string) => ['nvtx', 'nvtxGpu', 'kernels'].includes(n)]) {
      const plan = planRun(parts, { largeNvtx: false, inBackground });
      const order = names(plan);
      expect(order[order.indexOf('iterationWindows') + 1]).toBe('iterationRun');
      expect(order.indexOf('iterationWindows')).toBeGreaterThan(order.indexOf('launches'));
      expect(plan.flatMap((p) => p.release)).not.toContain('nvtx');
    }
  });

  it('`iterations` alone: the windows are found by query (no part reads the NVTX columns for them)', () => {
    const parts = partsFor(resolveParts(['iterations']));
    expect(parts.map((p) => p.name)).toEqual(['launches', 'emptyCapture', 'iterationWindows', 'iterationRun', 'iterations']);
    expect(parts.some((p) => p.loads?.includes('nvtx'))).toBe(false);
  });
});

describe.each([
  { name: 'sglang', file: fixture('sglang', 'trace.sqlite'), log: fixture('sglang', 'sglang.log'), iterations: 80 },
  { name: 'vllm-dense', file: fixture('vllm-dense', 'trace.sqlite'), log: fixture('vllm-dense', 'vllm.log'), iterations: 40 },
  { name: 'pytorch-dense', file: fixture('pytorch-dense', 'trace.sqlite'), log: fixture('pytorch-dense', 'iteration_log.txt'), iterations: 120 },
])('$name: windows found from the NVTX columns, then the columns let go', ({ file, log, iterations }) => {
  const logs = [parseIterationLogFile(log)];

  it('the iteration analysis reads no NVTX by SQL and equals the one that finds its own windows', () => {
    withExport(file, (h) => {
      const own = analyzeIterations(new LoadedExport(h), { logs });
      const loaded = new LoadedExport(h);
      loaded.nvtx();
      const found = findWindows(loaded, logs);
      loaded.release('nvtx');
      const { value, sql } = preparedDuring(h, () => analyzeIterations(loaded, { logs }, found));
      expect(sql.filter((s) => s.includes('NVTX_EVENTS'))).toEqual([]);
      expect(value).toEqual(own);
      expect(value.iterations.length).toBe(iterations);
      // Without the windows found before, the same analysis queries NVTX_EVENTS (the check above can fail).
      const again = preparedDuring(h, () => analyzeIterations(loaded, { logs }));
      expect(again.sql.some((s) => s.includes('NVTX_EVENTS'))).toBe(true);
      expect(again.value).toEqual(own);
    });
  });
});

describe('sglang: the scheduler ranges around the steps are found with them', () => {
  it('per process, the other scheduler.* ranges of the steps thread (4 per step: recv, process_input, get_next_batch, process_batch_result)', () => {
    const found = withExport(fixture('sglang', 'trace.sqlite'), (h) => findWindows(new LoadedExport(h), []));
    const [[pid, steps]] = [...found.found.byPid];
    const others = found.found.otherRanges!.get(pid)!;
    expect(steps[0].text).toBe('scheduler.run_batch');
    expect(new Set(others.map((r) => r.text))).toEqual(new Set(['scheduler.recv_requests', 'scheduler.process_input_requests', 'scheduler.get_next_batch_to_run', 'scheduler.process_batch_result']));
    expect(others.every((r) => r.tid === steps[0].tid)).toBe(true);
  });
});

describe("sglang, the NVTX columns let go before the GPU ops (nvtxRead 'release', a large table's path)", () => {
  it('the report finds the same iterations, and its iteration analysis queries no NVTX_EVENTS (windows, scheduler ranges)', () => {
    const logs = [parseIterationLogFile(fixture('sglang', 'sglang.log'))];
    withExport(fixture('sglang', 'trace.sqlite'), (h) => {
      const kept = analyzeExport(h, { parts: REPORT_PARTS, logs, nvtxRead: 'inline' });
      // The statements prepared by the time each step is done.
      const doneAt = new Map<string, number>();
      const { value: released, sql } = preparedDuring(h, (seen) => analyzeExport(h, { parts: REPORT_PARTS, logs, nvtxRead: 'release' }, (step) => doneAt.set(step, seen.length)));
      const steps = [...doneAt.keys()];
      expect(steps.indexOf('iterationWindows')).toBeLessThan(steps.indexOf('gpuOps'));
      // After the API calls are read: the capture's health when it has no GPU work, then the iteration analysis.
      expect(sql.slice(doneAt.get('apiCalls'), doneAt.get('iterations')).filter((s) => s.includes('NVTX_EVENTS'))).toEqual([]);
      expect(released.iterations).toEqual(kept.iterations);
      expect(released.iterations!.iterations.length).toBe(80);
      expect(released.iterationError).toBeNull();
    });
  });
});
