#!/usr/bin/env node
/**
 * Where V8's optimizing compiler spends its time on one iterscope command: TurboFan compile time
 * and compiles per function, and the deoptimizations that caused recompiles. On the 2-core bench
 * machine a `report` on pytorch-dense-long spent about 1 s of its ~3.7 s CPU in V8's helper
 * threads, nearly all of it compiling (with `--no-concurrent-recompilation` they go idle), and
 * with both of our threads busy those compile jobs wait for a core while the code runs
 * unoptimized. A function compiled several times, or a deopt in the middle of a long loop, is
 * where to look: the usual cause is a one-shot loop that is OSR-compiled and then leaves into code
 * that never ran (or takes a branch first taken late), see unionIntervals, placeGpuOps,
 * explainGaps and splitGapCauses.
 *
 *   node bench/jit.mjs [--top N] [--cli PATH] -- <iterscope arguments...>
 *   e.g. node bench/jit.mjs -- report ../shared/fixtures/pytorch-dense-long/trace.sqlite --format md
 *
 * Runs the CLI bundle (default dist/iterscope.mjs; build first) once under
 * `--trace-opt --trace-deopt`; the command's own output is dropped. Compile times are the
 * compile jobs' elapsed times (they run beside our threads): compare them within a run, and count
 * compiles and deopts across runs.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const argv = process.argv.slice(2);
const dash = argv.indexOf('--');
const usage = 'usage: node bench/jit.mjs [--top N] [--cli PATH] -- <iterscope arguments...>\n';
if (dash < 0 || dash === argv.length - 1) {
  process.stderr.write(usage);
  process.exit(2);
}
const opts = argv.slice(0, dash);
const args = argv.slice(dash + 1);
const optionValue = (name, fallback) => {
  const i = opts.indexOf(name);
  return i >= 0 && i + 1 < opts.length ? opts[i + 1] : fallback;
};
const top = Number(optionValue('--top', '25'));
if (!Number.isInteger(top) || top <= 0) {
  process.stderr.write(`jit: --top must be a positive integer\n${usage}`);
  process.exit(2);
}
const here = dirname(fileURLToPath(import.meta.url));
const cli = resolve(optionValue('--cli', join(here, '..', 'dist', 'iterscope.mjs')));

const run = spawnSync(process.execPath, ['--trace-opt', '--trace-deopt', cli, ...args], { encoding: 'utf8', maxBuffer: 1 << 30 });
if (run.status !== 0) {
  process.stderr.write(`jit: the command failed (exit ${run.status}): ${(run.stderr ?? '').trim().split('\n')[0]}\n`);
  process.exit(2);
}

/** Per function: compile jobs (count, summed ms) and deopts (reason at bytecode offset -> count). */
const byFunction = new Map();
const entry = (name) => {
  let e = byFunction.get(name);
  if (!e) byFunction.set(name, (e = { compiles: 0, ms: 0, deopts: new Map() }));
  return e;
};
/** `<JSFunction name (sfi = 0x...)>`: anonymous functions keep their shared-function-info address. */
const functionName = (line) => {
  const m = /<JSFunction (\S*) ?\(sfi = (0x[0-9a-f]+)\)>/.exec(line);
  return m ? m[1] || `(anonymous ${m[2]})` : null;
};
let compiles = 0;
let compileMs = 0;
let deopts = 0;
for (const line of run.stdout.split('\n')) {
  if (line.startsWith('[completed compiling')) {
    const name = functionName(line);
    const ms = /took [0-9.]+, ([0-9.]+), [0-9.]+ ms/.exec(line);
    if (!name || !ms) continue;
    const e = entry(name);
    e.compiles++;
    e.ms += Number(ms[1]);
    compiles++;
    compileMs += Number(ms[1]);
  } else if (line.startsWith('[bailout')) {
    const name = functionName(line);
    const reason = /reason: (.*?)\): begin/.exec(line)?.[1] ?? '?';
    const offset = /bytecode offset (\d+)/.exec(line)?.[1] ?? '?';
    if (!name) continue;
    const key = `@${offset} ${reason}`;
    const d = entry(name).deopts;
    d.set(key, (d.get(key) ?? 0) + 1);
    deopts++;
  }
}

const rows = [...byFunction].sort((a, b) => b[1].ms - a[1].ms).slice(0, top);
console.log(`${compiles} TurboFan compiles, ${compileMs.toFixed(0)} ms of compile jobs; ${deopts} deopts`);
console.log(`top ${rows.length} functions by compile time (ms, compiles, deopts: bytecode offset and reason):`);
for (const [name, e] of rows) {
  const why = [...e.deopts].map(([k, n]) => (n > 1 ? `${n}x ${k}` : k)).join('; ');
  console.log(`${e.ms.toFixed(1).padStart(8)} ${String(e.compiles).padStart(3)}  ${name}${why ? `  [${why}]` : ''}`);
}
