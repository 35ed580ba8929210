import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { writeTrace } from '../../src/trace/writeTrace.js';
import { analyzeExport } from '../../src/pipeline/analyzeExport.js';
import { parseIterationLogFile } from '../../src/logs/parse.js';
import { fixture } from '../helpers/fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'iterscope-kineto-trace-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('trace on a PyTorch profiler trace', () => {
  it('writes the aten ops as host slices beside the iterations and the GPU work', () => {
    const out = join(dir, 'perfetto.json');
    const src = fixture('pytorch-torch-only', 'trace.json');
    const logs = [parseIterationLogFile(fixture('pytorch-torch-only', 'iteration_log.txt'))];
    // As `iterscope trace`: the pipeline's iterations, gaps and timeline, then the writer.
    const summary = writeTrace(out, withExport(src, (h) => analyzeExport(h, { parts: ['iterations', 'gaps', 'timeline'], logs })));
    const events = (JSON.parse(readFileSync(out, 'utf8')) as { traceEvents: { cat?: string; name?: string; args?: { name?: string } }[] }).traceEvents;
    const cpuOps = (JSON.parse(readFileSync(src, 'utf8')) as { traceEvents: { cat?: string }[] }).traceEvents.filter((e) => e.cat === 'cpu_op').length;
    expect(events.filter((e) => e.cat === 'aten').length).toBe(cpuOps);
    expect(events.filter((e) => e.cat === 'iteration').length).toBe(20);
    expect(events.some((e) => e.name === 'thread_name' && e.args?.name === 'aten ops (thread 571)')).toBe(true);
    expect(summary.notes).toContain(`${cpuOps} aten ops (PyTorch profiler) on host tracks`);
  });
});
