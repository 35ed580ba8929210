import type { GroupHostSide, IterationHostSide } from '../src/kineto/hostSide.js';
import type { TableColumn, DataTable } from './table.js';
import { formatNs } from './units.js';

/** `aten::copy_ 5.33 ms (86), aten::mm 1.64 ms (25)`: an op list in one cell. */
function opList(items: { name: string; ns: number; count: number }[]): string {
  return items.map((o) => `${o.name} ${formatNs(o.ns)} (${o.count})`).join(', ');
}

/**
 * "Host side (PyTorch profiler)": per iteration, CPU time in aten ops, the top ops by self time,
 * launch calls and how many were made inside an aten op, graph launches, the time from the first
 * op to the first kernel, and the ops whose launches cost the most GPU time.
 */
export function hostSideTable(iterations: readonly IterationHostSide[], title = 'Host side (PyTorch profiler)', notes: string[] = []): DataTable {
  const columns: TableColumn[] = [
    { key: 'iter', header: 'Iter', kind: 'int' },
    { key: 'cpuOpNs', header: 'CPU in aten ops (ns)', kind: 'ns' },
    { key: 'opCount', header: 'Ops', kind: 'int' },
    { key: 'launchCalls', header: 'Launch calls', kind: 'int' },
    { key: 'attributedLaunchCalls', header: 'In an aten op', kind: 'int' },
    { key: 'graphLaunches', header: 'Graph launches', kind: 'int' },
    { key: 'firstOpToFirstKernelNs', header: 'First op to first kernel (ns)', kind: 'ns' },
    { key: 'topOps', header: 'Top ops by self time', kind: 'text' },
    { key: 'gpuTimeByOp', header: 'GPU time by launching op', kind: 'text' },
  ];
  const rows = iterations.map((r) => ({
    iter: r.iter,
    cpuOpNs: r.cpuOpNs,
    opCount: r.opCount,
    launchCalls: r.launchCalls,
    attributedLaunchCalls: r.attributedLaunchCalls,
    graphLaunches: r.graphLaunches,
    firstOpToFirstKernelNs: r.firstOpToFirstKernelNs,
    topOps: opList(r.topOps.map((o) => ({ name: o.name, ns: o.selfNs, count: o.count }))),
    gpuTimeByOp: opList(r.gpuTimeByOp.map((o) => ({ name: o.name, ns: o.kernelNs, count: o.kernels }))),
  }));
  return { title, columns, rows, notes };
}

/** Per batch phase: iterations, CPU time in aten ops, launch calls made inside an op, the top ops by self time. */
export function hostSidePhaseTable(groups: readonly GroupHostSide[], title = 'Top aten ops by phase (self time)'): DataTable {
  const columns: TableColumn[] = [
    { key: 'group', header: 'Phase', kind: 'text' },
    { key: 'iterations', header: 'Iterations', kind: 'int' },
    { key: 'cpuOpNs', header: 'CPU in aten ops (ns)', kind: 'ns' },
    { key: 'launchCalls', header: 'Launch calls', kind: 'int' },
    { key: 'attributedLaunchCalls', header: 'In an aten op', kind: 'int' },
    { key: 'topOps', header: 'Top ops by self time', kind: 'text' },
  ];
  const rows = groups.map((g) => ({
    group: g.group,
    iterations: g.iterations,
    cpuOpNs: g.cpuOpNs,
    launchCalls: g.launchCalls,
    attributedLaunchCalls: g.attributedLaunchCalls,
    topOps: opList(g.topOps.map((o) => ({ name: o.name, ns: o.selfNs, count: o.count }))),
  }));
  return { title, columns, rows };
}
