/**
 * Worker threads are started without the options that only say how the main script was given
 * (`node --input-type=module -e "..."`, as a user's one-liner importing the library runs): Node
 * refuses them in a worker (ERR_INPUT_TYPE_NOT_ALLOWED). The end-to-end case is in
 * test/api/libraryBundle.test.ts; here the filter itself. Nor with V8 or per-process options
 * (`node --max-old-space-size=8192 iterscope.mjs ...`, ERR_WORKER_INVALID_EXEC_ARGV): the heap
 * limit carries over as the worker's resource limit.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { Worker, WorkerOptions } from 'node:worker_threads';
import { startWorker, WORKER_YOUNG_GENERATION_MB, workerExecArgv } from '../../src/worker/workerExecArgv.js';
import { CLI, fixture } from '../helpers/fixtures.js';

/** The first message `w` posts (or its error), the worker then terminated. */
async function firstReply(w: Worker): Promise<unknown> {
  try {
    return await new Promise((resolve, reject) => {
      w.once('message', resolve);
      w.once('error', reject);
    });
  } finally {
    await w.terminate();
  }
}

describe('workerExecArgv', () => {
  it('drops --input-type and -e/--eval/-p/--print with their script, keeps the rest', () => {
    expect(workerExecArgv(['--max-old-space-size=4096', '--input-type=module', '-e', 'import("iterscope")'])).toEqual(['--max-old-space-size=4096']);
    expect(workerExecArgv(['--input-type', 'module', '--eval', 'x', '--conditions=dev'])).toEqual(['--conditions=dev']);
    expect(workerExecArgv(['-p', '1+1', '--enable-source-maps'])).toEqual(['--enable-source-maps']);
    expect(workerExecArgv(['--eval=x', '--print=y'])).toEqual([]);
  });
  it('keeps a plain process\'s options as they are', () => {
    expect(workerExecArgv(['--import', 'tsx', '--expose-gc'])).toEqual(['--import', 'tsx', '--expose-gc']);
    expect(workerExecArgv([])).toEqual([]);
  });

  it('starts a worker from a process run with V8 and per-process options, its heap limit as a resource limit', async () => {
    const code = "const { parentPort, resourceLimits } = require('node:worker_threads'); parentPort.postMessage({ execArgv: process.execArgv, heapMb: resourceLimits.maxOldGenerationSizeMb });";
    const got = await firstReply(startWorker(code, { eval: true }, ['--max-old-space-size=512', '--expose-gc', '--no-warnings', '--title=x']));
    expect(got).toEqual({ execArgv: ['--no-warnings'], heapMb: 512 });
  });

  it('starts every worker with a young generation of WORKER_YOUNG_GENERATION_MB, unless the caller gives its own', async () => {
    const code = "const { parentPort, resourceLimits } = require('node:worker_threads'); parentPort.postMessage(resourceLimits.maxYoungGenerationSizeMb);";
    const youngOf = (options: WorkerOptions) => firstReply(startWorker(code, { eval: true, ...options }, []));
    expect(WORKER_YOUNG_GENERATION_MB).toBe(3);
    expect(await youngOf({})).toBe(WORKER_YOUNG_GENERATION_MB);
    expect(await youngOf({ resourceLimits: { maxYoungGenerationSizeMb: 12, maxOldGenerationSizeMb: 256 } })).toBe(12);
  });

  it('pytorch-tp2: `node --max-old-space-size=4096 iterscope iterations` over two ranks (worker pool) prints what it prints without', () => {
    const files = [fixture('pytorch-tp2', 'trace.rank0.sqlite'), fixture('pytorch-tp2', 'trace.rank1.sqlite')];
    const run = (nodeArgs: string[]) => spawnSync(process.execPath, [...nodeArgs, CLI, 'iterations', ...files, '--format', 'csv'], { encoding: 'utf8' });
    const withHeap = run(['--max-old-space-size=4096']);
    expect(withHeap.stderr).not.toContain('internal error');
    expect(withHeap.status).toBe(0);
    expect(withHeap.stdout.split('\n').length).toBeGreaterThan(80);
    expect(withHeap.stdout).toBe(run([]).stdout);
  });
});
