/**
 * `npm run bench` and its helpers (bench/run.mjs, make-10x.mjs, make-kineto-200mb.mjs, readFloor.mjs) answer a
 * wrong option as the CLI does: one line naming it, the usage, exit 2, no stack trace; `--help`
 * prints the usage. Each exits before reading or building anything.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/fixtures.js';

const SCRIPTS: [string, string][] = [
  ['run.mjs', 'bench'],
  ['make-10x.mjs', 'make-10x'],
  ['make-kineto-200mb.mjs', 'make-kineto-200mb'],
  ['readFloor.mjs', 'readFloor'],
];

function runScript(script: string, args: string[]) {
  return spawnSync(process.execPath, [join(REPO_ROOT, 'bench', script), ...args], { encoding: 'utf8', timeout: 30_000 });
}

describe('bench scripts: options', () => {
  it.each(SCRIPTS)('%s: an unknown option is one line and exit 2', (script, name) => {
    const r = runScript(script, ['--no-such-option']);
    expect(r.status).toBe(2);
    expect(r.stderr.split('\n')[0]).toBe(`${name}: Unknown option '--no-such-option'`);
    expect(r.stderr).toMatch(/^usage: node bench\//m);
    expect(r.stderr).not.toMatch(/^\s+at /m);
    expect(r.stdout).toBe('');
  });

  it.each(SCRIPTS)('%s: --help prints the usage and exits 0', (script) => {
    const r = runScript(script, ['--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^usage: node bench/${script.replace('.', '\\.')} `));
  });

  it('bench/run.mjs: an option without its value is one line and exit 2', () => {
    const r = runScript('run.mjs', ['--runs']);
    expect(r.status).toBe(2);
    expect(r.stderr.split('\n')[0]).toBe("bench: Option '--runs <value>' argument missing");
  });
});
