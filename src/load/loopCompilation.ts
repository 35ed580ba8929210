import { availableParallelism } from 'node:os';
import { setFlagsFromString } from 'node:v8';

/**
 * How V8 compiles the long loops of a one-shot pass when our threads fill every core.
 *
 * V8 optimizes a loop that runs long (on-stack replacement, OSR) on a helper thread by default,
 * and the loop runs unoptimized until that compile job is done. Most of an analysis is such
 * passes, once each, over hundreds of thousands of rows. When the NVTX worker computes beside the
 * main thread on a two-core machine (or a pool runs a worker per core), the compile jobs wait for a
 * core (~0.5 s of CPU on V8's helper threads in a `report` on pytorch-dense-long), and the loops
 * run unoptimized meanwhile. Compiling them on the thread that runs them (`--no-concurrent-osr`)
 * measured, A/B on that export (2 cores): `report` 0.956 +- 0.008 wall and 0.939 CPU (12 pairs),
 * 8 exports in one `iterations` call 0.946, `iterations` 0.977. Where a core is free the helper
 * thread is better: `nvtx --gpu`, whose launches a read worker reads while this thread waits, was
 * 1.025-1.051 with the flag set for every command, and is 1.004 +- 0.011 under this rule (it
 * starts no NVTX worker). So the flag is set only when the threads that compute at once are at
 * least the cores.
 *
 * The flag is V8's, for the whole process: set once, before the worker threads that need it start,
 * never set back. Only the CLI asks for it (`enable`): a program importing the library keeps its
 * V8 flags as they are unless it enables the policy too.
 */
export class LoopCompilation {
  private enabled = false;
  private applied = false;

  constructor(
    private readonly setFlags: (flags: string) => void = setRuntimeV8Flags,
    private readonly cores: () => number = availableParallelism,
  ) {}

  /** The process is the CLI's: the policy may set the flag. */
  enable(): void {
    this.enabled = true;
  }

  /**
   * `threads` of ours are about to compute at once (this one and the workers it starts, or a pool's
   * workers): when they fill every core, loops are compiled where they run from now on. Returns
   * whether the flag is set (now or before).
   */
  beforeComputeThreads(threads: number): boolean {
    if (this.applied) return true;
    if (!this.enabled || threads < this.cores()) return false;
    this.setFlags('--no-concurrent-osr');
    this.applied = true;
    return true;
  }
}

/**
 * The environment variable naming the V8 flags iterscope set at run time (space-separated). The
 * launcher of a bundled worker (scripts/launch.mjs, `RUNTIME_FLAGS_ENV`) reads it, from the
 * environment the worker inherits, to pick the code cache made under those flags: V8 rejects a
 * cache made under others.
 */
export const RUNTIME_V8_FLAGS_ENV = 'ITERSCOPE_V8_FLAGS';

/** Sets V8 `flags` for the process, and records them in `RUNTIME_V8_FLAGS_ENV` for the workers it starts. */
export function setRuntimeV8Flags(flags: string): void {
  setFlagsFromString(flags);
  const before = process.env[RUNTIME_V8_FLAGS_ENV];
  process.env[RUNTIME_V8_FLAGS_ENV] = before ? `${before} ${flags}` : flags;
}

/** The process's policy: the CLI enables it; the NVTX worker's start and the export pool consult it. */
export const loopCompilation = new LoopCompilation();
