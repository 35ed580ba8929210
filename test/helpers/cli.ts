import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { CLI, CLI_BUNDLE, REPO_ROOT } from './fixtures.js';

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The bundle must be built from the current tsc output: a bare `vitest run` after `tsc` alone
 * would otherwise test a stale CLI (`npm test` and `npm run build` bundle right after tsc).
 */
function assertBundleFresh(): void {
  if (statSync(CLI_BUNDLE).mtimeMs < statSync(CLI).mtimeMs) {
    throw new Error(`${CLI_BUNDLE} is older than ${CLI}: run \`npm run build\` (tsc + bundle) before the tests`);
  }
}

/**
 * Runs a built entry (`node ENTRY ...args`: the CLI bundle, the tsc output, a copy of either) with
 * `env` added to this process's, and captures its output. No TTY: the default format is CSV; CI's
 * job-summary hook is kept out of the tests.
 */
export function runEntry(entry: string, args: string[], env: Record<string, string> = {}, cwd?: string): CliResult {
  const r = spawnSync(process.execPath, [entry, ...args], {
    cwd,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    env: { ...process.env, GITHUB_STEP_SUMMARY: '', ...env },
  });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Runs the built CLI as users run it (`node dist/iterscope.mjs ...args`, package.json `bin`) and
 * captures its output. The bundle starts in ~0.3 s instead of ~1 s for the ~630 modules of
 * dist/src/cli/main.js; test/cli/bundle.test.ts holds the two to the same output.
 */
export function runCli(args: string[], opts: { cwd?: string } = {}): CliResult {
  assertBundleFresh();
  return runEntry(CLI_BUNDLE, args, {}, opts.cwd);
}

/**
 * `files` of the build (names in dist/) alone in a dist/ of a new temporary directory (`prefix`),
 * with the installed packages reachable beside it (node_modules linked): an entry run from there
 * finds nothing of the build but those files. Returns the directory (remove it when done).
 */
export function copyOfDist(prefix: string, files: readonly string[]): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  mkdirSync(join(dir, 'dist'));
  for (const f of files) copyFileSync(join(dirname(CLI_BUNDLE), f), join(dir, 'dist', f));
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return dir;
}
