/**
 * A closed stderr (`iterscope ... 2>&1 | head`, a reader that went away) loses the notes, not the
 * run: the command exits with its own code. Before, the unhandled EPIPE ended the process with
 * exit 1, which a CI gate reads as "regression found". The reader here is `>(true)`: a process
 * substitution that exits at once, so the command's first line on stderr meets a closed pipe.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixture } from '../helpers/fixtures.js';

const CLI = join(process.cwd(), 'dist/src/cli/main.js');

/** The exit status of `iterscope args...` with stdout to /dev/null and stderr to a closed pipe. */
function statusWithClosedStderr(args: string[]): number | null {
  const r = spawnSync('bash', ['-c', 'node "$CLI" "$@" > /dev/null 2> >(true)', 'iterscope', ...args], {
    encoding: 'utf8',
    env: { ...process.env, CLI, GITHUB_STEP_SUMMARY: '' },
  });
  return r.status;
}

describe('a closed stderr', () => {
  it('iterations on the SGLang export (it writes notes to stderr): exit 0, as with stderr open', () => {
    const args = ['iterations', fixture('sglang', 'trace.sqlite')];
    const open = spawnSync('node', [CLI, ...args], { encoding: 'utf8', env: { ...process.env, GITHUB_STEP_SUMMARY: '' } });
    expect(open.status).toBe(0);
    expect(open.stderr).not.toBe('');
    expect(statusWithClosedStderr(args)).toBe(0);
  });

  it('an unreadable export: exit 2 still (bad input), never 1', () => {
    expect(statusWithClosedStderr(['iterations', join(process.cwd(), 'no-such-export.sqlite')])).toBe(2);
  });
});
