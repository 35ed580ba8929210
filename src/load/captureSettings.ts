import { hasCaptureMetadata, selectCaptureMetadata } from '../../queries/session.js';
import { allRows } from '../../queries/run.js';
import type { LoadedExport } from './loadedExport.js';

/** Environment variables worth surfacing; other values may be secrets and are not printed. */
const ENV_OF_INTEREST = ['TLLM_PROFILE_START_STOP', 'TLLM_GPTM_PROFILE_START_STOP', 'TLLM_PROFILE_RECORD_GC', 'ENABLE_PERFECT_ROUTER', 'TLLM_LLMAPI_ENABLE_NVTX', 'TLLM_NVTX_DEBUG'];

/** META_DATA_CAPTURE names that appear once per value (one row per traced API). */
const MULTI_VALUED = new Set(['CAPTURE_EVENT_TYPE']);

function captureValues(loaded: LoadedExport): { values: Map<string, string>; env: Record<string, string>; multi: Map<string, string[]> } {
  const values = new Map<string, string>();
  const multi = new Map<string, string[]>();
  const env: Record<string, string> = {};
  if (!hasCaptureMetadata(loaded.handle)) return { values, env, multi };
  for (const row of allRows(loaded.handle, selectCaptureMetadata(loaded.handle))) {
    const name = String(row.name);
    const value = row.value == null ? '' : String(row.value);
    if (/ENVIRONMENT_VARIABLE$/.test(name)) {
      const m = /^([A-Za-z_][A-Za-z0-9_]*)="?(.*?)"?$/.exec(value);
      if (m && ENV_OF_INTEREST.includes(m[1])) env[m[1]] = m[2];
      continue;
    }
    if (MULTI_VALUED.has(name)) multi.set(name, [...(multi.get(name) ?? []), value]);
    if (!values.has(name)) values.set(name, value);
  }
  return { values, env, multi };
}

function graphModeFromCapture(values: Map<string, string>): string | null {
  for (const [k, v] of values) if (/(^|:)CUDA_GRAPH_TRACE_OPTIONS:MODE$/.test(k)) return v;
  return null;
}



/**
 * What nsys was asked to record (META_DATA_CAPTURE), so "not traced" and "traced, nothing
 * recorded" can be told apart. null where the export does not say (no META_DATA_CAPTURE: nsys
 * before 2023.4, converted PyTorch profiler traces).
 */
export interface CaptureTracing {
  /** `CAPTURE_EVENT_TYPE` rows (`-t`): Cuda, NvtxEvents, OSRuntime, CuDNN, CuBLAS, Graphics, ... */
  events: string[];
  cuda: boolean | null;
  nvtx: boolean | null;
  osrt: boolean | null;
  /** `--cuda-memory-usage=true` (`COLLECT_GPU_MEMORY_USAGE`, top level or per process). */
  gpuMemoryUsage: boolean | null;
  /** `--gpu-metrics-devices` (`GPU_METRICS_OPTIONS:*` keys). */
  gpuMetrics: boolean | null;
  /** `--trace-fork-before-exec=true` (`TRACE_AFTER_FORK_BEFORE_EXEC`). */
  forkBeforeExec: boolean | null;
}

/** How the capture was set up: what analyses need of `info` without its cost. */
export interface CaptureSettings {
  profilerApiGated: boolean | null;
  profileStartStop: string | null;
  environment: Record<string, string>;
  graphTraceModeConfigured: string | null;
  tracing: CaptureTracing;
  /** The command nsys launched (`PROCESS_0:COMMAND` and its arguments, secrets masked); null when not recorded. */
  command: string | null;
}

/** Arguments after these flags (or `NAME=value` with such a name) are replaced by `***` in the command shown. */
const SECRET_ARG = /(key|token|secret|passw(or)?d|credential)/i;

/** `PROCESS_0:COMMAND` with `PROCESS_0:ARGUMENT_<n>` in order, values of secret-looking options masked. */
function commandLine(values: Map<string, string>): string | null {
  const command = values.get('PROCESS_0:COMMAND');
  if (!command) return null;
  const args: [number, string][] = [];
  for (const [k, v] of values) {
    const m = /^PROCESS_0:ARGUMENT_(\d+)$/.exec(k);
    if (m) args.push([Number(m[1]), v]);
  }
  const words = [command, ...args.sort((a, b) => a[0] - b[0]).map(([, v]) => v)];
  const shown = words.map((w, i) => {
    const eq = /^(-{0,2}[\w.-]+)=(.*)$/s.exec(w);
    if (eq && SECRET_ARG.test(eq[1])) return `${eq[1]}=***`;
    return i > 0 && /^--?[\w.-]+$/.test(words[i - 1]) && SECRET_ARG.test(words[i - 1]) ? '***' : w;
  });
  return shown.map((w) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/** nsys `-t` names of the CAPTURE_EVENT_TYPE values (`NvtxEvents` is `-t nvtx`). */
const TRACE_NAMES: Record<string, string> = { Cuda: 'cuda', NvtxEvents: 'nvtx', OSRuntime: 'osrt', CuDNN: 'cudnn', CuBLAS: 'cublas', Graphics: 'opengl' };

/** What `-t` asked for, as nsys spells it on the command line (`cuda, nvtx, cudnn`). */
export function traceNames(tracing: CaptureTracing): string[] {
  // nsys stores them in no useful order: the order of TRACE_NAMES (as its docs list them), others after.
  const order = Object.keys(TRACE_NAMES);
  const rank = (e: string) => (order.includes(e) ? order.indexOf(e) : order.length);
  return [...tracing.events].sort((a, b) => rank(a) - rank(b)).map((e) => TRACE_NAMES[e] ?? e.toLowerCase());
}

function flag(values: Map<string, string>, ...names: string[]): boolean | null {
  let seen = false;
  for (const n of names) {
    const v = values.get(n);
    if (v === undefined) continue;
    seen = true;
    if (v.toLowerCase() === 'true') return true;
  }
  return seen ? false : null;
}

function tracingOf(values: Map<string, string>, multi: Map<string, string[]>): CaptureTracing {
  const events = multi.get('CAPTURE_EVENT_TYPE') ?? [];
  const known = values.size > 0;
  // CAPTURE_EVENT_TYPE is what `-t` asked for; PROCESS_0:COLLECT_*_TRACE is unreliable (false in 2026.x exports that hold kernels).
  const traced = (name: string) => (events.length ? events.includes(name) : null);
  return {
    events,
    cuda: traced('Cuda'),
    nvtx: traced('NvtxEvents'),
    osrt: traced('OSRuntime'),
    gpuMemoryUsage: flag(values, 'COLLECT_GPU_MEMORY_USAGE', 'PROCESS_0:COLLECT_GPU_MEMORY_USAGE'),
    gpuMetrics: known ? [...values.keys()].some((k) => k.startsWith('GPU_METRICS_OPTIONS:')) : null,
    forkBeforeExec: flag(values, 'TRACE_AFTER_FORK_BEFORE_EXEC'),
  };
}

/** How the capture was set up (META_DATA_CAPTURE), read once per export. */
export function captureSettings(loaded: LoadedExport): CaptureSettings {
  return loaded.cached('captureSettings', () => readCaptureSettings(loaded));
}

function readCaptureSettings(loaded: LoadedExport): CaptureSettings {
  const { values: capture, env, multi } = captureValues(loaded);
  const startStop = env.TLLM_PROFILE_START_STOP ?? env.TLLM_GPTM_PROFILE_START_STOP ?? null;
  const trigger = capture.get('START_TRIGGER') ?? null;
  const profilerApiGated = startStop != null || (trigger != null && /profiler|cuda/i.test(trigger)) ? true : capture.size > 0 ? false : null;
  return {
    profilerApiGated,
    profileStartStop: startStop,
    environment: env,
    graphTraceModeConfigured: graphModeFromCapture(capture),
    tracing: tracingOf(capture, multi),
    command: commandLine(capture),
  };
}

