import { isMainThread } from 'node:worker_threads';
import { setRuntimeV8Flags } from './loopCompilation.js';

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

/** The commands measured faster with `SMALL_YOUNG_GENERATION_FLAG`. */
export const SMALL_YOUNG_GENERATION_COMMANDS: ReadonlySet<string> = new Set(['report', 'iterations', 'gaps', 'kernels', 'findings']);

/** Node's options for this process: its command line's and `NODE_OPTIONS` (which may size the young generation too). */
function nodeOptionsOfProcess(): string[] {
  return [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean)];
}

/** Young-generation sizing flags a user may give node: theirs is kept. */
const YOUNG_GENERATION_OPTION = /^--(max|min)[-_]semi[-_]space[-_]size|^--semi[-_]space[-_]growth[-_]factor/;

/**
 * Sets `SMALL_YOUNG_GENERATION_FLAG` for the CLI's `command` when it is one of
 * `SMALL_YOUNG_GENERATION_COMMANDS`: once, on the main thread, before the export is read, and not
 * when node's options (its command line or `NODE_OPTIONS`) size the young generation themselves.
 * The flag is V8's, for the process (recorded for the workers' code caches, `setRuntimeV8Flags`);
 * a library import never sets it. Returns whether it was set.
 */
export function keepYoungGenerationSmall(
  command: string,
  commandLine: readonly string[] = nodeOptionsOfProcess(),
  setFlags: (flags: string) => void = setRuntimeV8Flags,
  mainThread: boolean = isMainThread,
): boolean {
  if (!SMALL_YOUNG_GENERATION_COMMANDS.has(command) || !mainThread) return false;
  if (commandLine.some((a) => YOUNG_GENERATION_OPTION.test(a))) return false;
  setFlags(SMALL_YOUNG_GENERATION_FLAG);
  return true;
}
