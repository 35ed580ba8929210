import { launchCalls, readTorchTrace, sessionStartUtcNs } from '../load/kinetoReads.js';
import type { LoadedExport } from '../load/loadedExport.js';
import { kernelsOf } from './atenOps.js';
import { alignTorchClock, type TorchAlignmentOptions, type TorchClockAlignment } from './clockAlignment.js';
import { hostSideByIteration, type CpuOpColumns, type GroupHostSide, type HostSideTotals, type HostWindow, type IterationHostSide, type LaunchCallColumns } from './hostSide.js';

/** Dual mode: an nsys export and the PyTorch profiler trace of the same run, on one clock. */
export interface TorchTraceAttachment {
  kinetoFile: string;
  alignment: TorchClockAlignment;
  /** Per nsys iteration: aten-op CPU time, launch calls and the aten op each was made in, GPU time by op. */
  iterations: IterationHostSide[];
  totals: HostSideTotals;
  /** Per `groupOf` group (e.g. batch phase), when asked. */
  groups: GroupHostSide[];
  cpuOps: number;
  /** Aten ops that start outside every nsys iteration (before the first, after the last, other threads' gaps). */
  opsOutsideIterations: number;
  /** The Kineto thread renamed to nsys's launching thread when their ids differ (other pid namespace); null when they agree. */
  threadMapping: { kineto: string; nsys: string } | null;
  notes: string[];
}

/** The busiest thread of each side, when no Kineto thread is one nsys saw launching. */
function mapThreads(ops: CpuOpColumns, launches: LaunchCallColumns): TorchTraceAttachment['threadMapping'] {
  const launchThreads = new Map<string, number>();
  for (let i = 0; i < launches.count; i++) {
    const k = `${launches.pid[i]}:${launches.tid[i]}`;
    launchThreads.set(k, (launchThreads.get(k) ?? 0) + 1);
  }
  if ([...ops.threads.keys()].some((k) => launchThreads.has(k)) || launchThreads.size === 0 || ops.threads.size === 0) return null;
  const nsys = [...launchThreads].sort((a, b) => b[1] - a[1])[0][0];
  const kineto = [...ops.threads].sort((a, b) => b[1][1] - b[1][0] - (a[1][1] - a[1][0]))[0][0];
  const [first, last] = ops.threads.get(kineto)!;
  const [pid, tid] = nsys.split(':').map(Number);
  for (let i = first; i <= last; i++) {
    ops.pid[i] = pid;
    ops.tid[i] = tid;
  }
  ops.threads.delete(kineto);
  ops.threads.set(nsys, [first, last]);
  return { kineto, nsys };
}

/**
 * Attaches a PyTorch profiler trace (`kinetoFile`, run beside nsys: TensorRT-LLM's
 * TLLM_TORCH_PROFILE_TRACE) to an nsys export: aligns the clocks (session starts, refined by the
 * launch calls nsys saw, see `alignTorchClock`), then gives each of `iterations` (nsys windows, e.g.
 * `analyzeIterations` rows) its aten-op CPU time, and each nsys launch call the aten op that
 * contains it. Plain data; says what could not be matched.
 */
export function attachTorchTrace(
  loaded: LoadedExport,
  kinetoFile: string,
  iterations: readonly HostWindow[],
  opts: TorchAlignmentOptions & { topN?: number; groupOf?: (iter: number) => string | null } = {},
): TorchTraceAttachment {
  const { ops, sessionStartUtcNs: kinetoStart } = readTorchTrace(kinetoFile);
  const launches = launchCalls(loaded);
  const threadMapping = mapThreads(ops, launches);
  const initial = Number(kinetoStart - sessionStartUtcNs(loaded, loaded.path));
  const alignment = alignTorchClock(ops, launches, initial, opts);
  const { iterations: rows, totals, groups } = hostSideByIteration(ops, launches, kernelsOf(loaded.gpuOps()), iterations, {
    shiftNs: alignment.offsetNs,
    topN: opts.topN,
    groupOf: opts.groupOf,
  });
  const inIterations = rows.reduce((a, r) => a + r.opCount, 0);
  const notes: string[] = [];
  const us = (ns: number) => `${(ns / 1000).toFixed(1)} us`;
  notes.push(
    Number.isNaN(alignment.spreadNs)
      ? `clocks: no launch call fell inside an aten op near the session-start offset (${us(initial)}): offset kept unrefined; is the PyTorch profiler trace from this run?`
      : `clocks: Kineto + ${us(alignment.offsetNs)} = nsys (session starts: ${us(initial)}; refined by ${us(alignment.refinementNs)} on ${alignment.matchedLaunches} of ${alignment.sampledLaunches} launch calls; spread ${us(alignment.spreadNs)}${alignment.equallyGoodRanges ? `; ${alignment.equallyGoodRanges} other offsets as good` : ''})`,
  );
  if (threadMapping) notes.push(`thread ids differ between the two traces: Kineto thread ${threadMapping.kineto} taken as nsys thread ${threadMapping.nsys} (the busiest of each)`);
  if (totals.attributedShare !== null) {
    notes.push(
      `${totals.attributedLaunchCalls} of ${totals.launchCalls} kernel-launch calls in iterations (${(totals.attributedShare * 100).toFixed(1)}%) attributed to the aten op that contains them; graph launches: ${totals.attributedGraphLaunches} of ${totals.graphLaunches}`,
    );
  }
  if (ops.count - inIterations > 0) notes.push(`${ops.count - inIterations} of ${ops.count} aten ops start outside the nsys iterations`);
  return { kinetoFile, alignment, iterations: rows, totals, groups, cpuOps: ops.count, opsOutsideIterations: ops.count - inIterations, threadMapping, notes };
}
