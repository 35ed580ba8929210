/**
 * The `timeline` part (what `iterscope trace` writes) holds the GPU ops the iterations and gaps
 * were computed from, with their slice columns, instead of the trace reading the op tables a
 * second time. On every fixture export it must hold exactly what the trace's own sorted query
 * over the op tables returned: the same rows, in the same start order (`orderByStart`, the order
 * the trace visits them in).
 */
import { describe, expect, it } from 'vitest';
import { presentGpuOpSources, selectGpuOpProcessCount, selectGpuOps } from '../../queries/gpuOps.js';
import { allRows } from '../../queries/run.js';
import { orderByStart } from '../../src/math/startOrder.js';
import { withExport } from '../../src/export/openExport.js';
import { analyzeExport } from '../../src/pipeline/analyzeExport.js';
import { FIXTURES, fixture, fixtureExports } from '../helpers/fixtures.js';
import { NO_STRING_ID } from '../../src/columns/typedColumn.js';

const nul = (x: number, missing: number) => (Number.isNaN(x) || x === missing ? null : x);

describe.each(fixtureExports(FIXTURES).map((file) => ({ file, name: file.slice(FIXTURES.length + 1) })))('$name', ({ file }) => {
  it.each(['short', 'demangled'] as const)('timeline (%s kernel names) = the GPU-op tables sorted by start in SQL', (kernelNames) => {
    withExport(file, (h) => {
      if (presentGpuOpSources(h).length === 0) return;
      const t = analyzeExport(h, { parts: ['timeline'], kernelNames }).timeline!;
      const ops = t.gpuOps;
      const kernelName = h.hasColumn('CUPTI_ACTIVITY_KIND_KERNEL', 'shortName') && kernelNames === 'short' ? 'shortName' : 'demangledName';
      expect(ops.slices.kernelName).toBe(kernelName);
      const sql = allRows(h, selectGpuOps(h, { globalPid: false, sliceColumns: { kernelName } })!.orderBy('start'));
      expect(ops.count).toBe(sql.length);
      const ours = Array.from(orderByStart(ops.start, ops.count), (i) => ({
        start: ops.start[i],
        end: ops.end[i],
        deviceId: ops.deviceId[i],
        streamId: nul(ops.streamId[i], -1),
        correlationId: nul(ops.correlationId[i], NaN),
        pid: ops.pid[i],
        kind: ops.kind[i],
        nameId: nul(ops.slices.nameId[i], -1),
        catId: nul(ops.nameId[i], NO_STRING_ID),
        extra: i < ops.slices.extraFrom ? null : nul(ops.slices.extra[i - ops.slices.extraFrom], NaN),
      }));
      // Start order: the same sequence of starts; rows: the same multiset (ties may come in any order in SQL).
      expect(ours.map((r) => r.start)).toEqual(sql.map((r) => r.start));
      const key = (r: object) => JSON.stringify(r);
      expect(ours.map(key).sort()).toEqual(sql.map((r) => key({ ...r })).sort());
      expect(t.gpuProcesses).toBe(allRows(h, selectGpuOpProcessCount(h)!)[0].n);
      // Every kernel name id the slices show resolves to its StringIds text.
      for (const r of ours) if (r.kind === 0 && r.nameId != null) expect(t.kernelStrings.has(r.nameId), `string id ${r.nameId}`).toBe(true);
      expect(t.atenOps).toBeNull();
    });
  });
});

describe('timeline of a PyTorch profiler trace (pytorch-torch-only)', () => {
  it('holds every aten op, and the GPU ops in start order', () => {
    withExport(fixture('pytorch-torch-only', 'trace.json'), (h) => {
      const t = analyzeExport(h, { parts: ['timeline'] }).timeline!;
      const n = (h.sqlite.prepare('SELECT count(*) AS n FROM KINETO_CPU_OPS').get() as { n: number }).n;
      expect(n).toBeGreaterThan(0);
      expect(t.atenOps!.count).toBe(n);
      const order = orderByStart(t.gpuOps.start, t.gpuOps.count);
      for (let k = 1; k < order.length; k++) expect(t.gpuOps.start[order[k]]).toBeGreaterThanOrEqual(t.gpuOps.start[order[k - 1]]);
    });
  });
});
