import type { Finding, RuleContext } from '../types.js';
import { makeFinding } from './common.js';

/**
 * What was not traced and what that hides. A rule never claims a cause whose data was not
 * recorded; this finding says which causes could not be looked for.
 */
export function coverage(ctx: RuleContext): Finding[] {
  const { info, gaps, metrics, memory, iterations, logs } = ctx.input;
  const missing: { what: string; hides: string; ids?: string[]; state?: string }[] = [];
  if (!info.rowCounts.NVTX_EVENTS) missing.push({ what: 'NVTX', hides: 'iterations, host steps (nvtx:<range> causes), GC and GIL', ids: ['late-launches'] });
  if (!gaps.gcTraced) missing.push({ what: 'Python GC (no `Python GC` NVTX ranges; TLLM_PROFILE_RECORD_GC=1)', hides: 'GC pauses: no gap can be attributed to gc', ids: ['gc-pauses'] });
  if (!gaps.gilTraced) missing.push({ what: 'the GIL (no `GIL Trace` NVTX domain; nsys -t python-gil)', hides: 'GIL contention and which thread held the GIL', ids: ['gil-contention'] });
  if (!metrics?.available) missing.push({ what: 'GPU metrics (--gpu-metrics-devices)', hides: 'SM activity inside gaps and per iteration' });
  if (!memory.allocationsTraced) missing.push({ what: 'CUDA memory usage (--cuda-memory-usage=true)', hides: 'allocations inside the iteration loop', ids: ['allocations-in-loop'] });
  if (!iterations) missing.push({ what: 'iteration ranges', state: 'were not found (--iteration-range names them)', hides: 'per-iteration evidence, phase outliers; shares are of the GPU span', ids: ['phase-outliers', 'memcpy-pageable', 'memcpy-h2d', 'allocations-in-loop'] });
  else if (logs.length === 0 || iterations.coverage.joined === 0) missing.push({ what: 'the iteration log', state: 'was not given or not joined (--log)', hides: 'batch composition (phases, tokens) unless the NVTX labels carry it' });
  if (missing.length === 0) return [];
  return [
    makeFinding(ctx, {
      id: 'coverage',
      title: `Not traced or not found: ${missing.map((m) => m.what.replace(/ \(.*$/, '')).join(', ')}`,
      recoverableNs: 0,
      restsOnNs: 0,
      estimate: 'not applicable: what was not recorded cannot be measured',
      evidence: missing.map((m) => ({ text: `${m.what} ${m.state ?? 'was not traced'}: this hides ${m.hides}` })),
      section: 'coverage',
      severity: 'info',
      confidence: { level: 'not-traced', traced: [], notTraced: missing.map((m) => m.what) },
      hides: [...new Set(missing.flatMap((m) => m.ids ?? []))],
    }),
  ];
}
