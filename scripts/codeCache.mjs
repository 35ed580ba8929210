#!/usr/bin/env node
/**
 * Writes V8's code cache of each CommonJS bundle given (`<bundle>.v8cache`, read by
 * scripts/launch.mjs when the bundle starts). Run by scripts/bundle.mjs in a process of its own:
 * it sets V8 flags while it works.
 *
 * The cache holds the bytecode of every function (compiled eagerly here, `--no-lazy`), so a
 * command compiles none of the bundle's code: a cache made after running one command would hold
 * only the functions that command ran.
 *
 * V8 uses a cache only under the flags it was made with (it records their hash). Lazy compiling
 * is set back before the cache is made. The worker bundles start after the CLI may have set
 * `--no-concurrent-osr` (src/load/loopCompilation.ts: when the threads that compute at once fill
 * the cores: the NVTX worker's two threads, or a pool's workers, on a machine of at most 2 cores),
 * so theirs is made under the flags they will meet there. Elsewhere, or under other flags, V8
 * rejects a cache and the bundle compiles from its source, as without one.
 *
 *   node scripts/codeCache.mjs dist/iterscope.cjs dist/iterscope-nvtx.cjs ...
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { Script } from 'node:vm';
import { codeCacheOf, wrapBundle } from './launch.mjs';

/** Whether the CLI starts the worker bundles with `--no-concurrent-osr` on this machine. */
const WORKERS_COMPILE_LOOPS_WHERE_THEY_RUN = availableParallelism() <= 2;

for (const file of process.argv.slice(2)) {
  const source = wrapBundle(readFileSync(file, 'utf8'));
  setFlagsFromString('--no-lazy');
  const script = new Script(source, { filename: file });
  setFlagsFromString('--lazy');
  const worker = basename(file) !== 'iterscope.cjs';
  if (worker && WORKERS_COMPILE_LOOPS_WHERE_THEY_RUN) setFlagsFromString('--no-concurrent-osr');
  const data = script.createCachedData();
  const check = new Script(source, { filename: file, cachedData: data });
  if (worker && WORKERS_COMPILE_LOOPS_WHERE_THEY_RUN) setFlagsFromString('--concurrent-osr');
  if (check.cachedDataRejected) {
    process.stderr.write(`codeCache: V8 rejects the cache it just made of ${file}\n`);
    process.exit(1);
  }
  writeFileSync(codeCacheOf(file), data);
  process.stdout.write(`code cache: ${basename(codeCacheOf(file))} ${(data.length / 1024 / 1024).toFixed(2)} MB\n`);
}
