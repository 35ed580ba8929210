import { sql, type AliasedRawBuilder, type Expression, type SelectQueryBuilder, type SqlBool } from 'kysely';
import type { ExportHandle, QueryOptions } from './handle.js';
import { activityFilters } from './filters.js';
import { validIntervalSql } from './validRows.js';
import { gpuRowGlobalPid, idRef, pidOf } from './globalIds.js';

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
export type GpuOpSource = (typeof GPU_OP_SOURCES)[number];

export interface GpuOpsQueryOptions extends QueryOptions {
  /** Leave out graph-level traces (nsys's own reports do). */
  excludeGraphTraces?: boolean;
  /** Include the raw `globalPid` column (before `pid`). Default true. */
  globalPid?: boolean;
  /** Include the `kind` column (before `nameId`). Default true. */
  kind?: boolean;
  /**
   * Columns for naming trace slices, replacing the default `nameId` (the kernel's demangled name
   * id, NULL for other kinds): `nameId` = the kernel's `kernelName` id, the memcpy's `copyKind`,
   * the graph's `graphId` (NULL for memsets); then `catId` (the kernel's demangled name id, for its
   * category) and `extra` (`bytes` of memcpys and memsets, `graphExecId` of graphs). Columns the
   * export lacks read as NULL.
   */
  sliceColumns?: { kernelName: 'shortName' | 'demangledName' };
  /**
   * Append `launchIdUpper`: `globalPid >> 48` (the hardware and VM ids above the PID) when the
   * thread part of `globalPid` is 0, else NULL (NULL `globalPid` too): what the NVTX GPU projection
   * needs of every op to join it from columns (see `selectIrregularLaunchId`).
   */
  launchIdUpper?: boolean;
  /**
   * Memcpys only: append `bytes`, `copyKind`, `srcKind` and `dstKind` (the last two NULL where this
   * nsys version does not record them), what the memory traffic reads (`selectMemcpyTraffic`), so
   * one scan of the memcpy table serves the ops and the traffic.
   */
  trafficColumns?: boolean;
  /**
   * Leave out rows with unusable times (`validIntervalSql`). Default true; false: every row, for a
   * loader that tests them itself (`isValidInterval`) and counts those it leaves out.
   */
  checkTimes?: boolean;
  /**
   * With `startNs`/`endNs`: also keep ops that start at or after `startNs` but do not end after
   * it (zero-length ops at the window's start), which the plain overlap test drops.
   */
  keepZeroLengthAtStart?: boolean;
}

/** One GPU op row; which optional columns are present depends on the options. */
export interface GpuOpRow {
  start: number;
  end: number;
  deviceId: number;
  streamId: number | null;
  correlationId: number | null;
  globalPid?: number | null;
  pid: number;
  kind?: GpuOpKind;
  nameId: number | null;
  catId?: number | null;
  extra?: number | null;
}

// The column list varies with the options (and the table), so the builder is typed by its row.
type GpuOpQuery = SelectQueryBuilder<any, any, GpuOpRow>;

/**
 * The GPU ops of one table (`GPU_OP_SOURCES`), in select order: start, end, deviceId, streamId,
 * correlationId, [globalPid], pid, [kind], nameId, [catId, extra]. The one GPU-op query: the typed
 * columns of the analyses, the trace's slices and `selectGpuOps` all read through it.
 */
export function selectGpuOpsOf(handle: ExportHandle, source: GpuOpSource, opts: GpuOpsQueryOptions = {}): GpuOpQuery {
  const t = source.table;
  const col = (column: string) => (handle.hasColumn(t, column) ? sql.ref(column) : sql`NULL`);
  const kernel = source.kind === GpuOpKind.Kernel;
  // The column, or the one API-calling process's globalPid bound in its place (gpuRowGlobalPid).
  const globalPid = gpuRowGlobalPid(handle, t);
  const globalPidSql = idRef(globalPid);
  const columns: (string | AliasedRawBuilder<unknown, string>)[] = ['start', 'end', 'deviceId', 'streamId', 'correlationId'];
  if (opts.globalPid ?? true) columns.push(typeof globalPid === 'string' ? 'globalPid' : sql<number | null>`${globalPid}`.as('globalPid'));
  columns.push(pidOf(globalPid).as('pid'));
  if (opts.kind ?? true) columns.push(sql<GpuOpKind>`${sql.lit(source.kind)}`.as('kind'));
  if (opts.sliceColumns) {
    const nameId = kernel
      ? sql.ref(opts.sliceColumns.kernelName)
      : source.kind === GpuOpKind.Memcpy
        ? col('copyKind')
        : source.kind === GpuOpKind.Graph
          ? col('graphId')
          : sql`NULL`;
    const extra = source.kind === GpuOpKind.Memcpy || source.kind === GpuOpKind.Memset ? col('bytes') : source.kind === GpuOpKind.Graph ? col('graphExecId') : sql`NULL`;
    columns.push(sql<number | null>`${nameId}`.as('nameId'), sql<number | null>`${kernel ? sql.ref('demangledName') : sql`NULL`}`.as('catId'), sql<number | null>`${extra}`.as('extra'));
  } else {
    columns.push((kernel ? sql<number | null>`demangledName` : sql<number | null>`NULL`).as('nameId'));
  }
  if (opts.launchIdUpper) columns.push(sql<number | null>`CASE WHEN ${globalPidSql} & 16777215 = 0 THEN ${globalPidSql} >> 48 END`.as('launchIdUpper'));
  if (opts.trafficColumns && source.kind === GpuOpKind.Memcpy) {
    const kinds = handle.hasColumn(t, 'srcKind') && handle.hasColumn(t, 'dstKind');
    columns.push(sql<number | null>`${col('bytes')}`.as('bytes'), sql<number | null>`${col('copyKind')}`.as('copyKind'), ...(kinds ? ['srcKind', 'dstKind'] : [sql<null>`NULL`.as('srcKind'), sql<null>`NULL`.as('dstKind')]));
  }
  const zeroLengthFrom = opts.keepZeroLengthAtStart && opts.startNs !== undefined ? opts.startNs : undefined;
  const filters = zeroLengthFrom === undefined ? opts : { ...opts, startNs: undefined };
  // Unaliased, unqualified columns: an alias costs ~10% on the trace's sorted union (measured).
  let q = handle.db.selectFrom(t as 'CUPTI_ACTIVITY_KIND_KERNEL').select(columns as never);
  // Only rows with usable times (validRows.ts), unless the caller tests them itself.
  if (opts.checkTimes ?? true) q = q.where(sql<SqlBool>`${sql.raw(validIntervalSql())}`);
  if (filters.pid !== undefined || filters.deviceId !== undefined || filters.startNs !== undefined || filters.endNs !== undefined) {
    q = q.where((eb) => activityFilters(eb, filters, { start: 'start', end: 'end', id: globalPid, device: 'deviceId' }));
  }
  if (zeroLengthFrom !== undefined) q = q.where((eb) => eb.or([eb('end', '>', zeroLengthFrom), eb('start', '>=', zeroLengthFrom)]) as Expression<SqlBool>);
  return q as unknown as GpuOpQuery;
}

/** The GPU op tables this export has (graph-level traces left out on request). */
export function presentGpuOpSources(handle: ExportHandle, opts: Pick<GpuOpsQueryOptions, 'excludeGraphTraces'> = {}): GpuOpSource[] {
  return GPU_OP_SOURCES.filter((s) => handle.hasTable(s.table) && !(opts.excludeGraphTraces && s.kind === GpuOpKind.Graph));
}

/**
 * Every GPU operation in one stream (`selectGpuOpsOf` over every table present, UNION ALL):
 * kernels, memcpys, memsets and whole-graph launches, each with its `kind`, the launching PID and
 * the correlation id of its API call. By default `nameId` is the kernel's demangled name id (null
 * for other kinds). Returns null when the export has none of the tables.
 */
export function selectGpuOps(handle: ExportHandle, opts: GpuOpsQueryOptions = {}): GpuOpQuery | null {
  const parts = presentGpuOpSources(handle, opts).map((s) => selectGpuOpsOf(handle, s, opts));
  if (parts.length === 0) return null;
  let q = parts[0];
  for (const p of parts.slice(1)) q = q.unionAll(p);
  return q;
}

/** How many distinct globalPids ran GPU work (a one-row `n`); null without GPU op tables. */
export function selectGpuOpProcessCount(handle: ExportHandle) {
  const parts = presentGpuOpSources(handle).map((s) => {
    const id = gpuRowGlobalPid(handle, s.table);
    return handle.db
      .selectFrom(s.table as 'CUPTI_ACTIVITY_KIND_KERNEL')
      .select(sql<number | null>`${idRef(id)}`.as('globalPid'))
      .distinct();
  });
  if (parts.length === 0) return null;
  let u = parts[0];
  for (const p of parts.slice(1)) u = u.union(p);
  return handle.db.selectFrom(u.as('p')).select(sql<number>`count(*)`.as('n'));
}
