import { WindowIndex } from '../iterations/windowIndex.js';
import type { LoadedExport } from '../load/loadedExport.js';
import { enumLabels, forEachMemcpy, memoryUsageEvents } from '../load/memoryReads.js';

/** Memory kinds of ENUM_CUDA_MEM_KIND that are stable across nsys versions. */
export const MEM_KIND_PAGEABLE = 0;
/** Static device memory (module globals loaded with the code): not an allocation the loop makes. */
const MEM_KIND_DEVICE_STATIC = 5;
const MEM_KIND_MANAGED_STATIC = 6;
const DIRECTION_FALLBACK: Record<number, string> = { 1: 'Host-to-Device', 2: 'Device-to-Host', 8: 'Device-to-Device', 10: 'Peer-to-Peer' };

export interface MemcpyDirection {
  direction: string;
  copies: number;
  bytes: number;
  /** Summed GPU duration of the copies. */
  ns: number;
  /** Copies whose host side is pageable memory (srcKind or dstKind = Pageable). */
  pageableCopies: number;
  pageableBytes: number;
  pageableNs: number;
  /** Copies that start inside an iteration window of their process. */
  inIterations: number;
  inIterationsBytes: number;
  inIterationsNs: number;
  pageableInIterations: number;
  pageableInIterationsNs: number;
}

export interface MemcpyIteration {
  iter: number;
  startNs: number;
  h2dCopies: number;
  h2dBytes: number;
  d2hCopies: number;
  d2hBytes: number;
  pageableCopies: number;
  pageableNs: number;
}

export interface AllocationEvent {
  startNs: number;
  bytes: number;
  memKind: string;
  deviceId: number;
  iter: number | null;
}

export interface MemoryTraffic {
  /** The export has a memcpy table. */
  memcpyTraced: boolean;
  /** srcKind/dstKind recorded (pageable vs pinned can be told apart). */
  memoryKindsRecorded: boolean;
  byDirection: MemcpyDirection[];
  /** Per iteration (every iteration, in the order given). */
  iterations: MemcpyIteration[];
  /** `--cuda-memory-usage` was on (CUDA_GPU_MEMORY_USAGE_EVENTS present). */
  allocationsTraced: boolean;
  allocationEvents: number;
  /** Allocations of non-static memory (static device memory is module loading). */
  allocations: number;
  deallocations: number;
  /** Allocations that happen inside an iteration window of their process. */
  allocationsInIterations: number;
  allocationBytesInIterations: number;
  /** Iterations with at least one allocation. */
  iterationsWithAllocations: number;
  /** The largest allocations inside iterations (at most 5). */
  largestInIterations: AllocationEvent[];
  /** Without iteration windows: allocations between the first and last GPU op (`gpuSpan`), and the largest 5. */
  allocationsDuringGpuWork: number;
  largestDuringGpuWork: AllocationEvent[];
}

interface Window {
  iter: number;
  pid: number;
  startNs: number;
  endNs: number;
}


/**
 * Memory traffic per iteration: memcpys by direction and bytes, those from or to pageable host
 * memory, and (with `--cuda-memory-usage`) the allocations made inside the iteration loop. A copy or
 * an allocation belongs to the iteration whose window holds its start (GPU start for copies).
 */
export function analyzeMemoryTraffic(loaded: LoadedExport, iterations: readonly Window[], gpuSpan?: { startNs: number; endNs: number } | null): MemoryTraffic {
  const windows = new WindowIndex(iterations);
  const lookup = (pid: number, t: number) => windows.at(pid, t);
  return {
    memcpyTraced: loaded.hasTable('CUPTI_ACTIVITY_KIND_MEMCPY'),
    ...memcpyTraffic(loaded, iterations, lookup),
    allocationsTraced: loaded.hasTable('CUDA_GPU_MEMORY_USAGE_EVENTS'),
    ...allocationTraffic(loaded, iterations, lookup, gpuSpan),
  };
}

/** Window index (in `iterations`) holding time `t` of process `pid`, or -1. */
type WindowLookup = (pid: number, t: number) => number;

/** The memcpys by direction (most bytes first) and per iteration, pageable ones apart. */
function memcpyTraffic(loaded: LoadedExport, iterations: readonly Window[], lookup: WindowLookup): Pick<MemoryTraffic, 'memoryKindsRecorded' | 'byDirection' | 'iterations'> {
  const opLabels = enumLabels(loaded, 'ENUM_CUDA_MEMCPY_OPER');
  const byDir = new Map<string, MemcpyDirection>();
  const perIter: MemcpyIteration[] = iterations.map((w) => ({ iter: w.iter, startNs: w.startNs, h2dCopies: 0, h2dBytes: 0, d2hCopies: 0, d2hBytes: 0, pageableCopies: 0, pageableNs: 0 }));
  let kindsRecorded = false;
  // Streamed (no row object per copy): a big export has millions.
  forEachMemcpy(loaded, (pid: number, start: number, end: number, bytes: number, copyKind: number, srcKind: number | null, dstKind: number | null) => {
    const direction = opLabels.get(copyKind) ?? DIRECTION_FALLBACK[copyKind] ?? `kind ${copyKind}`;
    let d = byDir.get(direction);
    if (!d) {
      d = { direction, copies: 0, bytes: 0, ns: 0, pageableCopies: 0, pageableBytes: 0, pageableNs: 0, inIterations: 0, inIterationsBytes: 0, inIterationsNs: 0, pageableInIterations: 0, pageableInIterationsNs: 0 };
      byDir.set(direction, d);
    }
    const ns = end - start;
    if (srcKind != null || dstKind != null) kindsRecorded = true;
    const pageable = srcKind === MEM_KIND_PAGEABLE || dstKind === MEM_KIND_PAGEABLE;
    d.copies++;
    d.bytes += bytes;
    d.ns += ns;
    if (pageable) {
      d.pageableCopies++;
      d.pageableBytes += bytes;
      d.pageableNs += ns;
    }
    const k = lookup(pid, start);
    if (k < 0) return;
    d.inIterations++;
    d.inIterationsBytes += bytes;
    d.inIterationsNs += ns;
    const it = perIter[k];
    if (copyKind === 1) {
      it.h2dCopies++;
      it.h2dBytes += bytes;
    } else if (copyKind === 2) {
      it.d2hCopies++;
      it.d2hBytes += bytes;
    }
    if (pageable) {
      d.pageableInIterations++;
      d.pageableInIterationsNs += ns;
      it.pageableCopies++;
      it.pageableNs += ns;
    }
  });
  return {
    memoryKindsRecorded: kindsRecorded,
    byDirection: [...byDir.values()].sort((a, b) => b.bytes - a.bytes || a.direction.localeCompare(b.direction)),
    iterations: perIter,
  };
}

/** The allocations (static memory left out) inside iterations, or during the GPU work, and the largest of each. */
function allocationTraffic(
  loaded: LoadedExport,
  iterations: readonly Window[],
  lookup: WindowLookup,
  gpuSpan: { startNs: number; endNs: number } | null | undefined,
): Omit<MemoryTraffic, 'memcpyTraced' | 'memoryKindsRecorded' | 'byDirection' | 'iterations' | 'allocationsTraced'> {
  const kindLabels = enumLabels(loaded, 'ENUM_CUDA_MEM_KIND');
  let allocations = 0;
  let deallocations = 0;
  let inIter = 0;
  let inIterBytes = 0;
  let eventCount = 0;
  const iterSeen = new Set<number>();
  const inside: AllocationEvent[] = [];
  const duringGpu: AllocationEvent[] = [];
  for (const e of memoryUsageEvents(loaded)) {
    eventCount++;
    if (e.operation === 1) {
      deallocations++;
      continue;
    }
    if (e.operation !== 0 || e.memKind === MEM_KIND_DEVICE_STATIC || e.memKind === MEM_KIND_MANAGED_STATIC) continue;
    allocations++;
    if (gpuSpan && e.start >= gpuSpan.startNs && e.start < gpuSpan.endNs) duringGpu.push({ startNs: e.start, bytes: e.bytes, memKind: kindLabels.get(e.memKind) ?? `kind ${e.memKind}`, deviceId: e.deviceId, iter: null });
    const k = lookup(e.pid, e.start);
    if (k < 0) continue;
    inIter++;
    inIterBytes += e.bytes;
    iterSeen.add(k);
    inside.push({ startNs: e.start, bytes: e.bytes, memKind: kindLabels.get(e.memKind) ?? `kind ${e.memKind}`, deviceId: e.deviceId, iter: iterations[k].iter });
  }
  inside.sort((a, b) => b.bytes - a.bytes || a.startNs - b.startNs);
  duringGpu.sort((a, b) => b.bytes - a.bytes || a.startNs - b.startNs);
  return {
    allocationEvents: eventCount,
    allocations,
    deallocations,
    allocationsInIterations: inIter,
    allocationBytesInIterations: inIterBytes,
    iterationsWithAllocations: iterSeen.size,
    largestInIterations: inside.slice(0, 5),
    allocationsDuringGpuWork: duringGpu.length,
    largestDuringGpuWork: duringGpu.slice(0, 5),
  };
}
