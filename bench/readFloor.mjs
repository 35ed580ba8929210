#!/usr/bin/env node
/**
 * The reads alone, as `iterscope report` arranges them: the GPU ops and the CUDA API calls read
 * into typed columns on this thread while a worker thread reads the NVTX columns (the loader's own
 * code, `dist/src/load/`), nothing computed from them; beside the sqlite3 shell reading what
 * `npm run bench` gives `report` as its yardstick (kernels joined to their launch calls, and every
 * NVTX range with its text). Wall and CPU (both threads) are taken from the moment both threads
 * have loaded their modules to the moment both have read, so start-up is not in them: add the
 * CLI's (`iterscope --version`) and a worker's to compare with a command's.
 *
 * What it answers: how much of the shell's time one read of the report's tables already costs
 * through better-sqlite3 (the stack's SQLite binding), before any analysis. Issue 30's 1x `report`
 * lines (<= 1.0x the shell's wall, <= 1.5x its CPU) leave the analyses the difference.
 *
 *   node bench/readFloor.mjs [--file EXPORT] [--rounds N]   (default ../shared/fixtures/pytorch-dense-long/trace.sqlite, 5 rounds)
 *
 * Needs `npm run build` (dist/src) and `sqlite3` on the PATH. Prints one line per round and the medians.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { optionsOrExit } from './args.mjs';
import { REPORT_ROWS } from './shellSql.mjs';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The loader's modules, as `tsc` builds them. */
async function loader() {
  const { openExport } = await import(join(REPO, 'dist/src/export/openExport.js'));
  const { LoadedExport } = await import(join(REPO, 'dist/src/load/loadedExport.js'));
  return (file) => new LoadedExport(openExport(file), {});
}

const USAGE = 'usage: node bench/readFloor.mjs [--file EXPORT] [--rounds N]\n';

if (!isMainThread) {
  // The worker: load the modules, say so, read the NVTX columns when told.
  const open = await loader();
  parentPort.postMessage('ready');
  parentPort.once('message', () => parentPort.postMessage(open(workerData).nvtx().count));
} else {
  const values = optionsOrExit(
    'readFloor',
    {
      file: { type: 'string', default: join(REPO, '../shared/fixtures/pytorch-dense-long/trace.sqlite') },
      rounds: { type: 'string', default: '5' },
      // One timed round, in a process of its own (what `main` runs).
      round: { type: 'boolean', default: false },
    },
    USAGE,
  );
  if (values.round) await round(values.file);
  else main(resolve(values.file), Number(values.rounds));
}

/** One round in this process: both threads' modules loaded, then the reads timed. */
async function round(file) {
  const open = await loader();
  const worker = new Worker(fileURLToPath(import.meta.url), { workerData: file });
  await new Promise((res) => worker.once('message', res));
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const nvtx = new Promise((res) => worker.once('message', res));
  worker.postMessage('go');
  const loaded = open(file);
  const rows = { gpuOps: loaded.gpuOps().count, apiCalls: loaded.apiCalls().count, nvtx: await nvtx };
  const cpu = process.cpuUsage(cpu0);
  process.stdout.write(JSON.stringify({ wallS: (performance.now() - t0) / 1000, cpuS: (cpu.user + cpu.system) / 1e6, rows }) + '\n');
  await worker.terminate();
}

function main(file, rounds) {
  if (!Number.isInteger(rounds) || rounds < 1 || !existsSync(file)) {
    process.stderr.write(`readFloor: ${!existsSync(file) ? `${file}: no such export` : '--rounds must be a positive integer'}\n${USAGE}`);
    process.exit(2);
  }
  const ours = [];
  const shell = [];
  for (let i = 0; i < rounds; i++) {
    const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--round', '--file', file], { encoding: 'utf8' });
    if (r.status !== 0) {
      console.error(`readFloor: the round failed: ${r.stderr.trim().split('\n').pop()}`);
      process.exit(2);
    }
    ours.push(JSON.parse(r.stdout));
    shell.push(timedShell(file));
    const o = ours[i];
    const s = shell[i];
    console.log(`round ${i + 1}: reads ${o.wallS.toFixed(2)} s wall, ${o.cpuS.toFixed(2)} s CPU; shell ${s.wallS.toFixed(2)} s wall, ${s.cpuS.toFixed(2)} s CPU`);
  }
  const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const [w, c, sw, sc] = [med(ours.map((o) => o.wallS)), med(ours.map((o) => o.cpuS)), med(shell.map((s) => s.wallS)), med(shell.map((s) => s.cpuS))];
  // The ratios per round (each round's two runs back to back: the machine's drift between rounds cancels).
  const wallRatio = med(ours.map((o, i) => o.wallS / shell[i].wallS));
  const cpuRatio = med(ours.map((o, i) => o.cpuS / shell[i].cpuS));
  console.log(`rows: ${JSON.stringify(ours[0].rows)}`);
  console.log(`medians: reads ${w.toFixed(2)} s wall, ${c.toFixed(2)} s CPU; shell ${sw.toFixed(2)} s wall, ${sc.toFixed(2)} s CPU; per round, the reads take ${wallRatio.toFixed(2)}x the shell's wall and ${cpuRatio.toFixed(2)}x its CPU`);
}

/** The shell's wall and CPU (user + system of the child, from the kernel's accounting). */
function timedShell(file) {
  const t0 = performance.now();
  const r = spawnSync('/bin/sh', ['-c', 'sqlite3 -readonly "$1" "$2" > /dev/null; times', 'sh', file, REPORT_ROWS], { encoding: 'utf8' });
  const wallS = (performance.now() - t0) / 1000;
  if (r.status !== 0) {
    console.error(`readFloor: sqlite3 failed: ${r.stderr.trim()}`);
    process.exit(2);
  }
  // `times`: the shell's own user/system, then its children's (the sqlite3 run), as "XmY.YYYs".
  const children = r.stdout.trim().split('\n').pop().split(/\s+/).map((t) => {
    const m = /^(\d+)m([\d.]+)s$/.exec(t);
    return m ? Number(m[1]) * 60 + Number(m[2]) : NaN;
  });
  return { wallS, cpuS: children[0] + children[1] };
}
