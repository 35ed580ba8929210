/**
 * The library as users import it (package.json `exports`: `iterscope` -> dist/iterscope-lib.mjs,
 * `iterscope/queries` -> dist/iterscope-queries.mjs, both re-exporting one CommonJS bundle that
 * scripts/bundle.mjs writes, dist/iterscope-lib.cjs, run with its code cache) is the tsc output
 * bundled: the same names, the same analysis (with the NVTX worker thread, whose bundled entry it
 * finds beside itself), and one copy of the shared modules.
 * Run in a child process that imports the package by its name, as a user's program does, and as a
 * one-liner (`node --input-type=module -e`), whose options a worker thread must not inherit.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { fixture, REPO_ROOT } from '../helpers/fixtures.js';

function node(script: string): unknown {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: REPO_ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`child failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout);
}

describe('the bundled library entries', () => {
  it('export exactly the names of the tsc entries', () => {
    const names = node(`
      const [lib, q, src, srcQ] = await Promise.all([import('iterscope'), import('iterscope/queries'), import('./dist/src/index.js'), import('./dist/queries/index.js')]);
      const keys = (m) => Object.keys(m).sort();
      console.log(JSON.stringify({ lib: keys(lib), src: keys(src), q: keys(q), srcQ: keys(srcQ), libFile: import.meta.resolve('iterscope') }));
    `) as Record<string, string[] | string>;
    expect(names.libFile).toMatch(/dist\/iterscope-lib\.mjs$/);
    expect(names.lib).toEqual(names.src);
    expect(names.q).toEqual(names.srcQ);
  });

  it('export the policy object the bundled pipeline consults (one copy, in the one bundle)', () => {
    const file = JSON.stringify(fixture('pytorch-dense', 'trace.sqlite'));
    const out = node(`
      const m = await import('iterscope');
      const calls = [];
      const consult = m.loopCompilation.beforeComputeThreads.bind(m.loopCompilation);
      m.loopCompilation.beforeComputeThreads = (n) => (calls.push(n), consult(n));
      m.withExport(${file}, (h) => m.analyzeExport(h, { parts: ['iterations'], nvtxRead: 'background' }));
      console.log(JSON.stringify({ calls }));
    `) as { calls: number[] };
    expect(out.calls).toEqual([2]);
  });

  it('give the analysis of the tsc entry, with the NVTX side in a worker thread', () => {
    const file = JSON.stringify(fixture('pytorch-dense', 'trace.sqlite'));
    const log = JSON.stringify(fixture('pytorch-dense', 'iteration_log.txt'));
    const out = node(`
      const run = (m) => m.withExport(${file}, (h) => m.analyzeExport(h, { parts: m.REPORT_PARTS, logs: [m.parseIterationLogFile(${log})], nvtxRead: 'background' }));
      // timingsMs and metrics.ms are the clock's, not the export's.
      const strip = (a) => JSON.stringify({ ...a, timingsMs: undefined, metrics: { ...a.metrics, ms: undefined } }, (k, v) => (typeof v === 'bigint' ? v.toString() + 'n' : v));
      const bundled = run(await import('iterscope'));
      const built = run(await import('./dist/src/index.js'));
      console.log(JSON.stringify({ same: strip(bundled) === strip(built), iterations: bundled.iterations.iterations.length, worker: 'launchIndexes' in bundled.timingsMs }));
    `) as { same: boolean; iterations: number; worker: boolean };
    expect(out.iterations).toBe(120);
    expect(out.worker).toBe(true);
    expect(out.same).toBe(true);
  });

  it("share one copy of their modules: a handle opened by 'iterscope' runs 'iterscope/queries' builders", () => {
    const file = JSON.stringify(fixture('pytorch-dense', 'trace.sqlite'));
    const out = node(`
      const { withExport, UsageError } = await import('iterscope');
      const q = await import('iterscope/queries');
      const src = await import('./dist/src/index.js');
      const kernels = withExport(${file}, (h) => q.allRows(h, q.selectKernels(h)).length);
      console.log(JSON.stringify({ kernels, distinctFromTsc: UsageError !== src.UsageError }));
    `) as { kernels: number; distinctFromTsc: boolean };
    // 56,503 kernels (fixtures README); the bundle is its own copy, apart from the tsc output.
    expect(out.kernels).toBe(56_503);
    expect(out.distinctFromTsc).toBe(true);
  });
});
