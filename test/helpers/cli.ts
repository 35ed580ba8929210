import { spawnSync } from 'node:child_process';
import { CLI } from './fixtures.js';

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI (`node dist/src/cli/main.js ...args`) and captures its output. */
export function runCli(args: string[], opts: { cwd?: string } = {}): CliResult {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd: opts.cwd,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    // No TTY: the default format is CSV; keep CI's job-summary hook out of the tests.
    env: { ...process.env, GITHUB_STEP_SUMMARY: '' },
  });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}
