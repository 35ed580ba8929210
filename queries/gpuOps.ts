import { sql } from 'kysely';
import type { ExportHandle, QueryOptions } from './handle.js';
import { activityFilters } from './filters.js';

/** What kind of GPU work a row is. Numeric so streams of ops fit in typed arrays. */
export const GpuOpKind = { Kernel: 0, Memcpy: 1, Memset: 2, Graph: 3 } as const;
export type GpuOpKind = (typeof GpuOpKind)[keyof typeof GpuOpKind];
export const GPU_OP_KIND_NAMES = ['kernel', 'memcpy', 'memset', 'graph'] as const;

/** The tables that hold GPU work and the kind of op each row is (graph-level traces included). */
export const GPU_OP_SOURCES = [
  { table: 'CUPTI_ACTIVITY_KIND_KERNEL', kind: GpuOpKind.Kernel },
  { table: 'CUPTI_ACTIVITY_KIND_MEMCPY', kind: GpuOpKind.Memcpy },
  { table: 'CUPTI_ACTIVITY_KIND_MEMSET', kind: GpuOpKind.Memset },
  { table: 'CUPTI_ACTIVITY_KIND_GRAPH_TRACE', kind: GpuOpKind.Graph },
] as const;

export interface GpuOpsQueryOptions extends QueryOptions {
  /** Leave out graph-level traces (nsys's own reports do). */
  excludeGraphTraces?: boolean;
}

/**
 * Every GPU operation in one stream: kernels, memcpys, memsets and whole-graph launches, each with
 * its `kind`, the launching PID and the correlation id of its API call. `nameId` is the kernel's
 * demangled name id (null for other kinds). Only tables present in the export are included;
 * returns null when there are none.
 */
export function selectGpuOps(handle: ExportHandle, opts: GpuOpsQueryOptions = {}) {
  const parts = GPU_OP_SOURCES.filter((s) => handle.hasTable(s.table) && !(opts.excludeGraphTraces && s.kind === GpuOpKind.Graph)).map((s) =>
    handle.db
      .selectFrom(`${s.table} as o` as 'CUPTI_ACTIVITY_KIND_KERNEL as o')
      .select([
        'o.start',
        'o.end',
        'o.deviceId',
        'o.streamId',
        'o.correlationId',
        'o.globalPid',
        sql<number>`((o.globalPid >> 24) & 16777215)`.as('pid'),
        sql<GpuOpKind>`${sql.lit(s.kind)}`.as('kind'),
        s.kind === GpuOpKind.Kernel ? sql<number | null>`o.demangledName`.as('nameId') : sql<number | null>`NULL`.as('nameId'),
      ])
      .where((eb) => activityFilters(eb, opts, { start: 'o.start', end: 'o.end', id: 'o.globalPid', device: 'o.deviceId' })),
  );
  if (parts.length === 0) return null;
  let q = parts[0];
  for (const p of parts.slice(1)) q = q.unionAll(p);
  return q;
}
