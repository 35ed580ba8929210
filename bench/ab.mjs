#!/usr/bin/env node
/**
 * Compares two builds of the CLI on one command, by alternating runs: A, B, A, B... and the mean of
 * the per-pair ratio B / A with its standard error. On a shared 2-core machine the same command's
 * time moves +-20% within minutes (the sqlite3 shell's too), so two `npm run bench` lines cannot
 * tell a 5% change from noise; pairs run back to back share the machine's state. With 15 pairs the
 * standard error of the ratio is ~2%: a change is real when the ratio is 2-3 errors away from 1.
 *
 *   node bench/ab.mjs A_DIST B_DIST [--pairs N] -- <iterscope arguments...>
 *   e.g. node bench/ab.mjs /tmp/dist-main dist --pairs 15 -- iterations F.sqlite --log L.txt --format csv
 *
 * A_DIST and B_DIST are `dist/` directories (each with iterscope.mjs and a node_modules beside it
 * or above it). Wall time from the clock, CPU (user + system, every thread) from GNU
 * `/usr/bin/time` when it exists. Output goes to /dev/null; a run that fails stops the comparison.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const argv = process.argv.slice(2);
const dash = argv.indexOf('--');
if (dash < 0 || dash < 2) {
  process.stderr.write('usage: node bench/ab.mjs A_DIST B_DIST [--pairs N] -- <iterscope arguments...>\n');
  process.exit(2);
}
const [distA, distB, ...opts] = argv.slice(0, dash);
if ([distA, distB].some((d) => d.startsWith('--'))) {
  process.stderr.write('usage: node bench/ab.mjs A_DIST B_DIST [--pairs N] -- <iterscope arguments...>\n');
  process.exit(2);
}
const args = argv.slice(dash + 1);
const pairsAt = opts.indexOf('--pairs');
const pairs = pairsAt >= 0 ? Number(opts[pairsAt + 1]) : 15;
if (!Number.isInteger(pairs) || pairs < 2) {
  process.stderr.write(`bench/ab: --pairs must be an integer >= 2 (got ${opts[pairsAt + 1]})\n`);
  process.exit(2);
}
const clis = [distA, distB].map((d) => resolve(d, 'iterscope.mjs'));
for (const cli of clis) {
  if (!existsSync(cli)) {
    process.stderr.write(`bench/ab: ${cli} does not exist (build it: npm run build)\n`);
    process.exit(2);
  }
}
const gnuTime = existsSync('/usr/bin/time');
const tmp = mkdtempSync(join(tmpdir(), 'iterscope-ab-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

/** One run: wall seconds, and CPU seconds (null without GNU time). */
function run(cli) {
  const out = join(tmp, 'time');
  const cmd = gnuTime ? ['/usr/bin/time', '-f', '%U %S', '-o', out, process.execPath, cli, ...args] : [process.execPath, cli, ...args];
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd[0], cmd.slice(1), { stdio: ['ignore', 'ignore', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r.status !== 0) {
    process.stderr.write(`bench/ab: ${cli} ${args.join(' ')} exited with ${r.status}: ${String(r.stderr).trim().split('\n').pop()}\n`);
    process.exit(2);
  }
  const cpu = gnuTime ? readFileSync(out, 'utf8').trim().split(/\s+/).map(Number).reduce((a, b) => a + b, 0) : null;
  return { wall, cpu };
}

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
/** Standard error of the mean (sample standard deviation / sqrt(n)). */
const stderr = (xs) => {
  const m = mean(xs);
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1) / xs.length);
};

const runs = [[], []];
for (let i = 0; i < pairs; i++) {
  // Alternate which side goes first, so neither always runs on a machine the other just warmed.
  const order = i % 2 === 0 ? [0, 1] : [1, 0];
  for (const side of order) runs[side].push(run(clis[side]));
  process.stderr.write(`\rbench/ab: pair ${i + 1}/${pairs}`);
}
process.stderr.write('\n');
const f = (x) => x.toFixed(3);
for (const [side, name] of [[0, 'A'], [1, 'B']]) {
  const w = runs[side].map((r) => r.wall);
  const c = runs[side].map((r) => r.cpu);
  process.stdout.write(`${name} ${[distA, distB][side]}: wall ${f(mean(w))} s (min ${f(Math.min(...w))})${gnuTime ? `, CPU ${f(mean(c))} s` : ''}\n`);
}
for (const key of gnuTime ? ['wall', 'cpu'] : ['wall']) {
  const ratios = runs[1].map((r, i) => r[key] / runs[0][i][key]);
  process.stdout.write(`B/A ${key}: ${f(mean(ratios))} +- ${f(stderr(ratios))} (mean of ${pairs} pair ratios +- its standard error)\n`);
}
