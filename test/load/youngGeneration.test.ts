/**
 * The CLI keeps the main thread's young generation small for the commands measured faster that way
 * (src/load/youngGeneration.ts); the workers' code caches made under that flag are used
 * (test/cli/codeCache.test.ts, `report` and the pool).
 */
import { describe, expect, it } from 'vitest';
import { keepYoungGenerationSmall, SMALL_YOUNG_GENERATION_COMMANDS, SMALL_YOUNG_GENERATION_FLAG } from '../../src/load/youngGeneration.js';

/** The flags `keepYoungGenerationSmall` set for `command`, through a fake setter. */
function flagsSetFor(command: string, commandLine: string[] = [], mainThread = true): string[] {
  const set: string[] = [];
  keepYoungGenerationSmall(command, commandLine, (f) => set.push(f), mainThread);
  return set;
}

describe('keepYoungGenerationSmall', () => {
  it('sets --semi-space-growth-factor=1 for report, iterations, gaps, kernels and findings', () => {
    expect(SMALL_YOUNG_GENERATION_FLAG).toBe('--semi-space-growth-factor=1');
    expect([...SMALL_YOUNG_GENERATION_COMMANDS].sort()).toEqual(['findings', 'gaps', 'iterations', 'kernels', 'report']);
    for (const command of SMALL_YOUNG_GENERATION_COMMANDS) expect(flagsSetFor(command), command).toEqual([SMALL_YOUNG_GENERATION_FLAG]);
  });

  it('leaves V8 alone for the other commands (trace and nvtx were not faster with it)', () => {
    for (const command of ['trace', 'nvtx', 'info', 'summarize', 'compare', 'engines', 'ranks', 'merge', 'metrics', 'categories']) expect(flagsSetFor(command), command).toEqual([]);
  });

  it('keeps the young-generation sizing a user gave node, and never sets the flag on a worker thread', () => {
    for (const arg of ['--max-semi-space-size=64', '--min_semi_space_size=8', '--semi-space-growth-factor=4']) expect(flagsSetFor('report', ['--enable-source-maps', arg]), arg).toEqual([]);
    expect(flagsSetFor('report', ['--max-old-space-size=8192'])).toEqual([SMALL_YOUNG_GENERATION_FLAG]);
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
      expect(set).toEqual([SMALL_YOUNG_GENERATION_FLAG]);
    } finally {
      if (before === undefined) delete process.env.NODE_OPTIONS;
      else process.env.NODE_OPTIONS = before;
    }
  });
});
