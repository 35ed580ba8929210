import { Worker, type WorkerOptions } from 'node:worker_threads';
import { youngGeneration } from '../v8/youngGeneration.js';

/**
 * The Node options a worker thread inherits from its process. A worker is started with its
 * parent's `process.execArgv` unless told otherwise, and Node refuses some of them in a worker:
 * a program run as `node --input-type=module -e "..."` (a user's one-liner importing the library)
 * made every worker fail with ERR_INPUT_TYPE_NOT_ALLOWED. The options that only say how the main
 * script is given are left out; the rest (memory limits, loaders, conditions) are kept.
 */
/** Main-script options given as one word (`--input-type=module`, `--eval=...`). */
const MAIN_SCRIPT_WITH_VALUE = /^(--input-type|--eval|--print)=/;
/** Main-script options whose value is the next word (`-e "..."`, `--input-type module`). */
const MAIN_SCRIPT_THEN_VALUE = /^(--input-type|-e|--eval|-p|--print)$/;

export function workerExecArgv(execArgv: readonly string[] = process.execArgv): string[] {
  const kept: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const arg = execArgv[i]!;
    if (MAIN_SCRIPT_THEN_VALUE.test(arg)) i++;
    else if (!MAIN_SCRIPT_WITH_VALUE.test(arg)) kept.push(arg);
  }
  return kept;
}

/**
 * The young generation of a worker's heap, in MB (V8's semi-space: a third of it), unless the
 * caller gives one. A worker's short-lived values (a number per SQLite value read, the rows of one
 * pass) die young whatever the size, and V8 grows the young generation up to 48 MB when some
 * survive: each new page of it is memory the process touches for the first time, which costs more
 * than the extra scavenges of a small one. Measured with the NVTX worker of `report` on
 * pytorch-dense-long (2 cores, A/B, CPU): 0.982 at 6 MB, 0.991 of that at 3 MB; `nvtx --gpu`
 * (a read worker) 0.963; 8 exports in one `iterations` call (a pool) 0.999.
 */
export const WORKER_YOUNG_GENERATION_MB = 3;

function withSmallYoungGeneration(options: WorkerOptions): WorkerOptions {
  return { ...options, resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB, ...options.resourceLimits } };
}

/** `--max-old-space-size=N` (or with underscores): the heap limit a user gave the process, in MB. */
const MAX_OLD_SPACE = /^--max[-_]old[-_]space[-_]size=(\d+)$/;

/**
 * A worker thread running `entry`, with the parent's options (`workerExecArgv`). Node refuses V8
 * and per-process options in a worker (ERR_WORKER_INVALID_EXEC_ARGV): `node
 * --max-old-space-size=8192 iterscope.mjs report big.sqlite`, the usual way to give a large export
 * more heap, made every worker fail to start. Those options are left out (the ones Node names,
 * else all), and a heap limit carries over as the worker's `resourceLimits`.
 */
export function startWorker(entry: string | URL, givenOptions: WorkerOptions = {}, parentExecArgv: readonly string[] = process.execArgv): Worker {
  const execArgv = workerExecArgv(parentExecArgv);
  // A worker started inside a library analysis that set the young-generation flag carries its lease (src/v8/youngGeneration.ts).
  const workerData = youngGeneration.withLease(givenOptions.workerData);
  const options = withSmallYoungGeneration(workerData === givenOptions.workerData ? givenOptions : { ...givenOptions, workerData });
  try {
    return new Worker(entry, { ...options, execArgv });
  } catch (err) {
    if ((err as { code?: string }).code !== 'ERR_WORKER_INVALID_EXEC_ARGV') throw err;
    const heapMb = execArgv.map((a) => MAX_OLD_SPACE.exec(a)?.[1]).find((v) => v !== undefined);
    const limits: WorkerOptions = heapMb ? { resourceLimits: { ...options.resourceLimits, maxOldGenerationSizeMb: Number(heapMb) } } : {};
    const refused = (err as Error).message.split(': ').slice(1).join(': ').split(', ');
    const kept = execArgv.filter((a) => !refused.includes(a));
    try {
      return new Worker(entry, { ...options, ...limits, execArgv: kept });
    } catch (again) {
      if ((again as { code?: string }).code !== 'ERR_WORKER_INVALID_EXEC_ARGV') throw again;
      return new Worker(entry, { ...options, ...limits, execArgv: [] });
    }
  }
}
