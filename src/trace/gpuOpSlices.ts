import { GpuOpKind, GPU_OP_KIND_NAMES } from '../load/gpuOpColumns.js';
import { forEachInStartOrder } from '../math/startOrder.js';
import type { Timeline } from '../analysis/timeline.js';
import type { CategoryClassifier } from '../categories/rules.js';
import { num, str, usText } from './events.js';
import { Lanes } from './lanes.js';
import { streamTrack, gpuPid, type TrackRegistry } from './tracks.js';
import { NO_STRING_ID } from '../columns/typedColumn.js';

export interface GpuOpSliceOptions {
  classifier: CategoryClassifier;
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

interface StreamState {
  lanes: Lanes;
  /** tid per lane. */
  tids: number[];
}

/**
 * Writes every GPU op of the timeline (or of a time window), in start order, as `X` slices on
 * one track per (device, stream) — `GPU d stream s`, pid `GPU d` — with overflow lanes for the
 * rare op that overlaps the previous one on its stream (see lanes.ts). Each op leaves as JSON
 * text through `emit`; nothing per op is kept.
 *
 * Slice names: kernels their short (default) or demangled name; memcpys
 * `[CUDA memcpy Host-to-Device]`; memsets `[CUDA memset]`; whole-graph launches (graph-level
 * CUDA-graph trace) `[CUDA graph <graphId>]`. `cat` is the kind; args: `category` (the kernel
 * category table; graph launches `cuda_graph`), `correlationId`, `bytes` (memcpy/memset),
 * `graphExecId` (graphs), and `pid` when several processes share the export.
 */
export function writeGpuOps(timeline: Timeline, tracks: TrackRegistry, emit: (json: string) => void, opts: GpuOpSliceOptions): GpuOpSliceStats {
  const stats: GpuOpSliceStats = { ops: 0, byKind: { kernel: 0, memcpy: 0, memset: 0, graph: 0 }, overflowOps: 0, streams: 0, streamsWithOverflow: 0, devices: [] };
  const { gpuOps: ops } = timeline;
  const withPid = timeline.gpuProcesses > 1;
  const fragment = sliceFragments(timeline, opts.classifier);
  const devices = new Map<number, Map<number, StreamState>>();
  let lastDevice = NaN;
  let lastStreams: Map<number, StreamState> | undefined;
  const kindNames = GPU_OP_KIND_NAMES;
  const { start: starts, end: ends, deviceId: deviceIds, streamId: streamIds, correlationId: corrs, pid: pids, kind: kinds, nameId: catIds } = ops;
  const { nameId: sliceNames, extra: extras, extraFrom, verbatim } = ops.slices;
  const w = opts.window;
  forEachInStartOrder(starts, ops.count, (i) => {
    const start = starts[i];
    const end = ends[i];
    // The window keeps ops overlapping [startNs, endNs), and zero-length ops starting inside it.
    if (w && !(start < w.endNs && (end > w.startNs || start >= w.startNs))) return;
    const deviceId = deviceIds[i];
    const kind = kinds[i];
    if (deviceId !== lastDevice) {
      lastDevice = deviceId;
      lastStreams = devices.get(deviceId);
      if (!lastStreams) devices.set(deviceId, (lastStreams = new Map()));
    }
    const sKey = streamIds[i];
    let st = lastStreams!.get(sKey);
    if (!st) {
      st = { lanes: new Lanes(), tids: [] };
      lastStreams!.set(sKey, st);
    }
    const lane = st.lanes.assign(start, end);
    let tid = st.tids[lane];
    if (tid === undefined) tid = st.tids[lane] = streamTrack(tracks, deviceId, sKey === -1 ? null : sKey, lane);
    if (lane > 0) stats.overflowOps++;
    const odd = verbatim.size > 0 ? verbatim.get(i) : undefined;
    const sliceName = odd && 'nameId' in odd ? odd.nameId : sliceNames[i] < 0 ? null : sliceNames[i];
    const catId = odd && 'catId' in odd ? odd.catId : catIds[i] === NO_STRING_ID ? null : catIds[i];
    const corr = odd && 'correlationId' in odd ? odd.correlationId : Number.isNaN(corrs[i]) ? null : corrs[i];
    const extra = odd && 'extra' in odd ? odd.extra : i < extraFrom || Number.isNaN(extras[i - extraFrom]) ? null : extras[i - extraFrom];
    // Every value from the export is serialized (num/str), never spliced: a TEXT correlationId
    // such as `1,"x":{...}}` stays a string inside this event.
    let ev = `{"ph":"X","pid":${num(gpuPid(deviceId))},"tid":${num(tid)},"ts":${usText(start)},"dur":${usText(end - start)}${fragment(kind, sliceName, catId)}`;
    if (corr != null) ev += `,"correlationId":${num(corr)}`;
    if (extra != null) ev += kind === GpuOpKind.Graph ? `,"graphExecId":${num(extra)}` : `,"bytes":${num(extra)}`;
    if (withPid) ev += `,"pid":${num(odd && 'pid' in odd ? odd.pid : pids[i])}`;
    emit(ev + '}}');
    stats.ops++;
    stats.byKind[kindNames[kind]]++;
  });
  countStreams(devices, stats);
  return stats;
}

/**
 * The per-op JSON after `"dur":...` (name, cat and the start of args) of an op of `kind` with
 * these slice name and demangled-name ids, cached per name. Ids are numbers, or the text a
 * damaged export held (kept verbatim: never a string id).
 */
function sliceFragments(timeline: Timeline, classifier: CategoryClassifier): (kind: number, nameId: unknown, catId: unknown) => string {
  const { kernelStrings: strings, copyKinds: copyLabels } = timeline;
  const cats = classifier.categories;
  const kernelFrag = new Map<unknown, string>();
  const memcpyFrag = new Map<unknown, string>();
  const graphFrag = new Map<unknown, string>();
  const memsetFrag = `,"name":"[CUDA memset]","cat":"memset","args":{"category":${str(cats[classifier.classify('[CUDA memset]')])}`;
  const graphCategory = str(cats[classifier.classify('[CUDA graph]')]);
  return (kind: number, nameId: unknown, catId: unknown): string => {
    switch (kind) {
      case GpuOpKind.Kernel: {
        const key = catId ?? -1;
        let f = kernelFrag.get(key);
        if (f === undefined) {
          const full = catId == null ? '' : (strings.get(catId as number) ?? '');
          const name = nameId == null ? '[kernel]' : (strings.get(nameId as number) ?? `[kernel ${String(nameId)}]`);
          f = `,"name":${str(name)},"cat":"kernel","args":{"category":${str(cats[classifier.classify(full)])}`;
          kernelFrag.set(key, f);
        }
        return f;
      }
      case GpuOpKind.Memcpy: {
        const key = nameId ?? -1;
        let f = memcpyFrag.get(key);
        if (f === undefined) {
          const label = nameId == null ? 'Unknown' : (copyLabels.get(nameId as number) ?? `copyKind ${String(nameId)}`);
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
          f = `,"name":${str(nameId == null ? '[CUDA graph]' : `[CUDA graph ${String(nameId)}]`)},"cat":"graph","args":{"category":${graphCategory}`;
          graphFrag.set(key, f);
        }
        return f;
      }
      default:
        return memsetFrag;
    }
  };
}

/** The devices written (ascending), their streams, and the streams that needed overflow lanes, into `stats`. */
function countStreams(devices: Map<number, Map<number, StreamState>>, stats: GpuOpSliceStats): void {
  for (const [d, streams] of devices) {
    stats.devices.push(d);
    for (const st of streams.values()) {
      stats.streams++;
      if (st.lanes.count > 1) stats.streamsWithOverflow++;
    }
  }
  stats.devices.sort((a, b) => a - b);
}
