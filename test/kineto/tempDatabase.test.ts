/**
 * The temp database a Kineto trace is converted into belongs to the handle opened on it: closed,
 * it is gone and leaves no exit listener behind; never closed, it is deleted when the process
 * exits. On kineto-2026-before_fix_trace.json (test/fixtures-field/kineto); opening a trace runs
 * the built converter (dist/).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openInput } from '../../src/export/openExport.js';
import { REPO_ROOT } from '../helpers/fixtures.js';

const TRACE = join(REPO_ROOT, 'test', 'fixtures-field', 'kineto', 'kineto-2026-before_fix_trace.json');

describe('the temp database of a converted Kineto trace', () => {
  it('is removed on close, with its exit listener', () => {
    const before = process.listenerCount('exit');
    const a = openInput(TRACE);
    const b = openInput(TRACE);
    expect(process.listenerCount('exit')).toBe(before + 2);
    const dirA = dirname(a.sqlite.name);
    expect(dirA).not.toBe(dirname(b.sqlite.name));
    a.close();
    expect(existsSync(dirA)).toBe(false);
    expect(existsSync(b.sqlite.name)).toBe(true);
    expect(process.listenerCount('exit')).toBe(before + 1);
    b.close();
    expect(existsSync(b.sqlite.name)).toBe(false);
    expect(process.listenerCount('exit')).toBe(before);
  });

  it('is removed at process exit when its handle is never closed', () => {
    const opener = pathToFileURL(join(REPO_ROOT, 'dist', 'src', 'export', 'openExport.js')).href;
    const script = `const { openInput } = await import(${JSON.stringify(opener)}); const h = openInput(${JSON.stringify(TRACE)}); process.stdout.write(h.sqlite.name);`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/iterscope-kineto-.*trace\.sqlite$/);
    expect(existsSync(dirname(r.stdout))).toBe(false);
  });
});
