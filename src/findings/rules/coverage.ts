import { traceNames, type CaptureTracing } from '../../load/captureSettings.js';
import { remedyEngine, type RemedyEngine } from '../remedies.js';
import type { Finding, RuleContext } from '../finding.js';
import { makeFinding } from './common.js';

/** One thing the capture does not hold, and what would record it. */
interface Missing {
  what: string;
  /** How it stands: `was not traced` unless said otherwise. */
  state?: string;
  hides: string;
  ids?: string[];
  /** nsys was asked for it (`-t nvtx`, `--cuda-memory-usage=true`): recorded nothing, not untraced. */
  traced?: boolean;
  /** What to add to the capture: an nsys `-t` name, or a whole flag. */
  trace?: string;
  flag?: string;
  /** Engine-side switches (environment, server options) that make the program record it. */
  app?: Partial<Record<RemedyEngine, string>>;
}

const NVTX_APP: Partial<Record<RemedyEngine, string>> = {
  'tensorrt-llm': '`TLLM_LLMAPI_ENABLE_NVTX=1` (and the executor\'s own `TensorRT-LLM` ranges: a current release)',
  vllm: 'vLLM\'s step ranges (`--profiler-config \'{"profiler": "cuda"}\'`)',
  sglang: '`SGLANG_ENABLE_NVTX_SCHEDULER=1`',
  unknown: 'NVTX ranges around each step in the program (`--iteration-range` names them)',
};
const GC_APP: Partial<Record<RemedyEngine, string>> = {
  'tensorrt-llm': '`-e TLLM_PROFILE_RECORD_GC=1`',
  vllm: '`Python GC` NVTX ranges from `gc.callbacks`',
  sglang: '`Python GC` NVTX ranges from `gc.callbacks`',
  unknown: '`Python GC` NVTX ranges from `gc.callbacks`',
};
const LOG_APP: Partial<Record<RemedyEngine, string>> = {
  'tensorrt-llm': 'the iteration log (`--iteration_log`, or the executor log with `print_iter_log`) as `--log`',
  vllm: 'the vLLM log with `--enable-logging-iteration-details` as `--log`',
  sglang: 'the SGLang log (`--decode-log-interval 1`, and `SGLANG_LOG_FORWARD_ITERS=1` for forward-iteration numbers) as `--log`',
  unknown: 'the engine\'s iteration log as `--log`',
};

/** What the capture lacks, each item saying whether it was not traced or traced with nothing recorded. */
function missingItems(ctx: RuleContext): Missing[] {
  const { info, gaps, metrics, memory, iterations, logs, health } = ctx.input;
  const t = health.tracing;
  const out: Missing[] = [];
  if (!info.rowCounts.NVTX_EVENTS) {
    const hides = 'iterations, host steps (nvtx:<range> causes), GC and GIL';
    if (health.nvtx === 'traced-none') out.push({ what: 'NVTX', traced: true, state: 'was traced (-t nvtx) but the program emitted no NVTX event', hides, ids: ['late-launches'], app: NVTX_APP });
    else out.push({ what: 'NVTX', hides, ids: ['late-launches'], trace: 'nvtx', app: NVTX_APP });
  }
  if (!gaps.gcTraced) out.push({ what: 'Python GC (no `Python GC` NVTX ranges; TLLM_PROFILE_RECORD_GC=1)', hides: 'GC pauses: no gap can be attributed to gc', ids: ['gc-pauses'], app: GC_APP });
  if (!gaps.gilTraced) out.push({ what: 'the GIL (no `GIL Trace` NVTX domain; nsys -t python-gil)', hides: 'GIL contention and which thread held the GIL', ids: ['gil-contention'], trace: 'python-gil' });
  if (!metrics?.available) {
    const hides = 'SM activity inside gaps and per iteration';
    if (t.gpuMetrics) out.push({ what: 'GPU metrics (--gpu-metrics-devices)', traced: true, state: 'were requested but no sample was recorded', hides });
    else out.push({ what: 'GPU metrics (--gpu-metrics-devices)', hides, flag: '--gpu-metrics-devices=all' });
  }
  if (!memory.allocationsTraced) {
    const hides = 'allocations inside the iteration loop';
    if (t.gpuMemoryUsage) out.push({ what: 'CUDA memory usage (--cuda-memory-usage=true)', traced: true, state: 'was traced but recorded no allocation', hides, ids: ['allocations-in-loop'] });
    else out.push({ what: 'CUDA memory usage (--cuda-memory-usage=true)', hides, ids: ['allocations-in-loop'], flag: '--cuda-memory-usage=true' });
  }
  if (!iterations) out.push({ what: 'iteration ranges', state: 'were not found (--iteration-range names them)', hides: 'per-iteration evidence, phase outliers; shares are of the GPU span', ids: ['phase-outliers', 'memcpy-pageable', 'memcpy-h2d', 'allocations-in-loop'] });
  else if (logs.length === 0 || iterations.coverage.joined === 0) out.push({ what: 'the iteration log', state: 'was not given or not joined (--log)', hides: 'batch composition (phases, tokens) unless the NVTX labels carry it', app: LOG_APP });
  return out;
}

/** The `-t` list to use: what was traced (or cuda,nvtx when the export does not say) plus what is missing. */
function traceList(t: CaptureTracing, add: string[]): string {
  const base = t.events.length ? traceNames(t) : ['cuda', 'nvtx'];
  return [...new Set([...base, ...add])].join(',');
}

/** The remedy for exactly what is missing: never a trace or flag that was already in the capture. */
function coverageRemedy(missing: Missing[], t: CaptureTracing, engine: RemedyEngine): string {
  const traces = missing.filter((m) => m.trace && !m.traced).map((m) => m.trace!);
  const flags = missing.filter((m) => m.flag && !m.traced).map((m) => m.flag!);
  const apps = [...new Set(missing.map((m) => m.app?.[engine] ?? m.app?.unknown).filter((x): x is string => !!x))];
  const parts: string[] = [];
  // The whole -t list (nsys replaces it), saying which entries are new.
  if (traces.length || flags.length) parts.push(`Profile with \`nsys profile${traces.length ? ` -t ${traceList(t, traces)}` : ''}${flags.length ? ` ${flags.join(' ')}` : ''}\` (adds ${[...traces, ...flags].join(', ')})`);
  if (apps.length) parts.push(`${parts.length ? 'and record' : 'Record'} ${apps.join('; ')}`);
  if (parts.length === 0) return 'Nothing to add to the capture: what is listed was traced and the program recorded none of it.';
  return `${parts.join(' ')}.`;
}

/**
 * What was not traced (or traced with nothing recorded) and what that hides. A rule never claims
 * a cause whose data was not recorded; this finding says which causes could not be looked for,
 * and its remedy adds only what the capture lacked. Without GPU work it says nothing: the
 * `no-gpu-work` finding is what to fix, and tracing more would record nothing more.
 */
export function coverage(ctx: RuleContext): Finding[] {
  if (ctx.input.health.noGpuWork) return [];
  const missing = missingItems(ctx);
  if (missing.length === 0) return [];
  const tracedNothing = missing.filter((m) => m.traced);
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
      remedy: coverageRemedy(missing, ctx.input.health.tracing, remedyEngine(ctx.engine, ctx.input.health.command)),
      confidence: { level: 'not-traced', traced: tracedNothing.map((m) => `${m.what} (nothing recorded)`), notTraced: missing.filter((m) => !m.traced).map((m) => m.what) },
      hides: [...new Set(missing.flatMap((m) => m.ids ?? []))],
    }),
  ];
}
