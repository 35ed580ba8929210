import type { ExportHandle } from '../../queries/handle.js';
import { GpuOpKind, GPU_OP_KIND_NAMES, presentGpuOpSources, selectGpuOpProcessCount, selectGpuOps } from '../../queries/gpuOps.js';
import { selectKernelNameIdPairs } from '../../queries/kernels.js';
import { selectMemcpyKindLabels } from '../../queries/memcpy.js';
import { allRows, forEachRow } from '../../queries/run.js';
import { loadStrings } from '../../queries/strings.js';
import type { CategoryClassifier } from '../categories/rules.js';
import { num, str, usText } from './events.js';
import { Lanes } from './lanes.js';
import { streamTrack, gpuPid, type TrackRegistry } from './tracks.js';
import { requireContract } from '../export/contract.js';

/** Kernel slice names: nsys's short name (`shortName`, the default) or the full demangled signature. */
export type KernelNames = 'short' | 'demangled';

export interface GpuOpSliceOptions {
  classifier: CategoryClassifier;
  kernelNames?: KernelNames;
  /** Only ops overlapping [startNs, endNs) (zero-length ops: starting inside it). */
  window?: { startNs: number; endNs: number };
}

export interface GpuOpSliceStats {
  /** Slices written: one per kernel, memcpy, memset and whole-graph row kept. */
  ops: number;
  byKind: Record<(typeof GPU_OP_KIND_NAMES)[number], number>;
  /** Ops put on an overflow lane because they overlapped the previous op of their stream. */
  overflowOps: number;
  /** (device, stream) pairs, and how many of them needed overflow lanes. */
  streams: number;
  streamsWithOverflow: number;
  devices: number[];
}

/** The kernel name ids in use (short and demangled), resolved in one pass over `StringIds`. */
function kernelStrings(handle: ExportHandle, nameCol: 'shortName' | 'demangledName'): Map<number, string> {
  if (!handle.hasTable('CUPTI_ACTIVITY_KIND_KERNEL')) return new Map();
  const pairs = allRows(handle, selectKernelNameIdPairs(handle, nameCol), { raw: true }) as unknown as [number | null, number | null][];
  const ids = new Set<number>();
  for (const [a, b] of pairs) {
    if (a != null) ids.add(a);
    if (b != null) ids.add(b);
  }
  return loadStrings(handle, ids);
}

function memcpyLabels(handle: ExportHandle): Map<number, string> {
  const out = new Map<number, string>();
  if (!handle.hasTable('ENUM_CUDA_MEMCPY_OPER')) return out;
  for (const { id, label } of allRows(handle, selectMemcpyKindLabels(handle))) out.set(id, label as string);
  return out;
}

/** Whether GPU work of more than one process is in the export (then each slice names its pid). */
function multiProcess(handle: ExportHandle): boolean {
  const query = selectGpuOpProcessCount(handle);
  return query !== null && allRows(handle, query)[0].n > 1;
}

interface StreamState {
  lanes: Lanes;
  /** tid per lane. */
  tids: number[];
}

/**
 * Streams every GPU op of the export (or of a time window), in start order, into `X` slices on
 * one track per (device, stream) — `GPU d stream s`, pid `GPU d` — with overflow lanes for the
 * rare op that overlaps the previous one on its stream (see lanes.ts). SQLite sorts the union of
 * the op tables (spilling to temp files when large); rows reach JS through `forEachRow` and leave
 * as JSON text through `emit`, so nothing per op is kept.
 *
 * Slice names: kernels their short (default) or demangled name; memcpys
 * `[CUDA memcpy Host-to-Device]`; memsets `[CUDA memset]`; whole-graph launches (graph-level
 * CUDA-graph trace) `[CUDA graph <graphId>]`. `cat` is the kind; args: `category` (the kernel
 * category table; graph launches `cuda_graph`), `correlationId`, `bytes` (memcpy/memset),
 * `graphExecId` (graphs), and `pid` when several processes share the export.
 */
export function writeGpuOps(handle: ExportHandle, tracks: TrackRegistry, emit: (json: string) => void, opts: GpuOpSliceOptions): GpuOpSliceStats {
  const stats: GpuOpSliceStats = { ops: 0, byKind: { kernel: 0, memcpy: 0, memset: 0, graph: 0 }, overflowOps: 0, streams: 0, streamsWithOverflow: 0, devices: [] };
  const present = presentGpuOpSources(handle);
  if (present.length === 0) return stats;
  requireContract(handle, 'gpuOps');
  const shortCol = handle.hasColumn('CUPTI_ACTIVITY_KIND_KERNEL', 'shortName') && opts.kernelNames !== 'demangled' ? 'shortName' : 'demangledName';
  const strings = kernelStrings(handle, shortCol);
  const copyLabels = memcpyLabels(handle);
  const withPid = multiProcess(handle);
  const classifier = opts.classifier;
  const cats = classifier.categories;

  const w = opts.window;
  // Every table present (present.length > 0, so not null), in one UNION ALL.
  const query = selectGpuOps(handle, {
    globalPid: false,
    sliceColumns: { kernelName: shortCol },
    ...(w ? { startNs: w.startNs, endNs: w.endNs, keepZeroLengthAtStart: true } : {}),
  })!;
  // Start order is all the lanes need (ties in any order); sorting by end too costs ~15% more.
  const ordered = query.orderBy('start');

  // Per-op JSON after `"dur":...`: name, cat and the start of args, cached per name.
  const kernelFrag = new Map<number, string>();
  const memcpyFrag = new Map<number, string>();
  const graphFrag = new Map<number, string>();
  const memsetFrag = `,"name":"[CUDA memset]","cat":"memset","args":{"category":${str(cats[classifier.classify('[CUDA memset]')])}`;
  const graphCategory = str(cats[classifier.classify('[CUDA graph]')]);
  const fragment = (kind: number, nameId: number | null, catId: number | null): string => {
    switch (kind) {
      case GpuOpKind.Kernel: {
        const key = catId ?? -1;
        let f = kernelFrag.get(key);
        if (f === undefined) {
          const full = catId == null ? '' : (strings.get(catId) ?? '');
          const name = nameId == null ? '[kernel]' : (strings.get(nameId) ?? `[kernel ${nameId}]`);
          f = `,"name":${str(name)},"cat":"kernel","args":{"category":${str(cats[classifier.classify(full)])}`;
          kernelFrag.set(key, f);
        }
        return f;
      }
      case GpuOpKind.Memcpy: {
        const key = nameId ?? -1;
        let f = memcpyFrag.get(key);
        if (f === undefined) {
          const label = nameId == null ? 'Unknown' : (copyLabels.get(nameId) ?? `copyKind ${nameId}`);
          const name = `[CUDA memcpy ${label}]`;
          f = `,"name":${str(name)},"cat":"memcpy","args":{"category":${str(cats[classifier.classify(name)])}`;
          memcpyFrag.set(key, f);
        }
        return f;
      }
      case GpuOpKind.Graph: {
        const key = nameId ?? -1;
        let f = graphFrag.get(key);
        if (f === undefined) {
          f = `,"name":${str(nameId == null ? '[CUDA graph]' : `[CUDA graph ${nameId}]`)},"cat":"graph","args":{"category":${graphCategory}`;
          graphFrag.set(key, f);
        }
        return f;
      }
      default:
        return memsetFrag;
    }
  };

  const devices = new Map<number, Map<number, StreamState>>();
  let lastDevice = NaN;
  let lastStreams: Map<number, StreamState> | undefined;
  const kindNames = GPU_OP_KIND_NAMES;
  forEachRow(
    handle,
    ordered,
    (start: number, end: number, deviceId: number, streamId: number | null, corr: number | null, pid: number, kind: number, nameId: number | null, catId: number | null, extra: number | null) => {
      if (deviceId !== lastDevice) {
        lastDevice = deviceId;
        lastStreams = devices.get(deviceId);
        if (!lastStreams) devices.set(deviceId, (lastStreams = new Map()));
      }
      const sKey = streamId ?? -1;
      let st = lastStreams!.get(sKey);
      if (!st) {
        st = { lanes: new Lanes(), tids: [] };
        lastStreams!.set(sKey, st);
      }
      const lane = st.lanes.assign(start, end);
      let tid = st.tids[lane];
      if (tid === undefined) tid = st.tids[lane] = streamTrack(tracks, deviceId, streamId, lane);
      if (lane > 0) stats.overflowOps++;
      // Every value from the export is serialized (num/str), never spliced: a TEXT correlationId
      // such as `1,"x":{...}}` stays a string inside this event.
      let ev = `{"ph":"X","pid":${num(gpuPid(deviceId))},"tid":${num(tid)},"ts":${usText(start)},"dur":${usText(end - start)}${fragment(kind, nameId, catId)}`;
      if (corr != null) ev += `,"correlationId":${num(corr)}`;
      if (extra != null) ev += kind === GpuOpKind.Graph ? `,"graphExecId":${num(extra)}` : `,"bytes":${num(extra)}`;
      if (withPid) ev += `,"pid":${num(pid)}`;
      emit(ev + '}}');
      stats.ops++;
      stats.byKind[kindNames[kind]]++;
    },
  );
  for (const [d, streams] of devices) {
    stats.devices.push(d);
    for (const st of streams.values()) {
      stats.streams++;
      if (st.lanes.count > 1) stats.streamsWithOverflow++;
    }
  }
  stats.devices.sort((a, b) => a - b);
  return stats;
}
