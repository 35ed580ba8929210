import { availableParallelism } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { isMainThread } from 'node:worker_threads';

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
 * The flag is V8's, for the whole process. The CLI's process sets it once, before the worker threads
 * that need it start, and never sets it back (`enable`). A program importing the library gets it
 * for the span of one analysis (`forAnalysisThreads`): set on the main thread as the NVTX worker
 * starts, set back as the worker is let go. `analyzeExport` is synchronous, so none of the
 * program's own code runs on that thread meanwhile; its other threads, if any, compile their long
 * loops where they run for that span. Measured through the library (`report` on
 * pytorch-dense-long, 2 cores, A/B against V8's defaults): 0.94 of the wall and CPU time, the
 * CLI's time. `disable` keeps the process's V8 flags as they are.
 */
export class LoopCompilation {
  private mode: 'analysis' | 'process' | 'off' = 'analysis';
  private applied = false;
  /** Set for the analysis in progress (`forAnalysisThreads`), to be set back. */
  private scoped = false;

  constructor(
    private readonly setFlags: (flags: string) => void = setRuntimeV8Flags,
    private readonly cores: () => number = availableParallelism,
    private readonly mainThread: () => boolean = () => isMainThread,
    private readonly commandLine: () => readonly string[] = () => process.execArgv,
  ) {}

  /** The process is the CLI's (or a program's that runs analyses alone): the flag, once set, stays. */
  enable(): void {
    this.mode = 'process';
  }

  /**
   * Never set the flag: a program whose other threads must keep V8's defaults, or one that sets
   * this flag itself at run time (a flag given on the command line is seen; one set with
   * `v8.setFlagsFromString` is not, and an analysis would set it back to V8's default).
   */
  disable(): void {
    this.mode = 'off';
  }

  /**
   * `threads` of ours are about to compute at once (this one and the workers it starts, or a pool's
   * workers): in an enabled process, when they fill every core, loops are compiled where they run
   * from now on. Returns whether the flag is set (now or before).
   */
  beforeComputeThreads(threads: number): boolean {
    if (this.applied) return true;
    if (this.mode !== 'process' || threads < this.cores()) return false;
    this.setFlags('--no-concurrent-osr');
    this.applied = true;
    return true;
  }

  /**
   * The NVTX worker's start, inside a synchronous analysis: as `beforeComputeThreads`, and in a
   * program that neither enabled nor disabled the policy (nor gave the flag on its command line),
   * the flag is set on the main thread for this analysis alone. Returns what to call when the
   * worker is let go (sets the flag back when it was set here).
   */
  forAnalysisThreads(threads: number): () => void {
    if (this.beforeComputeThreads(threads) || this.mode !== 'analysis' || this.scoped) return KEEP;
    if (threads < this.cores() || !this.mainThread()) return KEEP;
    // A program started with the flag either way chose it: its choice stays.
    if (this.commandLine().some((a) => /^--(no[-_])?concurrent[-_]osr(=|$)/.test(a))) return KEEP;
    this.setFlags('--no-concurrent-osr');
    this.scoped = true;
    return () => {
      if (!this.scoped) return;
      this.scoped = false;
      this.setFlags('--concurrent-osr');
    };
  }
}

/** Nothing to set back. */
const KEEP = (): void => {};

/**
 * The environment variable naming the V8 flags iterscope set at run time (space-separated). The
 * launcher of a bundled worker (scripts/launch.mjs, `RUNTIME_FLAGS_ENV`) reads it, from the
 * environment the worker inherits, to pick the code cache made under those flags: V8 rejects a
 * cache made under others.
 */
export const RUNTIME_V8_FLAGS_ENV = 'ITERSCOPE_V8_FLAGS';

/**
 * Sets V8 `flags` for the process, and records them in `RUNTIME_V8_FLAGS_ENV` for the workers it
 * starts. A flag that undoes one recorded (`--concurrent-osr` after `--no-concurrent-osr`) takes it
 * off the record instead: V8's default again, the default code cache again.
 */
export function setRuntimeV8Flags(flags: string): void {
  setFlagsFromString(flags);
  const recorded = (process.env[RUNTIME_V8_FLAGS_ENV] ?? '').split(' ').filter(Boolean);
  const negation = flags.startsWith('--no-') ? null : `--no-${flags.slice(2)}`;
  recordRuntimeV8Flags(negation !== null && recorded.includes(negation) ? recorded.filter((f) => f !== negation) : [...recorded, flags]);
}

/**
 * Sets a valued V8 flag back (`value`, e.g. V8's default) and takes the one iterscope set
 * (`recorded`, e.g. `--semi-space-growth-factor=1`) off the record: the workers started afterwards
 * take the code cache of the flags left.
 */
export function resetRuntimeV8Flag(recorded: string, value: string): void {
  setFlagsFromString(value);
  recordRuntimeV8Flags((process.env[RUNTIME_V8_FLAGS_ENV] ?? '').split(' ').filter((f) => f !== '' && f !== recorded));
}

/** The record of the flags iterscope set at run time (`RUNTIME_V8_FLAGS_ENV`): unset when none is left. */
function recordRuntimeV8Flags(flags: readonly string[]): void {
  if (flags.length > 0) process.env[RUNTIME_V8_FLAGS_ENV] = flags.join(' ');
  else delete process.env[RUNTIME_V8_FLAGS_ENV];
}

/** The process's policy: the CLI enables it; the NVTX worker's start and the export pool consult it (one per thread: a worker's never sets a flag). */
export const loopCompilation = new LoopCompilation();
