import { InputError } from '../errors.js';
import { readOptionFile } from '../optionFile.js';
import type { EngineCapture } from '../summary/engineCapture.js';

/**
 * Where a capture's generated-token count came from: the iteration log's records of the captured
 * steps (`log`), the steps' own markers when no log describes them (`markers`, e.g. vLLM's
 * `execute_..._generation_m(g)` labels), a benchmark results file (`benchmark`), `--tokens`
 * (`user`), or nowhere (`none`: figures per second of the serving span instead).
 */
export type TokenSource = 'log' | 'markers' | 'benchmark' | 'user' | 'none';

/** A benchmark results file in the field guide's shape, summed. */
export interface BenchmarkResults {
  file: string;
  /** Entries used: those with a whole, non-negative `actual_tokens`. */
  requests: number;
  /** Entries left out (no usable `actual_tokens`). */
  excluded: number;
  /** `actual_tokens` summed over the entries used. */
  actualTokens: number;
  /** The longest `latency_s` (s); null when no entry has one. */
  maxLatencyS: number | null;
  /** Mean of the entries' `throughput_tps` (output tokens/s per request); null when none has one. */
  meanThroughputTps: number | null;
  /** The file's `timestamp` (ISO 8601 with a zone: when the run finished), ms since the epoch; null when absent. */
  finishedEpochMs: number | null;
}

/** A benchmark results file is a few kB per thousand requests; far above this it is not one. */
export const MAX_BENCHMARK_FILE_BYTES = 64 * 1024 * 1024;

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isPositive = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v > 0;

/** An ISO 8601 time with a zone (`Z`, `+00:00`): a time without one is ambiguous, so not read. */
function epochMsOf(v: unknown): number | null {
  if (typeof v !== 'string' || !/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)$/.test(v)) return null;
  const ms = Date.parse(v);
  return Number.isFinite(ms) ? ms : null;
}

/** `{"results": [{"max_tokens", "actual_tokens", "latency_s", "throughput_tps"}, ...]}` summed; unusable entries counted. */
export function parseBenchmarkResults(json: unknown, file: string): BenchmarkResults {
  const results = (json as { results?: unknown } | null)?.results;
  if (json === null || typeof json !== 'object' || !Array.isArray(results)) {
    throw new InputError('E_LOG', file, 'not a benchmark results file: expected {"results": [{"max_tokens", "actual_tokens", "latency_s", "throughput_tps"}, ...]}');
  }
  let requests = 0;
  let actualTokens = 0;
  let maxLatencyS: number | null = null;
  let tps = 0;
  let tpsCount = 0;
  for (const r of results as unknown[]) {
    const e = (r ?? {}) as Record<string, unknown>;
    if (!isCount(e.actual_tokens)) continue;
    requests++;
    actualTokens += e.actual_tokens;
    if (isPositive(e.latency_s)) maxLatencyS = Math.max(maxLatencyS ?? 0, e.latency_s);
    if (isPositive(e.throughput_tps)) {
      tps += e.throughput_tps;
      tpsCount++;
    }
  }
  return {
    file,
    requests,
    excluded: results.length - requests,
    actualTokens,
    maxLatencyS,
    meanThroughputTps: tpsCount ? tps / tpsCount : null,
    finishedEpochMs: epochMsOf((json as Record<string, unknown>).timestamp),
  };
}

/** Reads and sums a benchmark results file (`--benchmark`). */
export function readBenchmarkFile(path: string): BenchmarkResults {
  const text = readOptionFile(path, 'benchmark results file', MAX_BENCHMARK_FILE_BYTES);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new InputError('E_LOG', path, `not a benchmark results file: not JSON (${(err as Error).message.split('\n')[0]})`);
  }
  return parseBenchmarkResults(json, path);
}

/** Slack on the file's timestamp: whole seconds, and the benchmark may run on another host's clock. */
const CLOCK_SLACK_MS = 2000;

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * Whether the capture covers the benchmark run: its longest request must fit in the serving span,
 * and (with the file's timestamp) the run must end, and its longest request start, inside the
 * capture. `covered` false: the tokens are not this capture's; null: it cannot be checked.
 */
export function benchmarkCoverage(b: BenchmarkResults, c: EngineCapture): { covered: boolean | null; notes: string[] } {
  const problems: string[] = [];
  const passed: string[] = [];
  const span = c.span;
  if (b.maxLatencyS !== null && span) {
    const what = `its longest request took ${b.maxLatencyS.toFixed(3)} s`;
    const spanS = `the ${(span.spanNs / 1e9).toFixed(3)} s serving span`;
    if (b.maxLatencyS * 1e9 > span.spanNs) problems.push(`${what}, longer than ${spanS}`);
    else passed.push(`${what}, within ${spanS}`);
  }
  if (b.finishedEpochMs !== null && c.sessionStartEpochMs !== null && c.captureDurationNs !== null) {
    const start = c.sessionStartEpochMs;
    const end = start + c.captureDurationNs / 1e6;
    const firstStart = b.finishedEpochMs - (b.maxLatencyS ?? 0) * 1000;
    const before = problems.length;
    if (b.finishedEpochMs > end + CLOCK_SLACK_MS) problems.push(`it finished ${seconds(b.finishedEpochMs - end)} after the capture ended`);
    if (firstStart < start - CLOCK_SLACK_MS) problems.push(`its longest request started ${seconds(start - firstStart)} before the capture did`);
    if (problems.length === before) passed.push(`it finished at ${new Date(b.finishedEpochMs).toISOString()}, inside the capture (${new Date(start).toISOString()} + ${seconds(c.captureDurationNs / 1e6)})`);
  }
  if (problems.length) return { covered: false, notes: [`${b.file} is not this capture's run (${problems.join('; ')}): its ${b.actualTokens} tokens are not counted`] };
  if (passed.length === 0) return { covered: null, notes: [`${b.file}: neither latencies nor a timestamp with a zone: whether the capture covers the benchmark run cannot be checked; its ${b.actualTokens} tokens are used as they are`] };
  return { covered: true, notes: [`${b.file} fits this capture: ${passed.join('; ')}`] };
}

/** A capture's token counts and where they came from, with what the other sources said. */
export interface TokenChoice {
  source: TokenSource;
  generatedTokens: number | null;
  /** Only the steps give context tokens (a log or the markers). */
  contextTokens: number | null;
  /** The benchmark's mean per-request output tokens/s, when a benchmark file was given. */
  measuredThroughputTps: number | null;
  notes: string[];
}

/**
 * The generated tokens of a capture, first from `--tokens` (the user's word), then the captured
 * steps' counts (a log, else their markers: exact per step), then a benchmark file that the
 * capture covers; none of them: `none`. A source not used but disagreeing is named in a note.
 */
export function chooseTokens(c: EngineCapture, given: { tokens?: number; benchmark?: BenchmarkResults }): TokenChoice {
  const span = c.span;
  const notes: string[] = [];
  const b = given.benchmark;
  const coverage = b ? benchmarkCoverage(b, c) : null;
  if (b?.excluded) notes.push(`${b.file}: ${b.excluded} of ${b.requests + b.excluded} results have no whole, non-negative actual_tokens and were left out`);
  const steps = span?.generatedTokens ?? null;
  const stepSource: TokenSource = span?.stepCounts?.fromLog ? 'log' : 'markers';
  const out = (source: TokenSource, generatedTokens: number | null): TokenChoice => ({
    source,
    generatedTokens,
    contextTokens: span?.contextTokens ?? null,
    measuredThroughputTps: b?.meanThroughputTps ?? null,
    notes,
  });
  if (given.tokens !== undefined) {
    if (steps !== null && steps !== given.tokens) notes.push(`--tokens ${given.tokens} used; the captured steps count ${steps} generated tokens (${stepSource === 'log' ? 'log' : 'markers'})`);
    if (b && b.actualTokens !== given.tokens) notes.push(`--tokens ${given.tokens} used; ${b.file} counts ${b.actualTokens}`);
    return out('user', given.tokens);
  }
  if (steps !== null) {
    if (b) notes.push(`the captured steps' ${steps} generated tokens (${stepSource}) used; ${b.file} counts ${b.actualTokens} (each request's output, the tokens of its prefill step included)`);
    return out(stepSource, steps);
  }
  notes.push(...(coverage?.notes ?? []));
  if (b && coverage?.covered !== false) return out('benchmark', b.actualTokens);
  return out('none', null);
}
