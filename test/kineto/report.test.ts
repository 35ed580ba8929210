/** The report's "Host side (PyTorch profiler)" section: dual mode, a trace alone, and none for a plain export. */
import { describe, expect, it } from 'vitest';
import { runReport } from '../../src/cli/commands/report.js';
import { fixture } from '../helpers/fixtures.js';

const DUAL = (f: string) => fixture('pytorch-torch-trace', f);
const ONLY = (f: string) => fixture('pytorch-torch-only', f);

describe('report: Host side (PyTorch profiler)', () => {
  it('dual mode: clocks and attribution notes, top aten ops per phase over the iterations of each phase', async () => {
    const { text, data } = await runReport(DUAL('trace.sqlite'), { log: [DUAL('iteration_log.txt')], torchTrace: DUAL('trace.json') });
    const h = data.pytorchHost!;
    expect(h.notes[0]).toMatch(/^clocks: Kineto \+ [\d.]+ us = nsys .*spread/);
    const phases = data.phases.map((p) => [p.phase, p.iterations]);
    expect(h.byPhase.map((g) => [g.group, g.iterations])).toEqual(expect.arrayContaining(phases));
    expect(h.byPhase.reduce((a, g) => a + g.iterations, 0)).toBe(20);
    // A phase's CPU time is the sum of its iterations'.
    for (const g of h.byPhase) {
      const iters = new Set(data.iterations!.iterations.filter((r) => r.phase === g.group).map((r) => r.iter));
      expect(g.cpuOpNs).toBe(h.iterations.filter((r) => iters.has(r.iter)).reduce((a, r) => a + r.cpuOpNs, 0));
    }
    expect(text).toMatch(/## Host side \(PyTorch profiler\)/);
    expect(text).toMatch(/### Top aten ops by phase \(self time\)/);
  });

  it('a Kineto trace alone gets the section; a plain export does not', async () => {
    const only = await runReport(ONLY('trace.json'), { log: [ONLY('iteration_log.txt')] });
    expect(only.data.pytorchHost!.iterations).toHaveLength(20);
    expect(only.text).toMatch(/## Host side \(PyTorch profiler\)/);
    const plain = await runReport(DUAL('trace.sqlite'), { log: [DUAL('iteration_log.txt')] });
    expect(plain.data.pytorchHost).toBeNull();
    expect(plain.text).not.toMatch(/Host side \(PyTorch profiler\)/);
  });
});
