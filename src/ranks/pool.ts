import { statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { estimateBytesOfFile, FIXED_BYTES, memoryBudget, MEMORY_SHARE_ENV, workerShare, type MemoryBudget } from '../memoryBudget.js';
import { pathToFileURL } from 'node:url';
import { builtEntry } from '../builtEntry.js';
import { startWorker } from '../worker/workerExecArgv.js';
import { loopCompilation } from '../v8/loopCompilation.js';
import type { Worker } from 'node:worker_threads';
import { runTask, type TaskName, type TaskOptions, type TaskResults } from './tasks.js';
import { fromWireError, toWireError, type WorkerReply, type WorkerRequest } from './wire.js';
import { sayExcludedRowNotes } from '../export/excludedRows.js';

export interface ManyOptions {
  /** Worker threads at most (default: os.availableParallelism(); never more than the exports). */
  jobs?: number;
  /** Run every export in this thread, one after the other (no workers). */
  inProcess?: boolean;
  /** Called after each export is done, in completion order. */
  onProgress?: (done: number, total: number, file: string) => void;
  /** Options of one export each (by input index), over the shared ones: its own `--log` files (`engines`). */
  perExport?: readonly Partial<TaskOptions>[];
}

/** The compiled worker entry (the bundled one inside the CLI bundle, see `builtEntry`). */
export function workerEntry(): URL {
  return pathToFileURL(builtEntry('iterscope-worker.mjs', 'src/ranks/worker.js'));
}

/**
 * How many workers analyzeMany starts for `n` exports: `jobs`, else one per core, never more than
 * the exports, and, given `perExportBytes` (the largest export's estimated need), no more than the
 * memory budget holds (`--max-memory`; at least one).
 */
export function workerCount(n: number, jobs?: number, perExportBytes?: number, budget: MemoryBudget = memoryBudget()): number {
  const cap = jobs !== undefined && jobs > 0 ? Math.floor(jobs) : availableParallelism();
  const byMemory = perExportBytes ? Math.floor((budget.bytes - FIXED_BYTES) / perExportBytes) : Infinity;
  return Math.max(1, Math.min(n, cap, byMemory));
}

/** The largest input's estimated need (its file size, `estimateBytesOfFile`); 0 when none can be read. */
export function largestExportBytes(paths: readonly string[]): number {
  let most = 0;
  for (const p of paths) {
    try {
      most = Math.max(most, estimateBytesOfFile(statSync(p).size));
    } catch {
      // unreadable: the worker that opens it says why
    }
  }
  return most;
}

/**
 * Runs `task` on every export, each in a worker thread (up to `jobs` at a time, default the number
 * of cores), and returns the results in input order. One SQLite connection per export, opened in
 * the worker; results come back by structured clone. A failure starts no further export and
 * rejects with the error of the first export in input order that failed (an IterscopeError naming
 * the file for bad input), once the exports before it are done: the same error on every run,
 * whichever worker is faster. With one
 * export, one job, or `inProcess`, everything runs in this thread.
 */
export async function analyzeMany<T extends TaskName>(paths: readonly string[], task: T, opts: TaskOptions & ManyOptions = {}): Promise<TaskResults[T][]> {
  const { jobs, inProcess, onProgress, perExport, ...shared } = opts;
  const taskOpts = (i: number): TaskOptions => (perExport?.[i] ? { ...shared, ...perExport[i] } : shared);
  const n = paths.length;
  if (n === 0) return [];
  const workers = workerCount(n, jobs, largestExportBytes(paths));
  if (inProcess || workers === 1) {
    const out: TaskResults[T][] = [];
    for (const [i, p] of paths.entries()) {
      out.push(runTask(task, p, taskOpts(i)));
      onProgress?.(i + 1, n, p);
    }
    return out;
  }
  // The workers compute at once (this thread mostly waits for them).
  loopCompilation.beforeComputeThreads(workers);
  return inWorkers(paths, task, taskOpts, workers, onProgress);
}

/** `analyzeMany` over `workers` worker threads: each takes the next export when it is done. */
function inWorkers<T extends TaskName>(
  paths: readonly string[],
  task: T,
  taskOpts: (i: number) => TaskOptions,
  workers: number,
  onProgress: ManyOptions['onProgress'],
): Promise<TaskResults[T][]> {
  const n = paths.length;
  const entry = workerEntry();
  return new Promise<TaskResults[T][]>((resolvePromise, reject) => {
    const results = new Array<TaskResults[T]>(n);
    const pool: Worker[] = [];
    const busy = new Map<Worker, number>();
    // Failures by export index: the first in input order is the one reported, whichever worker
    // failed first (the same message on every run).
    const failures = new Map<number, Error>();
    let next = 0;
    let finished = 0;
    let settled = false;
    const stop = () => {
      settled = true;
      for (const w of pool) void w.terminate();
    };
    // After a failure no export starts; the answer waits only for exports earlier in the input.
    const settleFailure = () => {
      const first = Math.min(...failures.keys());
      if ([...busy.values()].some((id) => id < first)) return;
      stop();
      reject(failures.get(first)!);
    };
    const fail = (w: Worker, err: Error) => {
      if (settled) return;
      failures.set(busy.get(w) ?? -1, err);
      busy.delete(w);
      settleFailure();
    };
    const feed = (w: Worker) => {
      busy.delete(w);
      if (failures.size > 0) return settleFailure();
      if (next >= n) return void w.terminate();
      const id = next++;
      busy.set(w, id);
      w.postMessage({ id, task, file: paths[id], opts: taskOpts(id) } satisfies WorkerRequest);
    };
    for (let k = 0; k < workers; k++) {
      // Each worker's analyses hold to its share of the budget (memoryBudget.ts).
      const w = startWorker(entry, { env: { ...process.env, [MEMORY_SHARE_ENV]: String(workerShare(memoryBudget(), workers)) } });
      pool.push(w);
      w.on('message', (reply: WorkerReply) => {
        if (settled) return;
        if (!reply.ok) return fail(w, fromWireError(reply.error));
        sayExcludedRowNotes(reply.notes ?? []);
        results[reply.id] = reply.result as TaskResults[T];
        finished++;
        onProgress?.(finished, n, paths[reply.id]);
        if (finished === n) {
          stop();
          resolvePromise(results);
        } else feed(w);
      });
      // Uncaught in the worker (out of memory, a native crash): name the export it was on.
      w.on('error', (err) => {
        const id = busy.get(w);
        fail(w, fromWireError(toWireError(err, id === undefined ? '(worker)' : paths[id])));
      });
      w.on('exit', (code) => {
        const id = busy.get(w);
        if (!settled && id !== undefined && results[id] === undefined && code !== 0) {
          fail(w, new Error(`${paths[id]}: worker thread exited with code ${code}`));
        }
      });
      feed(w);
    }
  });
}
