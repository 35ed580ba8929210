/**
 * The late-launches finding's first evidence row, "by host step": the idle time of `launch_late` and
 * of each NVTX cause summed over the iterations, causes that differ only in their numbers (vLLM's
 * counters in range names) as one step, largest first. Checked against that sum made here from the
 * same analysis's per-iteration causes, on pytorch-dense and vllm-dense with their logs, and over
 * the capture's causes on plain-fieldguide (no iterations).
 */
import { describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { formatNs } from '../../src/formatNs.js';
import { parseIterationLogFile } from '../../src/logs/parse.js';
import { analyzeExport } from '../../src/pipeline/analyzeExport.js';
import { fixture } from '../helpers/fixtures.js';

function analysisOf(dir: string, log: string | null) {
  return withExport(fixture(dir, 'trace.sqlite'), (h) => analyzeExport(h, { parts: ['gaps', 'iterations', 'findings'], logs: log ? [parseIterationLogFile(fixture(dir, log))] : [] }));
}

describe('late-launches: the idle time by host step', () => {
  for (const [dir, log] of [
    ['pytorch-dense', 'iteration_log.txt'],
    ['vllm-dense', 'vllm.log'],
    // No log, no iterations: the capture's causes; `cublasCreate_v2` is a step with a number.
    ['plain-fieldguide', null],
  ] as const) {
    it(`${dir}: every late cause of every iteration, summed by step`, () => {
      const a = analysisOf(dir, log);
      const finding = a.findings!.findings.find((f) => f.id === 'late-launches');
      expect(finding).toBeDefined();
      const byStep = new Map<string, number>();
      const g = a.gaps!;
      for (const record of g.iterationsFound ? g.iterations.map((i) => i.idleByCauseNs) : [g.idleByCauseNs]) {
        for (const [cause, ns] of Object.entries(record)) {
          if (cause !== 'launch_late' && !cause.startsWith('nvtx:')) continue;
          const step = cause.replace(/^nvtx:/, '').replace(/[0-9]+/g, 'N');
          byStep.set(step, (byStep.get(step) ?? 0) + ns);
        }
      }
      const expected = [...byStep].sort((x, y) => y[1] - x[1]);
      expect(expected.length).toBeGreaterThan(1);
      expect(finding!.evidence[0].text).toBe(`by host step: ${expected.map(([s, ns]) => `${s} ${formatNs(ns)}`).join(', ')}`);
    });
  }
});
