#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { exitCodeFor, IterscopeError, EXIT_BAD_INPUT } from '../errors.js';
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
import { registerEngines } from './commands/engines.js';
import { registerLayers } from './commands/layers.js';
import { expandInputs } from '../ranks/expandInputs.js';
import { guardOutputs, note, stderrLine } from './output.js';
import { setExcludedRowSink } from '../export/excludedRows.js';
import { loopCompilation } from '../v8/loopCompilation.js';
import { youngGeneration } from '../v8/youngGeneration.js';
import { setCommandForMessages } from '../export/contract.js';
import { MAX_MEMORY_ENV, parseMemorySize } from '../memoryBudget.js';

/** `--max-memory`'s help (README, Performance: what is kept per row and what happens above the limit). */
const MAX_MEMORY_HELP =
  'memory this run may use, e.g. 400M or 2G (default: half the free memory, at least 1G): sizes the worker threads, and above it an export is read in a slower order that holds less, or a note says it has no bounded path yet';

/** Builds the command tree. Every command is a thin call into library functions. */
export function buildProgram(): Command {
  const program = new Command('iterscope')
    .description('Where an LLM-serving engine spends its GPU time, iteration by iteration (Nsight Systems SQLite exports + TensorRT-LLM iteration logs).\nExit codes: 0 success, 1 regression found by a gate, 2 bad usage or unreadable input, 3 a gate that cannot decide (compare --fail-on-inconclusive).\nInputs may be .nsys-rep reports: exported once to SQLite with nsys (on PATH, or --nsys PATH), reused while newer than the report.')
    .version('0.1.0')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  registerInfo(program);
  registerKernels(program);
  registerNvtx(program);
  registerIterations(program);
  registerLayers(program);
  registerGaps(program);
  registerMetrics(program);
  registerReport(program);
  registerFindings(program);
  registerCategories(program);
  registerSummarize(program);
  registerCompare(program);
  registerEngines(program);
  registerTrace(program);
  registerRanks(program);
  registerMerge(program);
  for (const cmd of program.commands) cmd.exitOverride().option('--max-memory <size>', MAX_MEMORY_HELP, (v: string) => parseMemorySize(v));
  program.hook('preAction', (_program, action) => {
    setCommandForMessages(action.name());
    // Every analysis of the process (worker threads too: they inherit the environment) reads the budget there.
    const maxMemory = action.opts().maxMemory as number | undefined;
    if (maxMemory !== undefined) process.env[MAX_MEMORY_ENV] = String(maxMemory);
    guardInputs(action);
    youngGeneration.keepSmallFor(action.name());
  });
  return program;
}

/** Options naming files a command reads. */
const INPUT_FILE_OPTIONS = ['log', 'baseLog', 'headLog', 'categories', 'benchmark', 'baseBenchmark', 'headBenchmark'] as const;

/** An option value and, for `EXPORT=FILE` values (`engines --log`), the text after each `=`: the file it may name. */
function withPairedFiles(value: string): string[] {
  const out = [value];
  for (let i = value.indexOf('='); i >= 0; i = value.indexOf('=', i + 1)) out.push(value.slice(i + 1));
  return out;
}

/** The files a command reads: its arguments expanded as the command expands them, plus option files. */
function inputFilesOf(action: Command): string[] {
  const args = action.args;
  // `merge` reads summaries from directories and globs; `compare` takes two files as given; the rest exports.
  let expanded: string[] = [];
  if (action.name() !== 'compare') {
    try {
      expanded = expandInputs(args, { extensions: action.name() === 'merge' ? ['.json'] : ['.sqlite'], what: 'inputs' });
    } catch {
      // a glob matching nothing: the command itself reports it
    }
  }
  const opts = action.opts();
  const optionFiles = INPUT_FILE_OPTIONS.flatMap((k) => {
    const v = opts[k] as string | string[] | undefined;
    return (v === undefined ? [] : Array.isArray(v) ? v : [v]).flatMap(withPairedFiles);
  });
  return [...args, ...expanded, ...optionFiles];
}

/** Never write to an input file: neither `-o` nor the job summary may be one of the command's inputs. */
function guardInputs(action: Command): void {
  const outputs: { what: string; path: string }[] = [];
  const out = action.opts().output as string | undefined;
  if (out) outputs.push({ what: '-o', path: out });
  const jobSummary = process.env.GITHUB_STEP_SUMMARY;
  if (jobSummary) outputs.push({ what: 'GITHUB_STEP_SUMMARY', path: jobSummary });
  if (outputs.length) guardOutputs(inputFilesOf(action), outputs);
}

/** Runs the CLI; user errors print one line and exit 2 (1 for a gate's regression). */
export async function main(argv: string[]): Promise<number> {
  setExcludedRowSink(note);
  // The process is the CLI's: long loops may be compiled where they run when our threads fill the cores.
  loopCompilation.enable();
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
      process.stderr.write(stderrLine(err.message));
      return exitCodeFor(err);
    }
    const e = err as NodeJS.ErrnoException;
    if (e && typeof e.code === 'string' && /^E[A-Z]+$/.test(e.code) && e.message) {
      // File-system errors on output files and the like: still a one-liner.
      process.stderr.write(stderrLine(e.message));
      return EXIT_BAD_INPUT;
    }
    process.stderr.write(`iterscope: internal error: ${e?.stack ?? String(err)}\n`);
    return 70;
  }
}

// A closed pipe (`iterscope ... | head`) is not an error; any other failure to write stdout
// (`> /dev/full`: ENOSPC, EIO) is one line and exit 2, like any other unwritable output.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  process.stderr.write(stderrLine(`cannot write to stdout: ${err.message}`));
  process.exit(EXIT_BAD_INPUT);
});
// A closed stderr (`iterscope ... 2>&1 | head`, or a reader that went away) loses the notes, not
// the run: the command goes on and exits with its own code. Unhandled, the error ended the process
// with exit 1, which a CI gate reads as "regression found".
process.stderr.on('error', () => {});
/**
 * The command this module runs when loaded, settled once it is done (`main` settles every error
 * itself). Not a top-level await: the CLI bundle is a CommonJS script (scripts/bundle.mjs: on
 * Node 20, V8 caches the code of a script, not of an ES module); a program that imports this
 * module to run a command awaits this instead.
 */
export const finished: Promise<void> = main(process.argv).then((code) => {
  process.exitCode = code;
});
