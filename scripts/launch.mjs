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
import { readFileSync } from 'node:fs';
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
