import { basename, dirname } from 'node:path';
import type { ServingBoundary } from '../analysis/servingSpan.js';
import type { CaptureHealthNote, EngineCapture, EngineEvidence, ServingEngine } from '../summary/engineCapture.js';
import { categoryShares, perToken } from './engineComparison.js';
import { chooseTokens, readBenchmarkFile, type BenchmarkResults, type TokenSource } from './tokenSources.js';
import type { ExportInputs } from './engineInputs.js';
import type { CategoryRule } from '../categories/rules.js';
import { parseIterationLogFile } from '../logs/parse.js';
import { analyzeMany, type ManyOptions } from '../ranks/pool.js';

/** What a capture can answer: its figures, figures to read with a blocking finding in mind, or nothing (no GPU work). */
export type CaptureStatus = 'ok' | 'cannot-answer' | 'no-gpu-work';

/**
 * One capture in the engine table (`iterscope engines`): the serving span's figures, per
 * generated token when a token count is known (`tokenSource`), per second of the span always.
 * Per-token figures divide ALL of the span's kernel time by that token kind (as `compare`'s
 * engine table does): with both kinds in the span, each is an upper bound, not a split.
 */
export interface EngineRow {
  label: string;
  engine: ServingEngine;
  engineFrom: EngineEvidence;
  file: string;
  status: CaptureStatus;
  /** Why the capture cannot answer (no GPU work, a blocking health finding); null when it can. */
  statusText: string | null;
  boundary: ServingBoundary | null;
  /** The serving span in session ns (to find it in a trace), and its length. */
  spanStartNs: number | null;
  spanEndNs: number | null;
  spanNs: number | null;
  steps: number | null;
  tokenSource: TokenSource;
  generatedTokens: number | null;
  contextTokens: number | null;
  /** Kernel time of the serving span (ns). */
  kernelNs: number | null;
  kernels: number | null;
  graphLaunches: number | null;
  kernelNsPerGeneratedToken: number | null;
  kernelNsPerContextToken: number | null;
  /** Fusion shows as fewer kernels per token. */
  kernelsPerGeneratedToken: number | null;
  /** GPU busy time (union) per generated token: `compare`'s per-token figure. */
  gpuBusyNsPerGeneratedToken: number | null;
  /** Kernel time by category per generated token, and as a share of the span's kernel time. */
  categoryNsPerGeneratedToken: Record<string, number>;
  categoryShare: Record<string, number>;
  busyShare: number | null;
  idleShare: number | null;
  h2dBytes: number | null;
  h2dCopies: number | null;
  d2hBytes: number | null;
  d2hCopies: number | null;
  h2dBytesPerGeneratedToken: number | null;
  h2dCopiesPerGeneratedToken: number | null;
  d2hBytesPerGeneratedToken: number | null;
  d2hCopiesPerGeneratedToken: number | null;
  /** cudaMalloc* / cuMemAlloc* calls in the span. */
  allocationCalls: number | null;
  /** Allocations and bytes (`--cuda-memory-usage=true`); null when not traced. */
  allocations: number | null;
  allocationBytes: number | null;
  /** The benchmark's mean per-request output tokens/s (measured by the client). */
  measuredThroughputTps: number | null;
  /** Generated tokens per second of the serving span. */
  generatedTokensPerSecond: number | null;
  /** Per second of the serving span (for every capture, with or without tokens). */
  kernelNsPerSecond: number | null;
  kernelsPerSecond: number | null;
  h2dBytesPerSecond: number | null;
  d2hBytesPerSecond: number | null;
  health: CaptureHealthNote[];
  notes: string[];
}

export interface EngineRows {
  rows: EngineRow[];
  /** Categories with kernel time in any row, in the first row's order then the others'. */
  categories: string[];
  notes: string[];
}

/** What the user gave for one capture. */
export interface EngineInputs {
  label?: string;
  tokens?: number;
  benchmark?: BenchmarkResults;
}

/**
 * The switch that makes each engine mark its steps, for a capture without markers (per-step
 * figures need them): the engines' documented NVTX (see ../shared/research/).
 */
export const MARKER_SWITCHES: Record<ServingEngine, string> = {
  'tensorrt-llm': 'TensorRT-LLM\'s PyTorch executor marks every step (`[Executor] _forward_step N`) whenever NVTX is traced: profile with `-t cuda,nvtx` (the C++ runtime\'s ranges need an `--nvtx` build)',
  vllm: 'vLLM marks each step (`execute_context_..._generation_...`) under the CUDA profiler: `nsys profile -c cudaProfilerApi ... vllm serve ... --profiler-config \'{"profiler": "cuda"}\'`',
  sglang: 'SGLang marks its scheduler loop (`scheduler.run_batch` per step) with `SGLANG_ENABLE_NVTX_SCHEDULER=1` (and the `nvtx` Python package)',
  tgi: 'TGI records no NVTX: its per-step spans (`prefill`, `decode`) are OpenTelemetry traces, which nsys does not capture, so per-step figures are not available',
  unknown: 'profile the engine with its step markers on (TensorRT-LLM: `-t cuda,nvtx`; vLLM: `-c cudaProfilerApi` with `--profiler-config \'{"profiler": "cuda"}\'`; SGLang: `SGLANG_ENABLE_NVTX_SCHEDULER=1`), or name the NVTX range that marks one step with `iterations --iteration-range`',
};

const perSecond = (value: number, spanNs: number) => (spanNs > 0 ? (value * 1e9) / spanNs : null);

/** Labels: the user's, else the engine (unless unknown), else the export's folder; repeats get their folder or file added. */
export function labelCaptures(captures: readonly EngineCapture[], given: readonly (string | undefined)[]): string[] {
  const base = captures.map((c, i) => given[i] ?? (c.engine !== 'unknown' ? c.engine : basename(dirname(c.file)) || basename(c.file)));
  const counts = new Map<string, number>();
  for (const l of base) counts.set(l, (counts.get(l) ?? 0) + 1);
  return base.map((l, i) => (given[i] === undefined && counts.get(l)! > 1 ? `${l} (${basename(dirname(captures[i].file))}/${basename(captures[i].file)})` : l));
}

/** Notes for a capture without steps: why, and the engine's switch for markers. */
function markerNotes(c: EngineCapture): string[] {
  if (c.markers || !c.span) return [];
  const why = c.nvtxTraced === false ? 'NVTX was not traced' : 'no step markers were found';
  return [`whole-capture figures only (${why}): per-iteration figures need markers; ${MARKER_SWITCHES[c.engine]}`];
}

/** A log given but describing no captured step: its counts are not used, say so. */
function logNotes(c: EngineCapture): string[] {
  if (!c.logs.length || (c.stepsJoined ?? 0) > 0) return [];
  const logs = c.logs.map((l) => `${basename(l.file)} (${l.records} records)`).join(', ');
  return [`${logs}: no captured step joined to ${c.logs.length > 1 ? 'them' : 'it'}${c.markers ? '' : ' (the capture has no step markers)'}: ${c.logs.length > 1 ? 'their' : 'its'} token counts are not used`];
}

/** One capture's row (see `EngineRow`). */
export function engineRow(c: EngineCapture, label: string, inputs: EngineInputs = {}): EngineRow {
  const s = c.span;
  const blocking = c.health.find((h) => h.health === 'blocking');
  const status: CaptureStatus = c.noGpuWork ? 'no-gpu-work' : !s || blocking ? 'cannot-answer' : 'ok';
  const t = chooseTokens(c, inputs);
  const gen = t.generatedTokens;
  const per = (v: number | undefined) => (v === undefined ? null : perToken(v, gen));
  const perS = (v: number | undefined) => (v === undefined || !s ? null : perSecond(v, s.spanNs));
  const categoryNsPerGeneratedToken: Record<string, number> = {};
  if (s && gen) for (const [cat, ns] of Object.entries(s.categoryNs)) categoryNsPerGeneratedToken[cat] = ns / gen;
  const notes = [...(s ? [`serving span: ${s.boundaryText}`] : []), ...markerNotes(c), ...logNotes(c), ...(s?.notes ?? []), ...t.notes];
  if (s && s.graphLaunches > 0) notes.push(`${s.graphLaunches} whole-graph launches (--cuda-graph-trace graph) count as one kernel each: kernels per token undercount the kernels inside the graphs`);
  if (s && gen === null) notes.push('no generated-token count (pass --log, --benchmark or --tokens): figures per second of the serving span only');
  return {
    label,
    engine: c.engine,
    engineFrom: c.engineFrom,
    file: c.file,
    status,
    statusText: c.noGpuWork ? `no GPU work: ${c.noGpuWork}` : !s ? 'no serving span: none of the GPU ops has its CUDA API call in the export (time-trimmed?)' : (blocking?.title ?? null),
    boundary: s?.boundary ?? null,
    spanStartNs: s?.startNs ?? null,
    spanEndNs: s?.endNs ?? null,
    spanNs: s?.spanNs ?? null,
    steps: s?.steps ?? null,
    tokenSource: t.source,
    generatedTokens: gen,
    contextTokens: t.contextTokens,
    kernelNs: s?.kernelNs ?? null,
    kernels: s?.kernels ?? null,
    graphLaunches: s?.graphLaunches ?? null,
    kernelNsPerGeneratedToken: per(s?.kernelNs),
    kernelNsPerContextToken: s ? perToken(s.kernelNs, t.contextTokens) : null,
    kernelsPerGeneratedToken: per(s ? s.kernels + s.graphLaunches : undefined),
    gpuBusyNsPerGeneratedToken: per(s?.busyNs),
    categoryNsPerGeneratedToken,
    categoryShare: s ? categoryShares(s.categoryNs, s.kernelNs) : {},
    busyShare: s?.busyShare ?? null,
    idleShare: s?.idleShare ?? null,
    h2dBytes: s?.h2dBytes ?? null,
    h2dCopies: s?.h2dCopies ?? null,
    d2hBytes: s?.d2hBytes ?? null,
    d2hCopies: s?.d2hCopies ?? null,
    h2dBytesPerGeneratedToken: per(s?.h2dBytes),
    h2dCopiesPerGeneratedToken: per(s?.h2dCopies),
    d2hBytesPerGeneratedToken: per(s?.d2hBytes),
    d2hCopiesPerGeneratedToken: per(s?.d2hCopies),
    allocationCalls: s?.allocationCalls ?? null,
    allocations: s?.allocations ?? null,
    allocationBytes: s?.allocationBytes ?? null,
    measuredThroughputTps: t.measuredThroughputTps,
    generatedTokensPerSecond: gen !== null ? perS(gen) : null,
    kernelNsPerSecond: perS(s?.kernelNs),
    kernelsPerSecond: perS(s ? s.kernels + s.graphLaunches : undefined),
    h2dBytesPerSecond: perS(s?.h2dBytes),
    d2hBytesPerSecond: perS(s?.d2hBytes),
    health: c.health,
    notes,
  };
}

/** The engine table's rows: one per capture, in the order given. */
export function engineRows(captures: readonly EngineCapture[], inputs: readonly EngineInputs[] = []): EngineRows {
  const labels = labelCaptures(captures, captures.map((_, i) => inputs[i]?.label));
  const rows = captures.map((c, i) => engineRow(c, labels[i], inputs[i]));
  const categories = [...new Set(captures.flatMap((c) => Object.keys(c.span?.categoryNs ?? {})))];
  const notes: string[] = [];
  if (rows.some((r) => r.generatedTokens !== null && r.contextTokens !== null)) notes.push('per-token figures divide all of the span\'s kernel time by each token kind: where a span holds both prefill and decode steps, per generated and per context token are each an upper bound, not a split');
  if (rows.some((r) => r.tokenSource !== 'none') && rows.some((r) => r.tokenSource === 'none')) notes.push('rows without a token count compare per second of the serving span only');
  return { rows, categories, notes };
}

/** How `enginesFromExports` runs: kernel category rules, worker threads. */
export interface EnginesOptions extends Omit<ManyOptions, 'perExport'> {
  categoryRules?: readonly CategoryRule[];
}

/**
 * The engine table of several captures: each export analysed once (the pipeline's
 * `ENGINE_CAPTURE_PARTS`, with its own logs) in the multi-export pool, then one row each with its
 * label, benchmark file and token count.
 */
export async function enginesFromExports(files: readonly string[], inputs: readonly ExportInputs[], opts: EnginesOptions = {}): Promise<EngineRows> {
  const logs = inputs.map((p) => p.logs.map(parseIterationLogFile));
  const benchmarks = inputs.map((p) => (p.benchmark ? readBenchmarkFile(p.benchmark) : undefined));
  // Steps need no number here: markers that nothing numbers still give the span and their counts.
  const shared = { ...opts, categoryRules: opts.categoryRules ? [...opts.categoryRules] : undefined, selection: { unnumberedInCaptureOrder: true } };
  const captures = await analyzeMany(files, 'engines', { ...shared, perExport: logs.map((l) => ({ logs: l })) });
  return engineRows(captures, inputs.map((p, i) => ({ label: p.label, tokens: p.tokens, benchmark: benchmarks[i] })));
}
