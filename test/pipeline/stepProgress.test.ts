/**
 * The progress `analyzeExport` reports (what `iterations` draws on a terminal): one report per
 * timed step, counted of the steps known so far. The bar used to guess its total (the parts plus
 * 3) and showed 9/6 on pytorch-dense-long: the loader's steps (GPU ops, API calls, launch
 * indexes, NVTX columns) depend on the export and on where it is read.
 */
import { describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { parseIterationLogFile } from '../../src/logs/index.js';
import { analyzeExport } from '../../src/pipeline/analyzeExport.js';
import type { AnalysisPart } from '../../src/pipeline/request.js';
import { resolveParts } from '../../src/pipeline/request.js';
import { partsFor } from '../../src/pipeline/plan.js';
import { partStep, StepProgress, type StepCount } from '../../src/pipeline/stepProgress.js';
import { progress } from '../../src/progress.js';
import { fixture } from '../helpers/fixtures.js';

type Report = { step: string } & StepCount;

function reportsOf(dir: string, parts: AnalysisPart[], withLog: boolean): { reports: Report[]; timed: string[] } {
  const logs = withLog ? [parseIterationLogFile(fixture(dir, 'iteration_log.txt'))] : [];
  const reports: Report[] = [];
  const a = withExport(fixture(dir, 'trace.sqlite'), (h) => analyzeExport(h, { parts, logs, requireIterations: parts.includes('iterations') }, (step, c) => reports.push({ step, ...c })));
  return { reports, timed: Object.keys(a.timingsMs) };
}

describe('analyzeExport progress', () => {
  it.each([
    ['pytorch-dense', ['iterations', 'gaps', 'metrics', 'pytorchHost'], true],
    ['pytorch-dense', ['info', 'kernels', 'nvtx', 'nvtxGpu', 'iterations', 'gaps', 'findings'], true],
    ['pytorch-gpu-metrics', ['iterations', 'gaps', 'metrics'], true],
    ['pytorch-tp2', ['gaps'], false],
  ] as [string, AnalysisPart[], boolean][])('%s %j: counts one by one, never past the total, and ends at it', (dir, parts, withLog) => {
    const file = dir === 'pytorch-tp2' ? 'trace.rank0.sqlite' : 'trace.sqlite';
    const logs = withLog ? [parseIterationLogFile(fixture(dir, 'iteration_log.txt'))] : [];
    const reports: Report[] = [];
    const a = withExport(fixture(dir, file), (h) => analyzeExport(h, { parts, logs }, (step, c) => reports.push({ step, ...c })));
    expect(reports.length).toBeGreaterThan(3);
    reports.forEach((r, i) => {
      expect(r.done, r.step).toBe(i + 1);
      expect(r.done, r.step).toBeLessThanOrEqual(r.total);
    });
    const last = reports.at(-1)!;
    expect(last.done).toBe(last.total);
    // Every timed step was reported (the GPU ops and API calls among them), and nothing else.
    expect(new Set(reports.map((r) => r.step))).toEqual(new Set(Object.keys(a.timingsMs)));
    expect(reports.map((r) => r.step)).toEqual(expect.arrayContaining(['gpuOps', 'apiCalls', 'gaps']));
  });

  it('pytorch-dense iterations: the first report is the GPU ops\' read, a loader step: one more than the parts\' steps', () => {
    const { reports } = reportsOf('pytorch-dense', ['iterations', 'gaps', 'metrics'], true);
    const parts = partsFor(resolveParts(['iterations', 'gaps', 'metrics']));
    const partSteps = parts.map(partStep).filter((s): s is string => s !== null);
    // The first report is the GPU ops' read, not a part's: one step more than the parts'.
    expect(reports[0]).toEqual({ step: 'gpuOps', done: 1, total: partSteps.length + 1 });
    expect(partSteps).not.toContain('gpuOps');
  });

  it('StepProgress: loader steps add to the total, skipped parts leave it, a shared step name counts twice', () => {
    const parts = partsFor(resolveParts(['iterations']));
    const partSteps = parts.map(partStep).filter((s): s is string => s !== null);
    const seen: Report[] = [];
    const steps = new StepProgress(parts, (step, c) => seen.push({ step, ...c }));
    steps.finished('gpuOps');
    expect(seen.at(-1)).toEqual({ step: 'gpuOps', done: 1, total: partSteps.length + 1 });
    steps.skipped(partSteps[0]);
    steps.skipped('no such step');
    for (const s of partSteps.slice(1)) steps.finished(s);
    expect(seen.at(-1)).toEqual({ step: partSteps.at(-1), done: partSteps.length, total: partSteps.length });
    // A part step reported twice: the second counts as one more step, never past the total.
    steps.finished(partSteps[1]);
    expect(seen.at(-1)).toEqual({ step: partSteps[1], done: partSteps.length + 1, total: partSteps.length + 1 });
  });

  it('the iterations bar: the count and total the pipeline reports, drawn as they come', () => {
    const writes: string[] = [];
    const stream = { isTTY: true, columns: 120, write: (s: string) => writes.push(s) } as unknown as NodeJS.WriteStream;
    const bar = progress('iterscope: iterations', 0, { stream, enabled: true, intervalMs: 0, unit: 'steps' });
    const { reports } = reportsOf('pytorch-dense', ['iterations', 'gaps', 'metrics'], true);
    for (const r of reports) bar.update(r.done, `${r.step} done`, r.total);
    const counters = writes.map((w) => /\] (\d+)\/(\d+) steps/.exec(w)).filter((m) => m !== null);
    expect(counters.length).toBe(reports.length);
    for (const m of counters) expect(Number(m![1])).toBeLessThanOrEqual(Number(m![2]));
    expect(writes.at(-1)).toContain(`${reports.length}/${reports.length} steps`);
  });
});
