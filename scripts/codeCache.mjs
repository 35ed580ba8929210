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
 * is set back before a cache is made. The worker bundles may start after the CLI set
 * `--no-concurrent-osr` (src/load/loopCompilation.ts, which records it in ITERSCOPE_V8_FLAGS for the
 * launcher), so theirs are made twice: under V8's defaults and under that flag.
 *
 *   node scripts/codeCache.mjs dist/iterscope.cjs dist/iterscope-nvtx.cjs ...
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { Script } from 'node:vm';
import { codeCacheOf, wrapBundle } from './launch.mjs';

/** The bundles a process starts on its main thread, under V8's defaults: the CLI and the library. */
const MAIN_THREAD_BUNDLES = ['iterscope.cjs', 'iterscope-lib.cjs'];

/** The flags the CLI may set before a worker starts, and how each is undone. */
const WORKER_FLAGS = [{ set: '--no-concurrent-osr', unset: '--concurrent-osr' }];

for (const file of process.argv.slice(2)) {
  const source = wrapBundle(readFileSync(file, 'utf8'));
  setFlagsFromString('--no-lazy');
  const script = new Script(source, { filename: file });
  setFlagsFromString('--lazy');
  write(file, source, script, null);
  if (!MAIN_THREAD_BUNDLES.includes(basename(file))) for (const flag of WORKER_FLAGS) write(file, source, script, flag);
}

/** The cache of `script` made under V8's defaults plus `flag` (none: null), checked, then written. */
function write(file, source, script, flag) {
  if (flag) setFlagsFromString(flag.set);
  const data = script.createCachedData();
  const rejected = new Script(source, { filename: file, cachedData: data }).cachedDataRejected;
  if (flag) setFlagsFromString(flag.unset);
  if (rejected) {
    process.stderr.write(`codeCache: V8 rejects the cache it just made of ${file}\n`);
    process.exit(1);
  }
  const out = codeCacheOf(file, flag?.set ?? '');
  writeFileSync(out, data);
  process.stdout.write(`code cache: ${basename(out)} ${(data.length / 1024 / 1024).toFixed(2)} MB\n`);
}
