/**
 * Issue 30: the parts as a registry. Every part comes after what it reads; the run order takes
 * the worker's parts before their first reader and lets each loader column go after its last
 * reader (the API calls before `kernels`); on pytorch-gpu-metrics the iteration rows carry the
 * gaps' idle causes and the GPU metrics as new values of the `iterations` part.
 */
import { describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { parseIterationLogFile } from '../../src/logs/index.js';
import { analyzeExport } from '../../src/pipeline/analyzeExport.js';
import { PARTS } from '../../src/pipeline/parts.js';
import { partsFor, planRun } from '../../src/pipeline/plan.js';
import { ANALYSIS_PARTS, REPORT_PARTS, resolveParts } from '../../src/pipeline/request.js';
import { fixture } from '../helpers/fixtures.js';

const names = (plan: { part: { name: string } }[]) => plan.map((p) => p.part.name);

describe('the parts registry', () => {
  it('has one entry per part a caller can ask for, each after every part it reads', () => {
    const order = PARTS.map((p) => p.name);
    for (const p of ANALYSIS_PARTS) expect(order).toContain(p);
    expect(new Set(order).size).toBe(order.length);
    PARTS.forEach((p, i) => {
      for (const d of [...p.needs, ...(p.uses ?? [])]) expect(order.indexOf(d), `${p.name} reads ${d}`).toBeLessThan(i);
    });
  });

  // `resolveParts` (request.ts) says which parts an analysis holds (`ExportAnalysis.parts`); the registry's
  // `needs` say what is computed: a part the registry computes and resolveParts does not name would be
  // left out of `parts` (or a part named never computed).
  it("the registry computes, of the parts a caller can ask for, exactly those resolveParts names (the analysis's `parts`)", () => {
    const publicPart = new Set<string>(ANALYSIS_PARTS);
    for (const p of ANALYSIS_PARTS) {
      const registry = partsFor(resolveParts([p])).map((e) => e.name).filter((n) => publicPart.has(n)).sort();
      expect(registry, p).toEqual([...resolveParts([p])].sort());
    }
  });

  it('report: the API calls go after info, before kernels; the GPU ops after kernels; the NVTX columns stay', () => {
    const plan = planRun(partsFor(resolveParts(REPORT_PARTS)), { largeNvtx: false, inBackground: () => false });
    const at = (n: string) => names(plan).indexOf(n);
    expect(at('info')).toBeLessThan(at('kernels'));
    expect(plan[at('info')].release).toEqual(['apiCalls']);
    // The API calls go before the short gaps and the long gaps' explanation, which read none (the gap
    // scan finds each long gap's launch call).
    expect(at('info')).toBeLessThan(at('shortGaps'));
    expect(plan.slice(at('info') + 1).filter((p) => p.part.loads?.includes('apiCalls'))).toEqual([]);
    expect(plan[at('kernels')].release).toEqual(['gpuOps']);
    expect(plan.flatMap((p) => p.release)).not.toContain('nvtx');
    // The busy union and device timelines (111 MB on the 10x bench export) go after their last reader,
    // the short gaps' placement in the iterations: before the long gaps are explained (their rows and
    // host side are the gaps' own peak) and before the kernel summary's buffers are made.
    expect(plan.filter((p) => p.release.includes('gpuTimelines')).map((p) => p.part.name)).toEqual(['shortGaps']);
    expect(at('iterationRun')).toBeLessThan(at('shortGaps'));
    expect(at('shortGaps')).toBeLessThan(at('gaps'));
    expect(at('gaps')).toBeLessThan(at('kernels'));
    // `gaps` alone reads no iterations (they are read when asked for anyway); it reads the host-cause
    // rows (null when neither the NVTX columns nor the worker have them: the gaps query their own).
    expect(names(planRun(partsFor(resolveParts(['gaps'])), { largeNvtx: false, inBackground: () => false }))).toEqual(['launches', 'gapScan', 'hostCauseRows', 'shortGaps', 'gaps']);
  });

  it('iterations with gaps: the gaps are scanned before the worker is asked for the host-cause rows, then the iteration windows (found among those rows), explained after the iterations', () => {
    const worker = (n: string) => ['iterationWindows', 'hostCauseRows'].includes(n);
    const plan = names(planRun(partsFor(resolveParts(['iterations', 'gaps', 'metrics'])), { largeNvtx: false, inBackground: worker }));
    expect(plan.slice(0, 6)).toEqual(['launches', 'emptyCapture', 'gapScan', 'hostCauseRows', 'iterationWindows', 'iterationRun']);
    expect(plan.indexOf('gaps')).toBeGreaterThan(plan.indexOf('iterationRun'));
    // Without the gaps no host-cause rows are read: the windows are sought by their own query.
    expect(names(planRun(partsFor(resolveParts(['iterations', 'metrics'])), { largeNvtx: false, inBackground: worker }))).not.toContain('hostCauseRows');
  });

  it('the worker parts are taken just before their first reader; a large NVTX table is read and let go first', () => {
    const parts = partsFor(resolveParts(REPORT_PARTS));
    const bg = names(planRun(parts, { largeNvtx: false, inBackground: (n) => ['nvtx', 'nvtxGpu', 'kernels'].includes(n) }));
    expect(bg[bg.indexOf('nvtx') + 1]).toBe('info');
    expect(bg[bg.indexOf('kernels') + 1]).toBe('categories');
    expect(bg[bg.indexOf('nvtxGpu') + 1]).toBe('coverage');
    const large = planRun(parts, { largeNvtx: true, inBackground: () => false });
    // Every part that reads the NVTX columns, `hostCauseRows`, `iterationWindows` and `hostRanges` too
    // (they only `reads` them), before the GPU ops; the columns go after the last of them.
    const nvtxReaders = ['nvtx', 'nvtxGpu', 'hostCauseRows', 'iterationWindows', 'hostRanges'];
    expect(names(large).slice(0, nvtxReaders.length + 1)).toEqual([...nvtxReaders, 'launches']);
    expect(large.slice(0, nvtxReaders.length).map((p) => p.release)).toEqual([[], [], [], [], ['nvtx']]);
  });

  it('in every run mode each part comes after the parts it needs', () => {
    const modes = [
      { largeNvtx: false, inBackground: () => false },
      { largeNvtx: true, inBackground: () => false },
      { largeNvtx: false, inBackground: (n: string) => ['nvtx', 'nvtxGpu', 'kernels', 'iterationWindows', 'hostCauseRows', 'info', 'healthLaunches'].includes(n) },
    ];
    for (const asked of [REPORT_PARTS, ['iterations', 'gaps', 'metrics', 'pytorchHost'], ['gaps'], ['findings']] as const) {
      for (const mode of modes) {
        const order = names(planRun(partsFor(resolveParts(asked)), mode));
        for (const p of PARTS.filter((e) => order.includes(e.name))) {
          for (const d of p.needs) expect(order.indexOf(d), `${asked.join(',')}: ${p.name} needs ${d}`).toBeLessThan(order.indexOf(p.name));
        }
      }
    }
  });

  it('an intermediate value goes after its last reader, in every run mode; no part the analysis holds is let go', () => {
    const modes = [
      { largeNvtx: false, inBackground: () => false },
      { largeNvtx: true, inBackground: () => false },
      { largeNvtx: false, inBackground: (n: string) => ['nvtx', 'nvtxGpu', 'kernels', 'iterationWindows', 'hostCauseRows', 'info', 'healthLaunches'].includes(n) },
    ];
    const intermediate = PARTS.filter((p) => p.intermediate).map((p) => p.name);
    expect([...intermediate].sort()).toEqual(['emptyCapture', 'gapScan', 'healthLaunches', 'hostCauseRows', 'hostRanges', 'iterationWindows', 'launches', 'shortGaps']);
    for (const name of intermediate) expect(ANALYSIS_PARTS as readonly string[]).not.toContain(name);
    for (const asked of [REPORT_PARTS, ['iterations', 'gaps', 'metrics', 'pytorchHost'], ['gaps'], ['findings'], ['stepTimeline']] as const) {
      for (const mode of modes) {
        const plan = planRun(partsFor(resolveParts(asked)), mode);
        const order = names(plan);
        const dropped = plan.flatMap((p, i) => p.dropValues.map((name) => ({ name, at: i })));
        // Each intermediate part of the run dropped once, none other.
        expect(dropped.map((d) => d.name).sort()).toEqual(order.filter((n) => (intermediate as string[]).includes(n)).sort());
        for (const { name, at } of dropped) {
          const readers = plan.map((p, i) => ({ i, reads: [...p.part.needs, ...(p.part.uses ?? [])].includes(name as never) })).filter((r) => r.reads);
          expect(at, `${asked.join(',')}: ${name}`).toBe(readers.length ? Math.max(...readers.map((r) => r.i)) : order.indexOf(name));
        }
      }
    }
    // report: the gap scan, the short gaps and the host-cause rows go with the gaps (the launch count too: nothing after reads it), the host ranges after the last of `host` and `gilHolders`.
    const report = planRun(partsFor(resolveParts(REPORT_PARTS)), { largeNvtx: false, inBackground: () => false });
    expect(report.find((p) => p.part.name === 'gaps')!.dropValues).toEqual(['launches', 'gapScan', 'hostCauseRows', 'shortGaps']);
    expect(report.find((p) => p.dropValues.includes('hostRanges'))!.part.name).toBe('gilHolders');
  });

  it('pytorch-gpu-metrics: rows with idle causes and metrics, phases with metrics, the metrics notes in the iteration notes', () => {
    const file = fixture('pytorch-gpu-metrics', 'trace.sqlite');
    const logs = [parseIterationLogFile(fixture('pytorch-gpu-metrics', 'iteration_log.txt'))];
    const a = withExport(file, (h) => analyzeExport(h, { parts: ['iterations', 'gaps', 'metrics', 'phases'], logs }));
    const only = withExport(file, (h) => analyzeExport(h, { parts: ['iterations'], logs }));
    expect(a.iterations!.iterations.length).toBe(60);
    expect(a.iterations!.metricNames).toContain('SMs Active [Throughput %]');
    for (const row of a.iterations!.iterations) {
      expect(row.idleByCauseNs).toBeDefined();
      expect(row.metrics).toBeDefined();
    }
    expect(a.phases.every((p) => p.metrics !== undefined)).toBe(true);
    expect(a.iterations!.coverage.notes).toEqual([...only.iterations!.coverage.notes, ...a.metrics!.notes]);
    // Without gaps and metrics the rows have neither field.
    expect(only.iterations!.iterations.some((r) => 'idleByCauseNs' in r || 'metrics' in r)).toBe(false);
    expect(only.iterations!.metricNames).toBeUndefined();
  });

  it("pytorch-dense: the NVTX columns let go first (nvtxRead 'release', a large table's path) give the same analysis as kept ones", () => {
    const file = fixture('pytorch-dense', 'trace.sqlite');
    const logs = [parseIterationLogFile(fixture('pytorch-dense', 'iteration_log.txt'))];
    const released = withExport(file, (h) => analyzeExport(h, { parts: REPORT_PARTS, logs, nvtxRead: 'release' }));
    const kept = withExport(file, (h) => analyzeExport(h, { parts: REPORT_PARTS, logs, nvtxRead: 'inline' }));
    // The GC and GIL ranges and the host-cause rows were taken before the release (the host side read no NVTX by query).
    expect(Object.keys(released.timingsMs).indexOf('hostRanges')).toBeLessThan(Object.keys(released.timingsMs).indexOf('gpuOps'));
    expect(Object.keys(released.timingsMs).indexOf('hostCauseRows')).toBeLessThan(Object.keys(released.timingsMs).indexOf('gpuOps'));
    expect(Object.keys(kept.timingsMs).indexOf('hostRanges')).toBeGreaterThan(Object.keys(kept.timingsMs).indexOf('gpuOps'));
    expect(released.gilHolders!.length).toBeGreaterThan(0);
    expect(released.host!.gc.collections).toBeGreaterThan(0);
    // Everything but the times taken (`timingsMs`, the metrics' `ms`).
    const untimed = (a: typeof kept) => ({ ...a, timingsMs: {}, metrics: a.metrics && { ...a.metrics, ms: 0 } });
    expect(untimed(released)).toEqual(untimed(kept));
  });
});
