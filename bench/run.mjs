#!/usr/bin/env node
/**
 * `npm run bench`: wall time and peak RSS of iterscope commands on a large real export, beside the
 * sqlite3 shell reading the same columns (the floor: SQLite's own scan, no analysis). Best of N
 * runs each, interleaved so drift in machine load hits both sides alike.
 *
 * Builds nothing: run `npm ci` (or `npm test`) first so `dist/` exists.
 *
 *   node bench/run.mjs [--runs N] [--file EXPORT] [--only name,name]
 *
 * Peak RSS comes from GNU `/usr/bin/time -f %M`; without it (or with ITERSCOPE_BENCH_NO_GNU_TIME=1)
 * the CLI runs inside a small wrapper that reports `process.resourceUsage().maxRSS`.
 *
 * Prints a table and writes the same numbers to bench/results.json (gitignored).
 * To benchmark another command, add an entry to BENCHMARKS.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(here, '..');
const CLI = join(REPO, 'dist', 'src', 'cli', 'main.js');
const DEFAULT_FILE = resolve(REPO, '..', 'shared', 'fixtures', 'pytorch-dense-long', 'trace.sqlite');
const TARGET_RATIO = 3;

/**
 * One entry per benchmarked command: `args` for the iterscope CLI (the export path is `F`), and
 * `shellSql`, the query the sqlite3 shell runs over the same columns (null: no shell baseline).
 */
const BENCHMARKS = [
  {
    name: 'kernels',
    args: (F) => ['kernels', F, '--format', 'csv'],
    // Demangled name via StringIds + start/end: what cuda_gpu_kern_sum reads.
    shellSql: 'SELECT s.value, k.start, k."end" FROM CUPTI_ACTIVITY_KIND_KERNEL AS k JOIN StringIds AS s ON s.id = k.demangledName',
  },
  {
    name: 'nvtx',
    args: (F) => ['nvtx', F, '--format', 'csv'],
    // Range rows with resolved text, domain and thread: what nvtx_sum reads.
    shellSql:
      'SELECT n.start, n."end", n.eventType, coalesce(s.value, n.text), n.domainId, n.globalTid FROM NVTX_EVENTS AS n ' +
      'LEFT JOIN StringIds AS s ON s.id = n.textId WHERE n.eventType IN (59, 60, 70, 71)',
  },
  {
    name: 'iterations',
    args: (F) => ['iterations', F, '--log', join(dirname(F), 'iteration_log.txt'), '--format', 'csv'],
    // Kernels joined to the API calls that launched them: the core of the attribution.
    shellSql:
      'SELECT k.start, k."end", k.deviceId, k.demangledName, r.start, r.globalTid FROM CUPTI_ACTIVITY_KIND_KERNEL AS k ' +
      'JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS r ON r.correlationId = k.correlationId AND (r.globalTid >> 24) = (k.globalPid >> 24)',
  },
];

const { values: opts } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    file: { type: 'string' },
    only: { type: 'string' },
  },
});
const RUNS = Math.max(1, Number.parseInt(opts.runs, 10) || 3);
const FILE = resolve(opts.file ?? process.env.ITERSCOPE_BENCH_FILE ?? DEFAULT_FILE);
const only = opts.only ? new Set(opts.only.split(',')) : null;

function die(msg) {
  process.stderr.write(`bench: ${msg}\n`);
  process.exit(2);
}

if (!existsSync(CLI)) die(`${relative(REPO, CLI)} is missing: run \`npm ci\` or \`npm test\` first (the bench builds nothing)`);
if (!existsSync(FILE)) die(`${FILE} is missing (set --file or ITERSCOPE_BENCH_FILE)`);

function onPath(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).status === 0;
}

const tmp = mkdtempSync(join(tmpdir(), 'iterscope-bench-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
const rssFile = join(tmp, 'rss');

/** GNU time writes the child's peak RSS (KB) to a file, apart from the command's own stderr. */
const gnuTime = (() => {
  if (process.env.ITERSCOPE_BENCH_NO_GNU_TIME || !existsSync('/usr/bin/time')) return false;
  const r = spawnSync('/usr/bin/time', ['-f', '%M', '-o', rssFile, 'true']);
  return r.status === 0 && /^\d+\s*$/.test(readFileSync(rssFile, 'utf8'));
})();

/** Without GNU time: run the CLI inside this wrapper, which reports its own maxRSS at exit. */
const WRAPPER = join(tmp, 'rss-wrapper.mjs');
writeFileSync(
  WRAPPER,
  `import { writeFileSync } from 'node:fs';
const [out, cli, ...args] = process.argv.slice(2);
process.argv = [process.argv[0], cli, ...args];
process.on('exit', () => writeFileSync(out, String(process.resourceUsage().maxRSS)));
await import(cli);
`,
);

/** Runs a command once: wall seconds and peak RSS in MB (null when it cannot be measured). */
function measure(cmd, args, { node = false } = {}) {
  rmSync(rssFile, { force: true });
  let argv;
  if (gnuTime) argv = ['/usr/bin/time', '-f', '%M', '-o', rssFile, cmd, ...args];
  else if (node) argv = [process.execPath, WRAPPER, rssFile, ...args];
  else argv = [cmd, ...args];
  const t0 = process.hrtime.bigint();
  const r = spawnSync(argv[0], argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r.error) die(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) die(`${[cmd, ...args].join(' ')} exited ${r.status}: ${String(r.stderr).trim().split('\n').slice(-3).join(' | ')}`);
  let rssMb = null;
  if (existsSync(rssFile)) {
    const kb = Number.parseInt(readFileSync(rssFile, 'utf8').trim().split('\n').pop(), 10);
    if (Number.isFinite(kb)) rssMb = kb / 1024;
  }
  return { wall, rssMb };
}

const hasShell = onPath('sqlite3');
const entries = BENCHMARKS.filter((b) => !only || only.has(b.name));
const results = [];
for (const b of entries) {
  const args = b.args(FILE);
  const ours = [];
  const shell = [];
  for (let i = 0; i < RUNS; i++) {
    ours.push(measure(process.execPath, [CLI, ...args], { node: true }));
    if (hasShell && b.shellSql) shell.push(measure('sqlite3', ['-readonly', FILE, b.shellSql]));
  }
  const best = (xs) => (xs.length ? Math.min(...xs.map((x) => x.wall)) : null);
  const peak = (xs) => {
    const v = xs.map((x) => x.rssMb).filter((x) => x != null);
    return v.length ? Math.max(...v) : null;
  };
  const wallS = best(ours);
  const shellS = best(shell);
  const ratio = shellS ? wallS / shellS : null;
  results.push({
    name: b.name,
    command: `iterscope ${args.map((a) => (a === FILE ? 'F' : a)).join(' ')}`,
    wallS,
    peakRssMb: peak(ours),
    shellS,
    shellPeakRssMb: peak(shell),
    ratio,
    withinTarget: ratio == null ? null : ratio <= TARGET_RATIO,
    runsWallS: ours.map((x) => x.wall),
    runsShellS: shell.map((x) => x.wall),
    shellSql: b.shellSql,
  });
}

const fmt = (x, d) => (x == null ? '-' : x.toFixed(d));
const header = ['command', 'wall s', 'peak RSS MB', 'shell s', 'ratio'];
const rows = results.map((r) => [r.command, fmt(r.wallS, 2), fmt(r.peakRssMb, 0), fmt(r.shellS, 2), r.ratio == null ? '-' : `${r.ratio.toFixed(2)}x${r.withinTarget ? '' : ' MISSED'}`]);
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
const line = (cells) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
const size = statSync(FILE).size;
console.log(`iterscope bench: ${FILE} (${(size / 1e6).toFixed(0)} MB), best of ${RUNS}, target <= ${TARGET_RATIO}x the sqlite3 shell`);
console.log(line(header));
console.log(widths.map((w) => '-'.repeat(w)).join('  '));
for (const r of rows) console.log(line(r));
if (!hasShell) console.log('note: sqlite3 is not on PATH: shell baseline skipped');
if (!gnuTime) console.log('note: GNU /usr/bin/time not used: peak RSS measured in-process (wrapper) for iterscope only');

const out = join(here, 'results.json');
writeFileSync(
  out,
  JSON.stringify(
    {
      file: FILE,
      fileBytes: size,
      runs: RUNS,
      targetRatio: TARGET_RATIO,
      node: process.version,
      rssMethod: gnuTime ? 'GNU time %M' : 'process.resourceUsage().maxRSS (wrapper)',
      shell: hasShell ? 'sqlite3' : null,
      date: new Date().toISOString(),
      entries: results,
    },
    null,
    2,
  ) + '\n',
);
console.log(`wrote ${relative(process.cwd(), out) || out}`);
