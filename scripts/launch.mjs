/**
 * Starts a bundled entry (`dist/iterscope.cjs`, `iterscope-nvtx.cjs`, `iterscope-worker.cjs`) with
 * V8's code cache beside it (`<bundle>[.<flags>].v8cache`, written by scripts/codeCache.mjs at build
 * time), and loads the library's bundle (`iterscope-lib.cjs`) the same way.
 * Copied by scripts/bundle.mjs to `dist/iterscope-launch.mjs`; each entry's `.mjs` (the `bin`, the
 * worker files) is two lines calling `runBundle`; the library's entries take `loadBundle`'s exports.
 *
 * Why: compiling the CLI's 1.9 MB bundle (and the NVTX worker's 0.8 MB) is part of every command.
 * With the cache, V8 deserializes the bytecode instead: `--version` 0.145 -> 0.127 s, `report` on
 * pytorch-dense-long 0.934x wall (A/B, 2 cores). Node 20 caches the code of a script, not of an
 * ES module (it has no `module.enableCompileCache`), so the bundles are CommonJS scripts run here.
 *
 * The cache read is the one made under the V8 flags iterscope set at run time (`RUNTIME_FLAGS_ENV`).
 * A cache V8 cannot use (another Node or V8 version, other V8 flags, a damaged or missing file) is
 * rejected or skipped, and the bundle compiles from its source as it would without one.
 */
import { spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { Script } from 'node:vm';
import { isMainThread, workerData } from 'node:worker_threads';

/**
 * The bundle's text as a function of CommonJS's five names plus `__iterscopeImport`, through which
 * it loads ES modules: a script compiled from a code cache loses the dynamic-import callback on
 * Node 20 (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING), so scripts/bundle.mjs turns the bundle's
 * `import(...)` expressions into calls of this parameter.
 */
export function wrapBundle(source) {
  return `(function (exports, require, module, __filename, __dirname, __iterscopeImport) {${source}\n})`;
}

/**
 * The V8 flags iterscope set in this process at run time (space-separated), as
 * src/v8/loopCompilation.ts records them; a worker thread inherits them with its environment.
 */
export const RUNTIME_FLAGS_ENV = 'ITERSCOPE_V8_FLAGS';

/**
 * The code cache file of a bundle made under `flags` (V8's defaults when empty): V8 uses a cache
 * only under the flags it was made with, and the CLI may set `--no-concurrent-osr` before it
 * starts a worker, so a worker bundle has one per set of flags it may meet.
 */
export function codeCacheOf(file, flags = '') {
  // Anything but flag names and values (a user's own ITERSCOPE_V8_FLAGS) names no cache.
  if (!/^[\w\s=-]*$/.test(flags)) return null;
  const variant = flags.trim().replace(/^-+/, '').replace(/\s+-*/g, '.');
  return variant ? `${file}.${variant}.v8cache` : `${file}.v8cache`;
}

/**
 * The flags iterscope set at run time in this thread's process: none in a main thread (a process
 * starts under V8's defaults and its command line; a variable inherited from the process that
 * started this one says nothing of this one), those recorded before a worker thread started.
 */
function runtimeFlags() {
  if (!isMainThread) {
    const flags = process.env[RUNTIME_FLAGS_ENV] ?? '';
    restoreYoungGenerationFlag(flags);
    return flags;
  }
  delete process.env[RUNTIME_FLAGS_ENV];
  return '';
}

/**
 * V8 sets `--semi-space-growth-factor` back to its default, for the whole process, whenever it
 * creates an isolate (a worker thread's). A worker sets it again to the value recorded
 * (src/v8/youngGeneration.ts) before it compiles: its code cache, made under the recorded flags,
 * then fits, and the main thread's young generation stays as the CLI or the analysis chose. A
 * worker of a library analysis carries that analysis's lease (`workerData`, see
 * `YOUNG_GENERATION_LEASE_KEY`): the flag is set only while the lease is held, so a worker that
 * starts after its analysis ended (let go early) leaves the program's flags alone.
 */
export function restoreYoungGenerationFlag(flags, data = workerData, setFlags = setFlagsFromString) {
  const growth = flags.split(/\s+/).find((f) => /^--semi-space-growth-factor=\d+$/.test(f));
  if (!growth) return false;
  const lease = data !== null && typeof data === 'object' ? data[YOUNG_GENERATION_LEASE_KEY] : undefined;
  if (!(lease instanceof Int32Array)) {
    setFlags(growth);
    return true;
  }
  if (Atomics.compareExchange(lease, 0, LEASE_HELD, LEASE_RESTORING) !== LEASE_HELD) return false;
  try {
    setFlags(growth);
  } finally {
    Atomics.store(lease, 0, LEASE_HELD);
    Atomics.notify(lease, 0);
  }
  return true;
}

/** src/v8/youngGeneration.ts's names for the lease (a test holds the two files to the same values). */
export const YOUNG_GENERATION_LEASE_KEY = 'iterscopeYoungGenerationLease';
export const LEASE_HELD = 1;
export const LEASE_RESTORING = 2;

/**
 * The bundle compiled, with its code cache when there is one. `cache`: 'used', 'rejected' (V8 could
 * not use it) or 'none' (no readable file).
 */
export function compileBundle(file) {
  // Read as Latin-1: a bundle is ASCII (scripts/bundle.mjs escapes every other character), so the
  // text is the same, without a UTF-8 decoding and the copy Node makes for one (the CLI's start:
  // 550 fewer pages of memory touched, 7,630 -> 7,082).
  const source = readFileSync(file, 'latin1');
  const cacheFile = codeCacheOf(file, runtimeFlags());
  let cachedData;
  try {
    cachedData = cacheFile === null ? undefined : readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  const script = new Script(wrapBundle(source), { filename: file, cachedData });
  const cache = cachedData === undefined ? 'none' : script.cachedDataRejected ? 'rejected' : 'used';
  return { script, cache };
}

/**
 * Runs the bundle `url` (a `.cjs` file) in this thread as Node would run a CommonJS module.
 * `ITERSCOPE_CODE_CACHE_REPORT=1` prints, on stderr, whether its code cache was used.
 */
export function runBundle(url) {
  const file = fileURLToPath(url);
  if (isMainThread && basename(file) === 'iterscope.cjs' && relaunchForLargeInputs()) return;
  let compiled;
  try {
    compiled = compileBundle(file);
  } catch (err) {
    // A build or install missing its bundle: one line and the CLI's exit code for an internal
    // error (a worker's error reaches the thread that started it).
    if (!isMainThread) throw err;
    process.stderr.write(`iterscope: internal error: cannot start ${file}: ${err instanceof Error ? err.message : String(err)} (rebuild: npm run build)\n`);
    process.exit(70);
  }
  execute(file, compiled);
}

/**
 * Runs the library bundle `url` (a `.cjs` file) and returns its exports: what the library's ES
 * module entries (`iterscope-lib.mjs`, `iterscope-queries.mjs`, through the one module that calls
 * this, so a process runs the bundle once) re-export by name. Errors are the importing program's:
 * a missing bundle throws.
 */
export function loadBundle(url) {
  const file = fileURLToPath(url);
  return execute(file, compileBundle(file));
}

/** Runs a compiled bundle as Node would run a CommonJS module; returns its `module.exports`. */
function execute(file, { script, cache }) {
  if (process.env.ITERSCOPE_CODE_CACHE_REPORT === '1') process.stderr.write(`iterscope: code cache ${basename(file)}: ${cache}\n`);
  const module = { exports: {} };
  const run = script.runInThisContext();
  run.call(module.exports, module.exports, createRequire(file), module, file, dirname(file), (specifier) => import(specifier));
  return module.exports;
}

/** An input from this size on runs the CLI with glibc's allocator set for large runs (`relaunchForLargeInputs`). */
export const LARGE_INPUT_BYTES = 256 * 1024 ** 2;
/** glibc's mmap threshold for a large run: 128 KiB, glibc's own default, fixed. */
export const LARGE_RUN_ALLOCATOR_ENV = { MALLOC_MMAP_THRESHOLD_: '131072' };
/** Set to 1 to keep a large run in this process (no child, the allocator as the environment sets it). */
export const NO_RELAUNCH_ENV = 'ITERSCOPE_NO_RELAUNCH';

/**
 * On Linux with glibc, a command given an input of `LARGE_INPUT_BYTES` or more (a file among its
 * arguments: an export, a log) runs in a child process whose environment fixes glibc's mmap
 * threshold (`LARGE_RUN_ALLOCATOR_ENV`); this process only waits for it, passes on the signals it
 * gets, and exits as the child did. Returns false (run here) in every other case: another
 * platform or C library, no large input, the threshold already set (`MALLOC_MMAP_THRESHOLD_` or
 * `GLIBC_TUNABLES`), or `ITERSCOPE_NO_RELAUNCH=1`.
 *
 * Why: glibc raises its mmap threshold (up to 32 MB) each time a mapped block is freed, after which
 * the analysis's columns of a few MB (two-byte ids of millions of rows) come from its heap, and the
 * memory they leave when let go stays in the process. On the 10x bench export (1.3 GB) `report`
 * then held ~150 MB freed columns through the gaps' explanation, peak 634 MB; with the threshold
 * fixed, 601. The variable must be set before the process starts, hence a child; its cost (a second
 * Node start, 0.1-0.2 s, and that process's ~45 MB, most of it the binary's pages shared with the
 * child) is spent only where a run takes tens of seconds.
 */
export function relaunchForLargeInputs(argv = process.argv, env = process.env) {
  const childEnv = largeRunEnv(argv, env);
  if (childEnv === null) return false;
  const child = spawn(process.execPath, [...process.execArgv, ...argv.slice(1)], { stdio: 'inherit', env: childEnv });
  const forward = (signal) => child.kill(signal);
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const signal of signals) process.on(signal, forward);
  child.on('error', (err) => {
    process.stderr.write(`iterscope: internal error: cannot start the child process: ${err.message} (set ${NO_RELAUNCH_ENV}=1 to run without it)\n`);
    process.exit(70);
  });
  child.on('exit', (code, signal) => {
    for (const s of signals) process.off(s, forward);
    if (signal) process.kill(process.pid, signal);
    else process.exit(code ?? 70);
  });
  return true;
}

/**
 * The environment of the child a large run starts in (`env` with `LARGE_RUN_ALLOCATOR_ENV`), or
 * null to run in this process (see `relaunchForLargeInputs`). The child's environment has the
 * threshold set, so it never starts another.
 */
export function largeRunEnv(argv, env, host = { platform: process.platform, glibc: isGlibc }) {
  if (host.platform !== 'linux' || env[NO_RELAUNCH_ENV] === '1') return null;
  if (env.MALLOC_MMAP_THRESHOLD_ !== undefined || /mmap_threshold/.test(env.GLIBC_TUNABLES ?? '')) return null;
  if (!argv.slice(2).some(isLargeFile) || !host.glibc()) return null;
  return { ...env, ...LARGE_RUN_ALLOCATOR_ENV };
}

/** A command-line argument naming a regular file of `LARGE_INPUT_BYTES` or more, itself or as an option's `--name=value`. */
function isLargeFile(arg) {
  const path = !arg.startsWith('-') ? arg : arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : '';
  if (path === '') return false;
  try {
    const st = statSync(path, { throwIfNoEntry: false });
    return st !== undefined && st.isFile() && st.size >= LARGE_INPUT_BYTES;
  } catch {
    return false;
  }
}

/** Whether this Node runs on glibc (whose allocator reads `MALLOC_MMAP_THRESHOLD_`). */
function isGlibc() {
  try {
    process.report.excludeNetwork = true;
    return process.report.getReport().header.glibcVersionRuntime !== undefined;
  } catch {
    return false;
  }
}
