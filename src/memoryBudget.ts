import { freemem } from 'node:os';
import { UsageError } from './errors.js';

/**
 * The memory one iterscope process may use (`--max-memory SIZE`, issue #58), and what an export's
 * analysis is estimated to need before anything is read, from row counts alone (max(rowid): a
 * b-tree lookup per table).
 *
 * The budget travels in the environment (`ITERSCOPE_MAX_MEMORY`, bytes), which the CLI sets from
 * the option and worker threads inherit, so every analysis of the process, in any thread, sees the
 * same limit; a program importing the library may set it too.
 */
export const MAX_MEMORY_ENV = 'ITERSCOPE_MAX_MEMORY';

/** The default budget: this share of the machine's free memory (`os.freemem()`, MemAvailable on Linux) ... */
export const DEFAULT_FREE_MEMORY_SHARE = 0.5;
/** ... but never below this (a busy machine's momentary free memory would otherwise make every small export "too large"). */
export const MIN_DEFAULT_BUDGET_BYTES = 1024 ** 3;

const UNITS: Record<string, number> = { '': 1, B: 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 };

/** `400M`, `2G`, `1.5GB`, `512MiB`, `1048576`: bytes (powers of 1024), or a UsageError naming the option. */
export function parseMemorySize(value: string, option = '--max-memory'): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*$/i.exec(value);
  const bytes = m ? Number(m[1]) * UNITS[m[2]!.toUpperCase()]! : NaN;
  if (!Number.isFinite(bytes) || bytes < 64 * 1024 ** 2) throw new UsageError(`${option} expects a size of at least 64M, e.g. 400M or 2G (got '${value}')`);
  return Math.floor(bytes);
}

/** Bytes as the notes and the progress line say them: `400 MB`, `1.5 GB` (powers of 1024). */
export function formatMemorySize(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(1)} GB`;
  return `${Math.round(bytes / 1024 ** 2)} MB`;
}

/** Where the budget came from: the option (or the environment), or the default share of free memory. */
export interface MemoryBudget {
  bytes: number;
  given: boolean;
  /** A worker thread's share of the process's budget. */
  share?: boolean;
}

/**
 * A worker thread's share of the budget (the rank pool sets it as it starts one per export at a time,
 * the budget divided by the workers).
 */
export const MEMORY_SHARE_ENV = 'ITERSCOPE_MEMORY_SHARE';

const positive = (v: string | undefined): number | null => {
  const n = v === undefined || v === '' ? NaN : Number(v);
  return Number.isFinite(n) && n > 0 ? n : null;
};

/**
 * The budget in force: a pool worker's share (`ITERSCOPE_MEMORY_SHARE`), else `ITERSCOPE_MAX_MEMORY`
 * (the CLI's `--max-memory`), else the default. `given`: whether the user set the limit.
 */
export function memoryBudget(env: NodeJS.ProcessEnv = process.env, free: () => number = freemem): MemoryBudget {
  const given = positive(env[MAX_MEMORY_ENV]);
  const share = positive(env[MEMORY_SHARE_ENV]);
  if (share !== null) return { bytes: share, given: given !== null, share: true };
  if (given !== null) return { bytes: given, given: true };
  return { bytes: Math.max(MIN_DEFAULT_BUDGET_BYTES, Math.floor(free() * DEFAULT_FREE_MEMORY_SHARE)), given: false };
}

/** The budget line of a progress bar: `max memory 400 MB` (or `... (default: half the free memory)`). */
export function budgetLabel(budget: MemoryBudget = memoryBudget()): string {
  return `max memory ${formatMemorySize(budget.bytes)}${budget.given ? '' : ' (default)'}`;
}

/**
 * What an analysis holds per row at its peak, fitted to `report`'s step peaks on the 30x bench copy
 * (21.1M GPU ops, 10.7M API calls, 25.4M NVTX rows; README, Performance) beside `FIXED_BYTES`: the
 * GPU phase (a GPU op's columns, 25-30 bytes, with its share of the busy union, the iteration rows
 * and gap rows and the heap they leave; an API call's columns with its share of their index) and,
 * read alone, the NVTX phase (an NVTX row's columns with the summaries built from them and the read
 * worker's fold of the launches beside them). Against the peaks measured on 2026-12-08: 30x 1392 MB
 * estimated for 1362-1389 measured, 10x 544 for 500-512 (read in the slower order, as past 2M NVTX
 * rows), and pytorch-dense-long, its NVTX held beside the GPU ops (the held constant from there), 199
 * for 186-199; 162 for 158-159 in the slower order. (Fitted before to the peaks of 2026-12-07: 56, 30,
 * 55 and 60 bytes, which put 10x at 605 MB; before that 90, 36, 38 and 70, 847 MB.)
 */
export const BYTES_PER_GPU_OP = 50;
export const BYTES_PER_API_CALL = 26;
export const BYTES_PER_NVTX_ROW_HELD = 45;
export const BYTES_PER_NVTX_ROW_ALONE = 50;
/** Node, the code, the SQLite connections and a worker thread's heap: what any analysis takes before a row. */
export const FIXED_BYTES = 120 * 1024 ** 2;
/** What a pool's worker thread adds before a row (its isolate and heap, its SQLite connection): the rest of `FIXED_BYTES` is the process's, once. */
export const WORKER_FIXED_BYTES = 30 * 1024 ** 2;

/** The rows an analysis reads whole, as counted before reading (max(rowid) per table). */
export interface ExportRows {
  gpuOps: number;
  apiCalls: number;
  nvtx: number;
}

/**
 * The estimated peak of an analysis reading `rows` (the tables it does not read counted as 0):
 * the NVTX phase and the GPU phase, held at once (`nvtxHeld`: the NVTX columns stay for the whole
 * analysis) or one after the other.
 */
export function estimateAnalysisBytes(rows: ExportRows, nvtxHeld: boolean, inWorker = false): number {
  const gpu = rows.gpuOps * BYTES_PER_GPU_OP + rows.apiCalls * BYTES_PER_API_CALL;
  const nvtx = nvtxHeld ? rows.nvtx * BYTES_PER_NVTX_ROW_HELD + gpu : Math.max(gpu, rows.nvtx * BYTES_PER_NVTX_ROW_ALONE);
  return (inWorker ? WORKER_FIXED_BYTES : FIXED_BYTES) + nvtx;
}

/**
 * The estimated peak of analysing an export of `fileBytes` bytes when its rows are not counted
 * (the rank pool sizes its workers before any export is opened): ~0.39 bytes per byte of SQLite on
 * the bench copies (`report`: 500-512 MB at 1.3 GB, 1362-1389 MB at 3.9 GB; 513 and 1487 estimated),
 * beside the fixed part.
 */
export function estimateBytesOfFile(fileBytes: number): number {
  return Math.round(fileBytes * 0.39) + WORKER_FIXED_BYTES;
}

/** A pool worker's share when `workers` of them analyse at once: the budget less the process's fixed part, divided. */
export function workerShare(budget: MemoryBudget, workers: number): number {
  return Math.max(WORKER_FIXED_BYTES, Math.floor((budget.bytes - FIXED_BYTES) / Math.max(1, workers)));
}
