import type { ExportHandle } from '../../queries/handle.js';
import { selectKinetoCpuOps } from '../../queries/kinetoCpuOps.js';
import { selectLaunchCalls } from '../../queries/launchCalls.js';
import { forEachRow } from '../../queries/run.js';
import { loadStrings } from '../../queries/strings.js';
import { openInput } from '../export/openExport.js';
import { KinetoTraceError } from '../errors.js';
import { sessionStartEpochNs } from './infoReads.js';
import { LoadedExport } from './loadedExport.js';
import { columnMaker, type Column } from '../columns/typedColumn.js';

/**
 * What the PyTorch profiler host side reads: a Kineto trace's aten ops (`KINETO_CPU_OPS`, written
 * by the conversion) and the launch calls nsys (or the conversion) recorded.
 */

/** Aten ops per thread in time order (outer first), with nesting. */
export interface CpuOpColumns {
  count: number;
  pid: Int32Array;
  tid: Int32Array;
  start: Float64Array;
  end: Float64Array;
  selfNs: Float64Array;
  nameId: Int32Array;
  depth: Int32Array;
  /** Index of the enclosing op (-1 at depth 0). */
  parent: Int32Array;
  names: Map<number, string>;
  /** Per thread (`pid:tid`): [first, last] index range. */
  threads: Map<string, [number, number]>;
}

/** A PyTorch profiler trace's aten ops (`KINETO_CPU_OPS`), read once; none when the table is absent. */
export function cpuOps(loaded: LoadedExport): CpuOpColumns {
  return loaded.cached('cpuOps', () => loadCpuOps(loaded.handle));
}

function loadCpuOps(handle: ExportHandle): CpuOpColumns {
  const column = columnMaker(1024);
  const cols = {
    rowid: column(Float64Array),
    pid: column(Int32Array),
    tid: column(Int32Array),
    start: column(Float64Array),
    end: column(Float64Array),
    selfNs: column(Float64Array),
    nameId: column(Int32Array),
    depth: column(Int32Array),
    parentRowid: column(Float64Array),
  };
  const all = Object.values(cols) as Column<Float64Array | Int32Array>[];
  let n = 0;
  if (handle.hasTable('KINETO_CPU_OPS')) {
    forEachRow(handle, selectKinetoCpuOps(handle), (rowid: number, pid: number, tid: number, s: number, e: number, self: number | null, nm: number, d: number | null, pr: number | null) => {
      for (const c of all) c.ensure(n + 1);
      cols.rowid.data[n] = rowid;
      cols.pid.data[n] = pid;
      cols.tid.data[n] = tid;
      cols.start.data[n] = s;
      cols.end.data[n] = e;
      cols.selfNs.data[n] = self ?? e - s;
      cols.nameId.data[n] = nm;
      cols.depth.data[n] = d ?? 0;
      cols.parentRowid.data[n] = pr ?? -1;
      n++;
    });
  }
  const rowid = cols.rowid.trim(n);
  const indexOfRowid = new Map<number, number>();
  for (let i = 0; i < n; i++) indexOfRowid.set(rowid[i], i);
  const parentRowid = cols.parentRowid.trim(n);
  const parent = new Int32Array(n);
  for (let i = 0; i < n; i++) parent[i] = parentRowid[i] < 0 ? -1 : (indexOfRowid.get(parentRowid[i]) ?? -1);
  const pid = cols.pid.trim(n);
  const tid = cols.tid.trim(n);
  const threads = new Map<string, [number, number]>();
  for (let i = 0; i < n; i++) {
    const k = `${pid[i]}:${tid[i]}`;
    const r = threads.get(k);
    if (r) r[1] = i;
    else threads.set(k, [i, i]);
  }
  const nameId = cols.nameId.trim(n);
  return {
    count: n,
    pid,
    tid,
    start: cols.start.trim(n),
    end: cols.end.trim(n),
    selfNs: cols.selfNs.trim(n),
    nameId,
    depth: cols.depth.trim(n),
    parent,
    names: loadStrings(handle, new Set(nameId)),
    threads,
  };
}

/** Kernel-launch (`kind` 0) and graph-launch (1) calls, in time order. */
export interface LaunchCallColumns {
  count: number;
  start: Float64Array;
  end: Float64Array;
  pid: Int32Array;
  tid: Int32Array;
  correlationId: Float64Array;
  isGraph: Uint8Array;
}

/** Kernel-launch and graph-launch calls, in time order (read once). */
export function launchCalls(loaded: LoadedExport): LaunchCallColumns {
  return loaded.cached('launchCalls', () => loadLaunchCalls(loaded.handle));
}

function loadLaunchCalls(handle: ExportHandle): LaunchCallColumns {
  const column = columnMaker(1024);
  const start = column(Float64Array);
  const end = column(Float64Array);
  const pid = column(Int32Array);
  const tid = column(Int32Array);
  const corr = column(Float64Array);
  const graph = column(Uint8Array);
  const all = [start, end, pid, tid, corr, graph] as Column<Float64Array | Int32Array | Uint8Array>[];
  let n = 0;
  if (handle.hasTable('CUPTI_ACTIVITY_KIND_RUNTIME') && handle.hasTable('StringIds')) {
    let q = selectLaunchCalls(handle);
    // 2022.x exports repeat calls as CUDA-backtrace rows (eventClass 67).
    if (handle.hasColumn('CUPTI_ACTIVITY_KIND_RUNTIME', 'eventClass')) q = q.where('r.eventClass', '!=', 67);
    forEachRow(handle, q, (s: number, e: number, p: number, t: number, c: number | null, g: number) => {
      for (const col of all) col.ensure(n + 1);
      start.data[n] = s;
      end.data[n] = e;
      pid.data[n] = p;
      tid.data[n] = t;
      corr.data[n] = c ?? NaN;
      graph.data[n] = g ? 1 : 0;
      n++;
    });
  }
  return { count: n, start: start.trim(n), end: end.trim(n), pid: pid.trim(n), tid: tid.trim(n), correlationId: corr.trim(n), isGraph: graph.trim(n) };
}


/** The session start of an export: what aligns its clock with another's; an error naming `file` when absent. */
export function sessionStartUtcNs(loaded: LoadedExport, file: string): bigint {
  const start = sessionStartEpochNs(loaded);
  if (start === null) throw new KinetoTraceError(file, 'no session start time (TARGET_INFO_SESSION_START_TIME): the two clocks cannot be aligned');
  return start;
}

/**
 * A PyTorch profiler trace given beside an nsys export (`--torch-trace`): opened (converted),
 * its aten ops and session start read, closed. A KinetoTraceError for a file that is not one.
 */
export function readTorchTrace(kinetoFile: string): { ops: CpuOpColumns; sessionStartUtcNs: bigint } {
  const kineto = openInput(kinetoFile);
  try {
    if (!kineto.hasTable('KINETO_CPU_OPS')) throw new KinetoTraceError(kinetoFile, '--torch-trace needs a PyTorch profiler trace (.json or .json.gz), not an nsys export');
    const loaded = new LoadedExport(kineto);
    return { ops: cpuOps(loaded), sessionStartUtcNs: sessionStartUtcNs(loaded, kinetoFile) };
  } finally {
    kineto.close();
  }
}
