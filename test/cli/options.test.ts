/**
 * The iteration-selection options (src/cli/commands/options.ts), declared once for every command
 * that finds iterations: each command takes the same four, its parsers hand the parsed values (what
 * the library parses from the same text), and a bad value stops the command line with the same
 * UsageError, before any export is read. The commands run no further than their `preAction` hook.
 */
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { parseIterationSelection } from '../../src/iterations/selection.js';
import { selectionOf } from '../../src/cli/commands/options.js';
import { registerCategories, registerIterations } from '../../src/cli/commands/iterations.js';
import { registerGaps } from '../../src/cli/commands/gaps.js';
import { registerMetrics } from '../../src/cli/commands/metrics.js';
import { registerReport } from '../../src/cli/commands/report.js';
import { registerFindings } from '../../src/cli/commands/findings.js';
import { registerCompare, registerSummarize } from '../../src/cli/commands/compare.js';
import { registerTrace } from '../../src/cli/commands/trace.js';
import { registerMerge, registerRanks } from '../../src/cli/commands/ranks.js';
import { fixture } from '../helpers/fixtures.js';

const DENSE = fixture('pytorch-dense', 'trace.sqlite');

/** Every command that finds iterations, with the arguments it needs besides its options. */
const FINDS_ITERATIONS: Record<string, string[]> = {
  iterations: [],
  gaps: [],
  metrics: [],
  report: [],
  findings: [],
  summarize: [],
  trace: ['-o', 'trace.json'],
  ranks: [],
};

class Stop extends Error {}

/**
 * Reads a command line as the CLI does, stopping at the `preAction` hook: the options commander
 * hands the command's action (which never runs), or the error that stopped the command line.
 */
function readCommandLine(command: string, args: string[]): { opts?: Record<string, unknown>; error?: unknown } {
  const program = new Command('iterscope').exitOverride();
  for (const register of [registerIterations, registerCategories, registerGaps, registerMetrics, registerReport, registerFindings, registerSummarize, registerCompare, registerTrace, registerRanks, registerMerge]) register(program);
  for (const c of program.commands) c.exitOverride();
  let opts: Record<string, unknown> | undefined;
  program.hook('preAction', (_p, action) => {
    opts = action.opts();
    throw new Stop();
  });
  try {
    program.parse(['node', 'iterscope', command, ...args]);
  } catch (error) {
    return error instanceof Stop ? { opts } : { error };
  }
  throw new Error('the action ran: the preAction hook did not stop it');
}

function parsedOptions(command: string, args: string[]): Record<string, unknown> {
  const { opts, error } = readCommandLine(command, args);
  if (error) throw error;
  return opts!;
}

describe('the iteration selection options, one declaration for every command that finds iterations', () => {
  const text = { iterationRange: '/^\\[Executor\\] _forward_step (\\d+)/', firstIter: '3', profileRange: '10-20,30', logTz: '+02:00' };
  const args = ['--iteration-range', text.iterationRange, '--first-iter', text.firstIter, '--profile-range', text.profileRange, '--log-tz', text.logTz];

  it.each(Object.keys(FINDS_ITERATIONS))('%s: the parsers hand parsed values, the selection the library parses from the same text', (command) => {
    const opts = parsedOptions(command, [DENSE, ...FINDS_ITERATIONS[command], ...args]);
    expect(opts.firstIter).toBe(3);
    expect(opts.profileRange).toEqual([{ first: 10, last: 20 }, { first: 30, last: 30 }]);
    expect(opts.iterationRange).toMatchObject({ kind: 'regex', source: text.iterationRange });
    expect(opts.logTz).toBe('+02:00');
    expect(selectionOf(opts)).toEqual(parseIterationSelection(text));
  });

  const bad: [string[], string][] = [
    [['--first-iter', 'abc'], "--first-iter expects a non-negative integer (got 'abc')"],
    [['--first-iter', '-1'], "--first-iter expects a non-negative integer (got '-1')"],
    [['--log-tz', 'Nowhere/Zone'], "--log-tz: unknown time zone 'Nowhere/Zone' (use UTC, local, an IANA zone such as Europe/Paris, or an offset such as +02:00)"],
    [['--iteration-range', '/(unclosed/'], '--iteration-range: invalid pattern: Invalid regular expression: /(unclosed/: Unterminated group'],
    [['--profile-range', '50-40'], '--profile-range: 50-40 ends before it starts'],
  ];
  it.each(Object.keys(FINDS_ITERATIONS))('%s: a bad value is the same UsageError, raised while the command line is read (the export does not exist)', (command) => {
    for (const [options, message] of bad) {
      const { error } = readCommandLine(command, ['/nonexistent.sqlite', ...FINDS_ITERATIONS[command], ...options]);
      expect(error, `${command} ${options.join(' ')}`).toBeInstanceOf(UsageError);
      expect((error as Error).message).toBe(message);
    }
  });

  it('trace --iters is parsed once, while the command line is read', () => {
    expect(parsedOptions('trace', [DENSE, '-o', 'trace.json', '--iters', '3-5']).iters).toEqual({ first: 3, last: 5 });
    expect(readCommandLine('trace', [DENSE, '-o', 'trace.json', '--iters', '5-3']).error).toEqual(new UsageError('--iters 5-3 ends before it starts'));
  });
});
