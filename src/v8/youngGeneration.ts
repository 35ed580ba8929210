import { isMainThread } from 'node:worker_threads';
import { resetRuntimeV8Flag, setRuntimeV8Flags } from './loopCompilation.js';

/**
 * The V8 flag that keeps the main thread's young generation at the size it has: new objects are
 * scavenged from a small space, and survivors promoted, instead of V8 doubling the space each time
 * many survive (up to 32 MB in `report` on pytorch-dense-long). Each page it grows by is memory the
 * process touches for the first time, which on the 2-core machines measured here costs more than
 * the extra scavenges. A/B on pytorch-dense-long (2 cores, against the build without it): `report`
 * 0.957 +- 0.007 wall and 0.959 CPU (12 pairs), `iterations` 0.911 / 0.925, `gaps` 0.915 / 0.939,
 * `kernels` 0.976 / 0.969, `findings` 0.966 / 0.977; the 10x export's `report` unchanged (peak RSS
 * ~890 MB either way). Not for every command: with the flag in every thread, `trace`, which builds
 * ~130 MB of JSON text from objects that live a while, took 1.037 (slower), and `nvtx --gpu`
 * 1.023 +- 0.018. V8 sets the flag back to its default whenever it creates an isolate; a worker
 * thread sets it again as it starts (scripts/launch.mjs).
 */
export const SMALL_YOUNG_GENERATION_FLAG = '--semi-space-growth-factor=1';

/**
 * Set with it: a scavenge runs on the thread whose young generation it collects, without V8's
 * helper threads. With our two threads computing on two cores, a helper that took part of a
 * scavenge waits for a core while the thread it works for waits for it (the main thread's
 * scavenges in the gaps' phase, where many objects survive, took 3-12 ms each). A/B on
 * pytorch-dense-long (2 cores), first with the flag in every thread from the start: `report` 0.980
 * +- 0.011 wall, 0.980 +- 0.008 CPU (16 pairs), `iterations` 0.983 / 0.971 (12), `gaps` 0.997 /
 * 0.987 (8); then as set here, against the build without: `report` 0.992 +- 0.021 / 0.979 +- 0.013
 * (16) and 0.965 / 0.968 (12), `iterations` 1.000 / 0.986, `gaps` 0.986 / 0.981, `findings` 0.944
 * / 0.944, `kernels` 0.997 / 0.989 (6), the library's `report` 0.999 +- 0.024 (16): a small gain,
 * on CPU more than wall. V8 keeps this flag when it creates an isolate.
 */
export const SERIAL_SCAVENGE_FLAG = '--no-parallel-scavenge';

/** V8's default for the first flag (Node 20: `node --v8-options`), what a library analysis sets back. */
export const DEFAULT_YOUNG_GENERATION_FLAG = '--semi-space-growth-factor=2';
/** ... and for the second. */
export const DEFAULT_SCAVENGE_FLAG = '--parallel-scavenge';

/** Each flag with V8's default for it, in the order they are set. */
const FLAGS_AND_DEFAULTS: readonly (readonly [flag: string, v8Default: string])[] = [
  [SMALL_YOUNG_GENERATION_FLAG, DEFAULT_YOUNG_GENERATION_FLAG],
  [SERIAL_SCAVENGE_FLAG, DEFAULT_SCAVENGE_FLAG],
];

/** The flags set together, in this order (the workers' code caches are named after it: scripts/codeCache.mjs). */
export const YOUNG_GENERATION_FLAGS: readonly string[] = FLAGS_AND_DEFAULTS.map(([flag]) => flag);

/** The commands measured faster with `YOUNG_GENERATION_FLAGS` (the growth factor's measures above). */
export const SMALL_YOUNG_GENERATION_COMMANDS: ReadonlySet<string> = new Set(['report', 'iterations', 'gaps', 'kernels', 'findings']);

/** Node's options for this process: its command line's and `NODE_OPTIONS` (which may size the young generation too). */
function nodeOptionsOfProcess(): string[] {
  return [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean)];
}

/** Young-generation flags a user may give node (its sizes, how it is scavenged): theirs are kept, and none of ours is set. */
const YOUNG_GENERATION_OPTION = /^--(max|min)[-_]semi[-_]space[-_]size|^--semi[-_]space[-_]growth[-_]factor|^--(no[-_])?parallel[-_]scavenge(=|$)/;

/** Whether node's options (`commandLine`) set young-generation flags of the user's own. */
function userSetsYoungGeneration(commandLine: readonly string[]): boolean {
  return commandLine.some((a) => YOUNG_GENERATION_OPTION.test(a));
}

/**
 * Sets `YOUNG_GENERATION_FLAGS` for the CLI's `command` when it is one of
 * `SMALL_YOUNG_GENERATION_COMMANDS`: once, on the main thread, before the export is read, and not
 * when node's options (its command line or `NODE_OPTIONS`) set young-generation flags themselves.
 * The flags are V8's, for the process (recorded for the workers' code caches, `setRuntimeV8Flags`).
 * Returns whether they were set.
 */
export function keepYoungGenerationSmall(
  command: string,
  commandLine: readonly string[] = nodeOptionsOfProcess(),
  setFlags: (flags: string) => void = setRuntimeV8Flags,
  mainThread: boolean = isMainThread,
): boolean {
  if (!SMALL_YOUNG_GENERATION_COMMANDS.has(command) || !mainThread) return false;
  if (userSetsYoungGeneration(commandLine)) return false;
  for (const flag of YOUNG_GENERATION_FLAGS) setFlags(flag);
  return true;
}

/**
 * The `workerData` key of a library analysis's lease (scripts/launch.mjs reads it under this name):
 * an `Int32Array` over shared memory, `LEASE_HELD` while the analysis that set the flag runs.
 */
export const YOUNG_GENERATION_LEASE_KEY = 'iterscopeYoungGenerationLease';
/** The lease's states: the analysis runs; it ended (the flag is V8's default again); a worker is setting the flag. */
export const LEASE_HELD = 1;
export const LEASE_RELEASED = 0;
export const LEASE_RESTORING = 2;

/**
 * Who keeps the young generation small, and for how long. The CLI's process decides once, by
 * command (`keepSmallFor`), and keeps its choice. A program importing the library gets the flag for
 * the span of each analysis that reads the GPU ops on its main thread (`forAnalysis`, from
 * `LoadedExport`): set as it starts, set back to V8's default as it ends. A worker thread started
 * meanwhile sets the flag again as it starts (V8 set it back when it created the worker's isolate),
 * but only while the analysis holds its lease (carried in the worker's `workerData`): a worker let
 * go before it started must not set it for the program after the analysis ended. The flags are V8's,
 * for the process: the program's other threads, if any, scavenge that way for that span too.
 */
export class YoungGeneration {
  private mode: 'analysis' | 'process' | 'off' = 'analysis';
  /** The lease of the analysis in progress (`forAnalysis`). */
  private lease: Int32Array | null = null;

  constructor(
    private readonly setFlags: (flags: string) => void = setRuntimeV8Flags,
    private readonly resetFlag: (recorded: string, value: string) => void = resetRuntimeV8Flag,
    private readonly commandLine: () => readonly string[] = nodeOptionsOfProcess,
    private readonly mainThread: () => boolean = () => isMainThread,
  ) {}

  /**
   * Never set the flag: a program that keeps V8's defaults, or sets this flag itself at run time
   * (one given on node's command line or in `NODE_OPTIONS` is seen; one set with
   * `v8.setFlagsFromString` is not, and an analysis would set it back to V8's default).
   */
  disable(): void {
    this.mode = 'off';
  }

  /** The CLI's `command`: `keepYoungGenerationSmall`, and no analysis changes the flag afterwards. Returns whether it was set. */
  keepSmallFor(command: string): boolean {
    this.mode = 'process';
    return keepYoungGenerationSmall(command, this.commandLine(), this.setFlags, this.mainThread());
  }

  /**
   * An analysis reading the GPU ops on this thread starts: in a program that left the choice to
   * the library (not the CLI's process, no young-generation sizing of its own), on the main thread,
   * sets the flags for it. Returns what to call as the analysis ends.
   */
  forAnalysis(): () => void {
    if (this.mode !== 'analysis' || this.lease !== null || !this.mainThread()) return KEEP;
    if (userSetsYoungGeneration(this.commandLine())) return KEEP;
    const lease = new Int32Array(new SharedArrayBuffer(4));
    lease[0] = LEASE_HELD;
    for (const flag of YOUNG_GENERATION_FLAGS) this.setFlags(flag);
    this.lease = lease;
    return () => {
      if (this.lease !== lease) return;
      this.lease = null;
      releaseLease(lease);
      for (const [flag, v8Default] of FLAGS_AND_DEFAULTS) this.resetFlag(flag, v8Default);
    };
  }

  /** A worker's `workerData` (an object) with the lease of the analysis in progress, if any. */
  withLease(workerData: unknown): unknown {
    if (this.lease === null || workerData === null || typeof workerData !== 'object' || Array.isArray(workerData)) return workerData;
    return { ...workerData, [YOUNG_GENERATION_LEASE_KEY]: this.lease };
  }
}

/** Nothing to set back. */
const KEEP = (): void => {};

/** Ends a lease: waits out a worker setting the flag (a few microseconds), so that none sets it after. */
export function releaseLease(lease: Int32Array): void {
  while (Atomics.compareExchange(lease, 0, LEASE_HELD, LEASE_RELEASED) === LEASE_RESTORING) Atomics.wait(lease, 0, LEASE_RESTORING, 1);
}

/** The process's policy: the CLI decides by command; `LoadedExport` asks it per analysis; `startWorker` hands the lease on. */
export const youngGeneration = new YoungGeneration();
