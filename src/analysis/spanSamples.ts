import type { CategoryClassifier } from '../categories/rules.js';
import type { ServingSpan } from './servingSpan.js';
import { GpuOpKind } from '../load/gpuOpColumns.js';
import type { LoadedExport } from '../load/loadedExport.js';
import type { CategoryInstances, SpanSamples } from './servingSpan.js';

/** Kernel names kept with their instance durations (by total time). */
export const TOP_KERNELS = 30;

/** Indexes of the span's kernels and graph launches: ops of serving processes starting inside their process's span. */
function opsInSpan(loaded: LoadedExport, span: ServingSpan): number[] {
  const ops = loaded.gpuOps();
  const spans = new Map(span.processes.map((p) => [p.pid, p]));
  const out: number[] = [];
  for (let i = 0; i < ops.count; i++) {
    if (ops.kind[i] !== GpuOpKind.Kernel && ops.kind[i] !== GpuOpKind.Graph) continue;
    const p = spans.get(ops.pid[i]);
    if (p && ops.start[i] >= p.startNs && ops.start[i] <= p.endNs) out.push(i);
  }
  return out;
}

export function spanSamples(loaded: LoadedExport, span: ServingSpan, classifier: CategoryClassifier): SpanSamples {
  const ops = loaded.gpuOps();
  // Whole-graph launches have no kernel name: one stratum of their own.
  const GRAPH = -2;
  const byName = new Map<number, { category: string; total: number; durations: number[] }>();
  for (const i of opsInSpan(loaded, span)) {
    const id = ops.kind[i] === GpuOpKind.Graph ? GRAPH : ops.nameId[i];
    let n = byName.get(id);
    if (!n) {
      const category = id === GRAPH ? 'cuda_graph' : classifier.categories[classifier.classify(loaded.stringOf(id) ?? '')];
      byName.set(id, (n = { category, total: 0, durations: [] }));
    }
    const d = ops.end[i] - ops.start[i];
    n.total += d;
    n.durations.push(d);
  }
  const categories: Record<string, CategoryInstances> = {};
  for (const n of byName.values()) {
    const c = (categories[n.category] ??= { instances: 0, totalNs: 0, withinNameSqNs: 0 });
    const mean = n.total / n.durations.length;
    c.instances += n.durations.length;
    c.totalNs += n.total;
    for (const d of n.durations) c.withinNameSqNs += (d - mean) ** 2;
  }
  // Ties in total time by name, so the kept names do not depend on the string table's order.
  const named = [...byName.entries()].filter(([id]) => id !== GRAPH).map(([id, v]) => ({ name: loaded.stringOf(id) ?? `<string ${id}>`, ...v }));
  named.sort((a, b) => b.total - a.total || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { categories, kernelInstances: named.slice(0, TOP_KERNELS).map((n) => ({ name: n.name, category: n.category, durations: n.durations })) };
}
