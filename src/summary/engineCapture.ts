import type { ExportInfo } from '../analysis/exportInfo.js';
import { findHealthFindings } from '../findings/findFindings.js';
import type { Finding } from '../findings/finding.js';
import type { IterationAnalysis } from '../iterations/types.js';
import type { ServingSpan } from '../analysis/servingSpan.js';
import type { Engine, IterationSourceId } from '../iterations/source.js';
import type { ExportAnalysis } from '../pipeline/exportAnalysis.js';
import type { AnalysisPart } from '../pipeline/request.js';

/** The serving engines `engines` names: the marker engines, and TGI (which records no markers). */
export type ServingEngine = Engine | 'tgi';

/** What named the engine: its iteration markers, its NVTX domain or environment, its process or thread names, the profiled command. */
export type EngineEvidence = 'markers' | 'nvtx-domain' | 'environment' | 'process-name' | 'command' | null;

/** A health finding as the engine table shows it (the evidence stays with `findings`). */
export interface CaptureHealthNote {
  id: string;
  title: string;
  health: 'blocking' | 'caveat';
}

/**
 * One capture as the engine table reads it: the serving span and its figures, the engine and
 * what named it, the health findings, and the session's place in time (to check a benchmark run
 * against). Plain data: it crosses from a worker thread.
 */
export interface EngineCapture {
  file: string;
  engine: ServingEngine;
  engineFrom: EngineEvidence;
  /** The iteration source whose markers gave the steps; null without steps. */
  markers: IterationSourceId | null;
  /** Why there are no steps (no marker found, ...); null with steps. */
  iterationError: string | null;
  /** Why the capture holds no GPU work; null when it holds some. */
  noGpuWork: string | null;
  /** Null when the capture holds no GPU work. */
  span: ServingSpan | null;
  health: CaptureHealthNote[];
  /** Whether nsys was asked to trace NVTX (`-t nvtx`); null when the export does not say. */
  nvtxTraced: boolean | null;
  /** Session start (UTC, ms since the epoch) and capture length: where the capture sits in time. */
  sessionStartEpochMs: number | null;
  captureDurationNs: number | null;
  /** The iteration logs given (`--log`), their records, and how many captured steps they describe. */
  logs: { file: string; records: number }[];
  stepsJoined: number | null;
}

/** The parts an engine capture is built from (the span pulls in the iterations and the health). */
export const ENGINE_CAPTURE_PARTS: readonly AnalysisPart[] = ['info', 'servingSpan'];

/** Process or thread names (comm, 15 characters) and command lines of the serving engines. */
const ENGINE_NAMES: readonly [RegExp, ServingEngine][] = [
  // vLLM's engine core and workers set their process title (`VLLM::EngineCore`, `VLLM::Worker`).
  [/^VLLM::|\bvllm\b/i, 'vllm'],
  // SGLang's scheduler: `sglang::scheduler`, `sglang::scheduler_TP0`; `python3 -m sglang.launch_server`.
  [/^sglang::|\bsglang\b/i, 'sglang'],
  [/trtllm|tensorrt[_-]?llm/i, 'tensorrt-llm'],
  // TGI: `text-generation-launcher` starts `text-generation-server` shards (`text_generation_server`).
  [/text[-_]generation/i, 'tgi'],
];

function engineByName(names: readonly (string | null)[]): ServingEngine | null {
  for (const n of names) {
    if (!n) continue;
    const hit = ENGINE_NAMES.find(([re]) => re.test(n));
    if (hit) return hit[1];
  }
  return null;
}

/**
 * The engine of a capture, from what says it most directly: the steps' markers, the markers
 * found in the export, TensorRT-LLM's NVTX domain or environment, the serving processes' process
 * and thread names, the profiled command.
 */
export function servingEngineOf(info: ExportInfo, iterations: IterationAnalysis | null, command: string | null, pids: readonly number[]): { engine: ServingEngine; from: EngineEvidence } {
  const marked = iterations?.coverage.source.engine;
  if (marked && marked !== 'unknown') return { engine: marked, from: 'markers' };
  if (info.engine && info.engine.engine !== 'unknown') return { engine: info.engine.engine, from: 'markers' };
  if (info.nvtxDomains.some((d) => d.name === 'TensorRT-LLM')) return { engine: 'tensorrt-llm', from: 'nvtx-domain' };
  if (Object.keys(info.environment).some((k) => k.startsWith('TLLM_'))) return { engine: 'tensorrt-llm', from: 'environment' };
  const serving = info.processes.filter((p) => (pids.length ? pids.includes(p.pid) : p.usesCuda));
  const byProcess = engineByName(serving.flatMap((p) => [p.name, ...p.threads.map((t) => t.name)]));
  if (byProcess) return { engine: byProcess, from: 'process-name' };
  const byCommand = engineByName([command]);
  if (byCommand) return { engine: byCommand, from: 'command' };
  return { engine: 'unknown', from: null };
}

const healthNote = (f: Finding): CaptureHealthNote => ({ id: f.id, title: f.title, health: f.health! });

/** An analysis of `ENGINE_CAPTURE_PARTS` as the engine table reads it. */
export function engineCaptureOf(a: ExportAnalysis): EngineCapture {
  if (!a.info || !a.health) throw new Error(`engineCaptureOf needs the parts ${ENGINE_CAPTURE_PARTS.join(', ')} (got ${a.parts.join(', ')})`);
  const span = a.servingSpan;
  const { engine, from } = servingEngineOf(a.info, a.iterations, a.capture.command, span?.processes.map((p) => p.pid) ?? []);
  const health = findHealthFindings({ file: a.file, info: a.info, iterations: a.iterations, iterationError: a.iterationError, health: a.health });
  const start = a.info.sessionStartEpochNs;
  return {
    file: a.file,
    engine,
    engineFrom: from,
    markers: a.iterations?.iterations.length ? a.iterations.coverage.source.id : null,
    iterationError: a.iterationError,
    noGpuWork: a.health.noGpuWork,
    span,
    health: health.filter((f) => f.health).map(healthNote),
    nvtxTraced: a.capture.tracing.nvtx,
    sessionStartEpochMs: start === null ? null : Number(start / 1_000_000n),
    captureDurationNs: a.info.durationNs,
    logs: a.logs.map((l) => ({ file: l.file, records: l.records })),
    stepsJoined: a.iterations ? a.iterations.coverage.joined : null,
  };
}
