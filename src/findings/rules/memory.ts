import type { Evidence, Finding, RuleContext } from '../finding.js';
import { formatNs, makeFinding } from './common.js';

const bytes = (b: number) => (b >= 1 << 30 ? `${(b / (1 << 30)).toFixed(2)} GiB` : b >= 1 << 20 ? `${(b / (1 << 20)).toFixed(2)} MiB` : b >= 1024 ? `${(b / 1024).toFixed(1)} KiB` : `${b} B`);

/** Memcpy from or to pageable host memory inside the iterations (srcKind/dstKind = Pageable). */
function pageableCopies(ctx: RuleContext): Finding[] {
  const m = ctx.input.memory;
  const n = Math.max(1, m.iterations.length);
  const copies = m.byDirection.reduce((a, d) => a + d.pageableInIterations, 0);
  const ns = m.byDirection.reduce((a, d) => a + d.pageableInIterationsNs, 0);
  if (!m.memoryKindsRecorded || m.iterations.length === 0 || copies / n < ctx.t.pageableCopiesPerIteration) return [];
  const evidence: Evidence[] = m.byDirection
    .filter((d) => d.pageableInIterations > 0)
    .map((d) => ({ text: `${d.direction}: ${d.pageableInIterations} pageable copies in the iterations (${bytes(d.pageableBytes)} in all, ${formatNs(d.pageableInIterationsNs)} of GPU copy time)`, valueNs: d.pageableInIterationsNs }));
  const worst = [...m.iterations].sort((a, b) => b.pageableCopies - a.pageableCopies || a.iter - b.iter).slice(0, ctx.t.evidenceRows);
  for (const it of worst) if (it.pageableCopies) evidence.push({ text: `iteration ${it.iter}: ${it.pageableCopies} pageable copies (${formatNs(it.pageableNs)})`, iter: it.iter, startNs: it.startNs, valueNs: it.pageableNs });
  return [
    makeFinding(ctx, {
      id: 'memcpy-pageable',
      title: `Memory traffic: ${(copies / n).toFixed(1)} memcpys per iteration from or to pageable host memory`,
      recoverableNs: ns,
      restsOnNs: ns,
      estimate: 'the GPU time of the pageable copies in the iterations (a lower bound: the host-side staging and the implicit synchronization they cause are not measured here)',
      evidence,
      section: 'iterations',
      confidence: { level: 'measured', traced: ['CUPTI memcpy records with srcKind/dstKind'], notTraced: ['host time spent staging pageable copies'] },
    }),
  ];
}

/** High host-to-device traffic per iteration. */
function highH2d(ctx: RuleContext): Finding[] {
  const m = ctx.input.memory;
  if (m.iterations.length === 0) return [];
  const h2d = m.byDirection.find((d) => d.direction === 'Host-to-Device');
  if (!h2d) return [];
  const mean = h2d.inIterationsBytes / m.iterations.length;
  if (mean < ctx.t.h2dBytesPerIteration) return [];
  const worst = [...m.iterations].sort((a, b) => b.h2dBytes - a.h2dBytes || a.iter - b.iter).slice(0, ctx.t.evidenceRows);
  return [
    makeFinding(ctx, {
      id: 'memcpy-h2d',
      title: `Memory traffic: ${bytes(mean)} host-to-device per iteration (threshold ${bytes(ctx.t.h2dBytesPerIteration)})`,
      recoverableNs: h2d.inIterationsNs,
      restsOnNs: h2d.inIterationsNs,
      estimate: 'the GPU time of the host-to-device copies in the iterations (an upper bound: what stays on the GPU need not be copied)',
      evidence: worst.map((it) => ({ text: `iteration ${it.iter}: ${it.h2dCopies} H2D copies, ${bytes(it.h2dBytes)}`, iter: it.iter, startNs: it.startNs })),
      section: 'iterations',
      confidence: { level: 'measured', traced: ['CUPTI memcpy records'], notTraced: [] },
    }),
  ];
}

/** Device memory allocations inside the iteration loop (`--cuda-memory-usage=true`). */
function allocationsInLoop(ctx: RuleContext): Finding[] {
  const m = ctx.input.memory;
  if (m.allocationsTraced && m.iterations.length === 0) return allocationsDuringGpuWork(ctx);
  if (!m.allocationsTraced || m.allocationsInIterations < ctx.t.allocationsInLoop) return [];
  const evidence: Evidence[] = [
    {
      text: `CUDA_GPU_MEMORY_USAGE_EVENTS: ${m.allocationEvents} events, ${m.allocations} allocations of non-static memory, ${m.allocationsInIterations} of them inside ${m.iterationsWithAllocations} iteration(s) (${bytes(m.allocationBytesInIterations)}), ${m.deallocations} deallocations`,
    },
    ...m.largestInIterations.map((a) => ({ text: `${bytes(a.bytes)} ${a.memKind} allocation at ${formatNs(a.startNs)} on device ${a.deviceId}${a.iter !== null ? ` in iteration ${a.iter}` : ''}`, ...(a.iter !== null ? { iter: a.iter } : {}), deviceId: a.deviceId, startNs: a.startNs })),
  ];
  return [
    makeFinding(ctx, {
      id: 'allocations-in-loop',
      title: `Memory: ${m.allocationsInIterations} device memory allocations inside the iteration loop`,
      recoverableNs: 0,
      restsOnNs: 0,
      estimate: 'not estimated: allocation events carry no duration (a cudaMalloc in the loop synchronizes the device; look at the gaps around the timestamps)',
      evidence,
      section: 'iterations',
      severity: m.allocationsInIterations >= ctx.input.memory.iterations.length ? 'medium' : 'low',
      confidence: { level: 'measured', traced: ['CUDA_GPU_MEMORY_USAGE_EVENTS (--cuda-memory-usage=true)'], notTraced: ['allocations served by the PyTorch caching allocator do not reach the driver'] },
    }),
  ];
}

/** Without iteration windows: allocations between the first and last GPU op (the loop, most likely). */
function allocationsDuringGpuWork(ctx: RuleContext): Finding[] {
  const m = ctx.input.memory;
  if (m.allocationsDuringGpuWork < ctx.t.allocationsInLoop) return [];
  return [
    makeFinding(ctx, {
      id: 'allocations-in-loop',
      title: `Memory: ${m.allocationsDuringGpuWork} device memory allocations while the GPU was running (no iteration windows)`,
      recoverableNs: 0,
      restsOnNs: 0,
      estimate: 'not estimated: allocation events carry no duration (a cudaMalloc while work runs synchronizes the device)',
      evidence: [
        { text: `CUDA_GPU_MEMORY_USAGE_EVENTS: ${m.allocationEvents} events, ${m.allocations} allocations of non-static memory, ${m.allocationsDuringGpuWork} of them between the first and the last GPU op, ${m.deallocations} deallocations` },
        ...m.largestDuringGpuWork.map((a) => ({ text: `${bytes(a.bytes)} ${a.memKind} allocation at ${formatNs(a.startNs)} on device ${a.deviceId}`, deviceId: a.deviceId, startNs: a.startNs })),
      ],
      section: 'coverage',
      severity: 'low',
      confidence: { level: 'inferred', traced: ['CUDA_GPU_MEMORY_USAGE_EVENTS (--cuda-memory-usage=true)'], notTraced: ['iteration windows: allocations are placed by the GPU activity span, not by iteration'] },
    }),
  ];
}

export function memoryTraffic(ctx: RuleContext): Finding[] {
  return [...pageableCopies(ctx), ...highH2d(ctx), ...allocationsInLoop(ctx)];
}
