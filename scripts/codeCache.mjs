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
 * is set back before a cache is made. The worker bundles may start after the CLI (or a library
 * analysis) set `--semi-space-growth-factor=1 --no-parallel-scavenge` and/or `--no-concurrent-osr`
 * (src/v8/youngGeneration.ts, src/v8/loopCompilation.ts; recorded in ITERSCOPE_V8_FLAGS for the
 * launcher), so theirs are made four times: under V8's defaults and under each set of those flags.
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

/**
 * The flags the CLI may have set when a worker starts, and how each is undone: the young
 * generation's (src/v8/youngGeneration.ts `YOUNG_GENERATION_FLAGS`, set as a command starts)
 * and the loops' (src/v8/loopCompilation.ts, set as the threads that fill the cores start).
 */
const GROWTH = { set: '--semi-space-growth-factor=1', unset: '--semi-space-growth-factor=2' };
const SERIAL_SCAVENGE = { set: '--no-parallel-scavenge', unset: '--parallel-scavenge' };
const LOOPS = { set: '--no-concurrent-osr', unset: '--concurrent-osr' };
/** The sets a worker may start under, each in the order the CLI sets its flags (the cache's file name follows it). */
const WORKER_FLAG_SETS = [[LOOPS], [GROWTH, SERIAL_SCAVENGE], [GROWTH, SERIAL_SCAVENGE, LOOPS]];

for (const file of process.argv.slice(2)) {
  const source = wrapBundle(readFileSync(file, 'utf8'));
  setFlagsFromString('--no-lazy');
  const script = new Script(source, { filename: file });
  setFlagsFromString('--lazy');
  write(file, source, script, []);
  if (!MAIN_THREAD_BUNDLES.includes(basename(file))) for (const flags of WORKER_FLAG_SETS) write(file, source, script, flags);
}

/** The cache of `script` made under V8's defaults plus `flags` (in order), checked, then written. */
function write(file, source, script, flags) {
  for (const flag of flags) setFlagsFromString(flag.set);
  const data = script.createCachedData();
  const rejected = new Script(source, { filename: file, cachedData: data }).cachedDataRejected;
  for (const flag of [...flags].reverse()) setFlagsFromString(flag.unset);
  if (rejected) {
    process.stderr.write(`codeCache: V8 rejects the cache it just made of ${file}\n`);
    process.exit(1);
  }
  const out = codeCacheOf(file, flags.map((f) => f.set).join(' '));
  writeFileSync(out, data);
  process.stdout.write(`code cache: ${basename(out)} ${(data.length / 1024 / 1024).toFixed(2)} MB\n`);
}
