#!/usr/bin/env node
import { existsSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { Command, CommanderError } from 'commander';
import { exitCodeFor, IterscopeError, EXIT_BAD_INPUT, UsageError } from '../errors.js';
import { registerInfo } from './commands/info.js';
import { registerKernels } from './commands/kernels.js';
import { registerNvtx } from './commands/nvtx.js';
import { registerCategories, registerIterations } from './commands/iterations.js';
import { registerCompare, registerSummarize } from './commands/compare.js';
import { registerGaps } from './commands/gaps.js';
import { registerMetrics } from './commands/metrics.js';
import { registerTrace } from './commands/trace.js';
import { registerReport } from './commands/report.js';
import { registerFindings } from './commands/findings.js';
import { NSYS_ENV, takeNsysOption } from '../export/nsysRep.js';
import { registerMerge, registerRanks } from './commands/ranks.js';

/** Builds the command tree. Every command is a thin call into library functions. */
export function buildProgram(): Command {
  const program = new Command('iterscope')
    .description('Where an LLM-serving engine spends its GPU time, iteration by iteration (Nsight Systems SQLite exports + TensorRT-LLM iteration logs).\nExit codes: 0 success, 1 regression found by a gate, 2 bad usage or unreadable input.\nInputs may be .nsys-rep reports: exported once to SQLite with nsys (on PATH, or --nsys PATH), reused while newer than the report.')
    .version('0.1.0')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  registerInfo(program);
  registerKernels(program);
  registerNvtx(program);
  registerIterations(program);
  registerGaps(program);
  registerMetrics(program);
  registerReport(program);
  registerFindings(program);
  registerCategories(program);
  registerSummarize(program);
  registerCompare(program);
  registerTrace(program);
  registerRanks(program);
  registerMerge(program);
  for (const cmd of program.commands) cmd.exitOverride();
  program.hook('preAction', (_program, action) => guardInputs(action));
  return program;
}

const canonical = (p: string) => (existsSync(p) ? realpathSync(p) : resolve(p));

/** Never write to an input file: `-o` must not name one of the command's inputs. */
function guardInputs(action: Command): void {
  const out = action.opts().output as string | undefined;
  if (!out) return;
  const o = canonical(out);
  const inputs = [...action.args, ...(['log', 'baseLog', 'headLog'] as const).flatMap((k) => (action.opts()[k] as string[] | undefined) ?? [])];
  if (inputs.some((i) => canonical(i) === o)) throw new UsageError(`-o ${out} is one of the inputs; iterscope never writes to an input file`);
}

/** Runs the CLI; user errors print one line and exit 2 (1 for a gate's regression). */
export async function main(argv: string[]): Promise<number> {
  try {
    // `--nsys PATH` (any position): the nsys that exports .nsys-rep inputs, for every command and worker.
    const { argv: rest, nsys } = takeNsysOption(argv);
    if (nsys !== undefined) process.env[NSYS_ENV] = nsys;
    await buildProgram().parseAsync(rest);
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // help and --version end with code 0; usage errors were already printed by commander.
      return err.exitCode === 0 || err.code === 'commander.helpDisplayed' || err.code === 'commander.version' ? 0 : EXIT_BAD_INPUT;
    }
    if (err instanceof IterscopeError) {
      process.stderr.write(`iterscope: ${err.message}\n`);
      return exitCodeFor(err);
    }
    const e = err as NodeJS.ErrnoException;
    if (e && typeof e.code === 'string' && /^E[A-Z]+$/.test(e.code) && e.message) {
      // File-system errors on output files and the like: still a one-liner.
      process.stderr.write(`iterscope: ${e.message}\n`);
      return EXIT_BAD_INPUT;
    }
    process.stderr.write(`iterscope: internal error: ${e?.stack ?? String(err)}\n`);
    return 70;
  }
}

// A closed pipe (`iterscope ... | head`) is not an error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});
const code = await main(process.argv);
process.exitCode = code;
