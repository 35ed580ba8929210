/**
 * The CLI keeps the main thread's young generation small for the commands measured faster that way
 * (src/v8/youngGeneration.ts); the workers' code caches made under that flag are used
 * (test/cli/codeCache.test.ts, `report` and the pool).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { analyzeExport } from '../../src/pipeline/analyzeExport.js';
import { REPORT_PARTS, type AnalysisPart } from '../../src/pipeline/request.js';
import { SchemaError } from '../../src/errors.js';
import { fixture } from '../helpers/fixtures.js';
import { copyExport, dropColumn, editExport } from '../helpers/hostileExport.js';
import {
  DEFAULT_SCAVENGE_FLAG,
  DEFAULT_YOUNG_GENERATION_FLAG,
  keepYoungGenerationSmall,
  LEASE_HELD,
  LEASE_RELEASED,
  LEASE_RESTORING,
  releaseLease,
  SMALL_YOUNG_GENERATION_COMMANDS,
  SERIAL_SCAVENGE_FLAG,
  SMALL_YOUNG_GENERATION_FLAG,
  YOUNG_GENERATION_FLAGS,
  YOUNG_GENERATION_LEASE_KEY,
  YoungGeneration,
} from '../../src/v8/youngGeneration.js';
// @ts-expect-error: a plain ES module without types (copied to dist/iterscope-launch.mjs by the build)
import * as launch from '../../scripts/launch.mjs';

/** The flags `keepYoungGenerationSmall` set for `command`, through a fake setter. */
function flagsSetFor(command: string, commandLine: string[] = [], mainThread = true): string[] {
  const set: string[] = [];
  keepYoungGenerationSmall(command, commandLine, (f) => set.push(f), mainThread);
  return set;
}

describe('keepYoungGenerationSmall', () => {
  it('sets --semi-space-growth-factor=1 then --no-parallel-scavenge for report, iterations, gaps, kernels and findings', () => {
    expect(SMALL_YOUNG_GENERATION_FLAG).toBe('--semi-space-growth-factor=1');
    expect(SERIAL_SCAVENGE_FLAG).toBe('--no-parallel-scavenge');
    expect(YOUNG_GENERATION_FLAGS).toEqual([SMALL_YOUNG_GENERATION_FLAG, SERIAL_SCAVENGE_FLAG]);
    expect([...SMALL_YOUNG_GENERATION_COMMANDS].sort()).toEqual(['findings', 'gaps', 'iterations', 'kernels', 'report']);
    for (const command of SMALL_YOUNG_GENERATION_COMMANDS) expect(flagsSetFor(command), command).toEqual(YOUNG_GENERATION_FLAGS);
  });

  it('leaves V8 alone for the other commands (trace and nvtx were not faster with it)', () => {
    for (const command of ['trace', 'nvtx', 'info', 'summarize', 'compare', 'engines', 'ranks', 'merge', 'metrics', 'categories']) expect(flagsSetFor(command), command).toEqual([]);
  });

  it('keeps the young-generation sizing a user gave node, and never sets the flag on a worker thread', () => {
    for (const arg of ['--max-semi-space-size=64', '--min_semi_space_size=8', '--semi-space-growth-factor=4', '--parallel-scavenge', '--no_parallel_scavenge'])
      expect(flagsSetFor('report', ['--enable-source-maps', arg]), arg).toEqual([]);
    expect(flagsSetFor('report', ['--max-old-space-size=8192', '--parallel-scavenge-tasks=1'])).toEqual(YOUNG_GENERATION_FLAGS);
    expect(flagsSetFor('report', [], false)).toEqual([]);
  });

  it('reads NODE_OPTIONS as well as the command line by default', () => {
    const before = process.env.NODE_OPTIONS;
    const set: string[] = [];
    try {
      process.env.NODE_OPTIONS = '--enable-source-maps --max-semi-space-size=32';
      keepYoungGenerationSmall('report', undefined, (f) => set.push(f), true);
      expect(set).toEqual([]);
      process.env.NODE_OPTIONS = '--enable-source-maps';
      keepYoungGenerationSmall('report', undefined, (f) => set.push(f), true);
      expect(set).toEqual(YOUNG_GENERATION_FLAGS);
    } finally {
      if (before === undefined) delete process.env.NODE_OPTIONS;
      else process.env.NODE_OPTIONS = before;
    }
  });
});

/** A policy over fakes: the flags set, in order ('reset X to Y' for a set-back). */
function policy(opts: { commandLine?: string[]; mainThread?: boolean } = {}) {
  const log: string[] = [];
  const p = new YoungGeneration(
    (f) => log.push(f),
    (recorded, value) => log.push(`reset ${recorded} to ${value}`),
    () => opts.commandLine ?? [],
    () => opts.mainThread ?? true,
  );
  return { p, log };
}

describe('YoungGeneration: the library keeps the young generation small for one analysis', () => {
  it('sets the flag as an analysis starts and V8 default back as it ends, once', () => {
    const { p, log } = policy();
    const back = p.forAnalysis();
    expect(log).toEqual(YOUNG_GENERATION_FLAGS);
    back();
    back();
    expect(DEFAULT_YOUNG_GENERATION_FLAG).toBe('--semi-space-growth-factor=2');
    expect(DEFAULT_SCAVENGE_FLAG).toBe('--parallel-scavenge');
    expect(log).toEqual([
      ...YOUNG_GENERATION_FLAGS,
      `reset ${SMALL_YOUNG_GENERATION_FLAG} to ${DEFAULT_YOUNG_GENERATION_FLAG}`,
      `reset ${SERIAL_SCAVENGE_FLAG} to ${DEFAULT_SCAVENGE_FLAG}`,
    ]);
    // The next analysis sets them again.
    p.forAnalysis()();
    expect(log).toHaveLength(8);
  });

  it('leaves the flag to the CLI once it chose (any command), to a user who sized the young generation or disabled the policy, and to worker threads', () => {
    for (const command of ['report', 'trace']) {
      const { p, log } = policy();
      p.keepSmallFor(command);
      p.forAnalysis()();
      expect(log, command).toEqual(command === 'report' ? YOUNG_GENERATION_FLAGS : []);
    }
    const sized = policy({ commandLine: ['--max-semi-space-size=16'] });
    sized.p.forAnalysis()();
    expect(sized.log).toEqual([]);
    const disabled = policy();
    disabled.p.disable();
    disabled.p.forAnalysis()();
    expect(disabled.log).toEqual([]);
    const worker = policy({ mainThread: false });
    worker.p.forAnalysis()();
    expect(worker.log).toEqual([]);
  });

  it('an analysis inside another (same thread) changes nothing; the outer one sets the flag back', () => {
    const { p, log } = policy();
    const outer = p.forAnalysis();
    p.forAnalysis()();
    expect(log).toEqual(YOUNG_GENERATION_FLAGS);
    outer();
    expect(log).toHaveLength(4);
  });

  it('hands its lease to the workers started meanwhile (object workerData only), held until the analysis ends', () => {
    const { p } = policy();
    const data = { file: 'x.sqlite', n: 1 };
    expect(p.withLease(data)).toBe(data);
    const back = p.forAnalysis();
    const given = p.withLease(data) as Record<string, unknown>;
    expect(given).toMatchObject(data);
    const lease = given[YOUNG_GENERATION_LEASE_KEY] as Int32Array;
    expect(lease).toBeInstanceOf(Int32Array);
    expect(lease.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(Atomics.load(lease, 0)).toBe(LEASE_HELD);
    expect(p.withLease(undefined)).toBeUndefined();
    expect(p.withLease([1])).toEqual([1]);
    back();
    expect(Atomics.load(lease, 0)).toBe(LEASE_RELEASED);
    expect(p.withLease(data)).toBe(data);
  });
});

describe("the worker launcher's restore (scripts/launch.mjs) honours the lease", () => {
  const flags = `${YOUNG_GENERATION_FLAGS.join(' ')} --no-concurrent-osr`;

  it('uses the same key and states as src/load', () => {
    expect(launch.YOUNG_GENERATION_LEASE_KEY).toBe(YOUNG_GENERATION_LEASE_KEY);
    expect([launch.LEASE_HELD, launch.LEASE_RESTORING]).toEqual([LEASE_HELD, LEASE_RESTORING]);
  });

  it("sets the recorded flag: always for the CLI's workers (no lease), for a library analysis's only while its lease is held", () => {
    const set: string[] = [];
    expect(launch.restoreYoungGenerationFlag(flags, { file: 'x' }, (f: string) => set.push(f))).toBe(true);
    expect(launch.restoreYoungGenerationFlag('--no-concurrent-osr', undefined, (f: string) => set.push(f))).toBe(false);
    const lease = new Int32Array(new SharedArrayBuffer(4));
    lease[0] = LEASE_HELD;
    expect(launch.restoreYoungGenerationFlag(flags, { [YOUNG_GENERATION_LEASE_KEY]: lease }, (f: string) => set.push(f))).toBe(true);
    expect(Atomics.load(lease, 0)).toBe(LEASE_HELD);
    releaseLease(lease);
    expect(launch.restoreYoungGenerationFlag(flags, { [YOUNG_GENERATION_LEASE_KEY]: lease }, (f: string) => set.push(f))).toBe(false);
    expect(set).toEqual([SMALL_YOUNG_GENERATION_FLAG, SMALL_YOUNG_GENERATION_FLAG]);
  });

  it('a release waits while a worker is setting the flag (another thread), then ends the lease', async () => {
    const lease = new Int32Array(new SharedArrayBuffer(4));
    lease[0] = LEASE_RESTORING;
    // The other thread holds RESTORING for ~50 ms, then gives the lease back (as the launcher does).
    const worker = new Worker(
      "const { workerData } = require('node:worker_threads'); Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50); Atomics.store(workerData, 0, 1); Atomics.notify(workerData, 0);",
      { eval: true, workerData: lease },
    );
    try {
      releaseLease(lease);
      expect(Atomics.load(lease, 0)).toBe(LEASE_RELEASED);
    } finally {
      await worker.terminate();
    }
  });
});

describe('which library analyses keep it small (pytorch-dense, through analyzeExport)', () => {
  /** The runtime-flag record seen during the analysis of `parts` (at each progress step), and after it. */
  function recordsOf(parts: AnalysisPart[]): { during: Set<string>; after: string | undefined } {
    const during = new Set<string>();
    withExport(fixture('pytorch-dense', 'trace.sqlite'), (h) => analyzeExport(h, { parts }, () => during.add(process.env.ITERSCOPE_V8_FLAGS ?? '')));
    return { during, after: process.env.ITERSCOPE_V8_FLAGS };
  }

  it('those reading the GPU ops on this thread (iterations, gaps, the report), but not the trace timeline, nor the kernel summary alone', () => {
    const before = process.env.ITERSCOPE_V8_FLAGS;
    expect(before).toBeUndefined();
    for (const parts of [['iterations'], ['gaps'], ['iterations', 'gaps', 'nvtx', 'kernels']] as AnalysisPart[][]) {
      const r = recordsOf(parts);
      expect(r.during.size, parts.join()).toBeGreaterThan(0);
      expect([...r.during].every((f) => f.startsWith(YOUNG_GENERATION_FLAGS.join(' '))), parts.join()).toBe(true);
      expect(r.after, parts.join()).toBe(before);
    }
    for (const parts of [['timeline'], ['kernels']] as AnalysisPart[][]) {
      const r = recordsOf(parts);
      expect([...r.during].some((f) => f.includes('semi-space') || f.includes('scavenge')), parts.join()).toBe(false);
      expect(r.after, parts.join()).toBe(before);
    }
  });
});

describe('an analysis that throws', () => {
  it("sets the flags back all the same: the report's parts on pytorch-dense without NVTX_EVENTS.start throw as the NVTX columns are read, before any part runs (the worker and flags of an analysis ended, whatever ends it)", () => {
    const tmp = mkdtempSync(join(tmpdir(), 'iterscope-younggen-'));
    try {
      const path = editExport(copyExport(fixture('pytorch-dense', 'trace.sqlite'), join(tmp, 'no-nvtx-start.sqlite')), (db) => dropColumn(db, 'NVTX_EVENTS', 'start'));
      const before = process.env.ITERSCOPE_V8_FLAGS;
      const during = new Set<string>();
      expect(() => withExport(path, (h) => analyzeExport(h, { parts: REPORT_PARTS }, () => during.add(process.env.ITERSCOPE_V8_FLAGS ?? '')))).toThrow(SchemaError);
      // The NVTX read's step ended (thrown) with the flags set; they are set back as the analysis ends.
      expect([...during]).toEqual([YOUNG_GENERATION_FLAGS.join(' ')]);
      expect(process.env.ITERSCOPE_V8_FLAGS).toBe(before);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
