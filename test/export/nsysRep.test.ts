import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync, mkdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportCacheDir, exportPathFor, isNsysReport, takeNsysOption } from '../../src/export/nsysRep.js';
import { CLI, fixture } from '../helpers/fixtures.js';

const FIXTURE = fixture('pytorch-moe-window', 'trace.sqlite');

/** A stand-in `nsys`: `nsys export ... -o OUT IN` copies a fixture export to OUT and counts its calls. */
const STAND_IN = `#!/bin/sh
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out="$2"; shift 2;;
    *) shift;;
  esac
done
echo x >> "$NSYS_CALLS"
cp "$NSYS_FIXTURE" "$out"
`;

describe('.nsys-rep input', () => {
  let dir: string;
  let bin: string;
  let calls: string;
  const run = (args: string[], opts: { path?: string } = {}) => {
    const r = spawnSync(process.execPath, [CLI, ...args], {
      encoding: 'utf8',
      env: { ...process.env, PATH: opts.path ?? `${bin}:${process.env.PATH}`, NSYS_FIXTURE: FIXTURE, NSYS_CALLS: calls, GITHUB_STEP_SUMMARY: '', ITERSCOPE_NSYS: '' },
    });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const nsysCalls = () => (existsSync(calls) ? readFileSync(calls, 'utf8').split('\n').filter(Boolean).length : 0);

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'iterscope-nsysrep-'));
    bin = join(dir, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'nsys'), STAND_IN);
    chmodSync(join(bin, 'nsys'), 0o755);
    calls = join(dir, 'calls.txt');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('exports once next to the report, says so, then reuses the export while it is newer', () => {
    const rep = join(dir, 'run.nsys-rep');
    writeFileSync(rep, 'an Nsight Systems report stand-in');
    const first = run(['info', rep, '--format', 'json']);
    expect(first.status).toBe(0);
    expect(first.stderr).toContain(`${rep}: exporting to ${join(dir, 'run.sqlite')} with ${join(bin, 'nsys')}`);
    expect(existsSync(join(dir, 'run.sqlite'))).toBe(true);
    expect(nsysCalls()).toBe(1);
    const direct = spawnSync(process.execPath, [CLI, 'info', FIXTURE, '--format', 'json'], { encoding: 'utf8' });
    // The same analysis as the export itself (only the file name differs).
    expect(first.stdout.replaceAll(join(dir, 'run.sqlite'), 'X')).toBe(direct.stdout.replaceAll(FIXTURE, 'X'));

    const second = run(['findings', rep, '--format', 'json']);
    expect(second.status).toBe(0);
    expect(second.stderr).toContain(`${rep}: using its SQLite export ${join(dir, 'run.sqlite')} (newer than the report)`);
    expect(nsysCalls()).toBe(1);
    expect(JSON.parse(second.stdout).schema).toBe('iterscope.findings/1');

    // A report newer than its export is exported again.
    const later = statSync(join(dir, 'run.sqlite')).mtimeMs / 1000 + 60;
    utimesSync(rep, later, later);
    const third = run(['info', rep, '--format', 'csv']);
    expect(third.status).toBe(0);
    expect(third.stderr).toContain('exporting to');
    expect(nsysCalls()).toBe(2);
  });

  it('without nsys: one line saying how to export it, exit 2', () => {
    const rep = join(dir, 'other.nsys-rep');
    writeFileSync(rep, 'x');
    const r = run(['info', rep], { path: '/usr/bin:/bin' });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`iterscope: ${rep}: is an Nsight Systems report and nsys is not on PATH: export it with \`nsys export --type sqlite -o ${join(dir, 'other.sqlite')} ${rep}\` (or pass --nsys PATH)\n`);
    expect(existsSync(join(dir, 'other.sqlite'))).toBe(false);
  });

  it('--nsys PATH names the nsys to use (any position on the command line)', () => {
    const rep = join(dir, 'third.nsys-rep');
    writeFileSync(rep, 'x');
    const r = run(['gaps', rep, '--nsys', join(bin, 'nsys'), '--format', 'csv'], { path: '/usr/bin:/bin' });
    expect(r.status).toBe(0);
    expect(r.stderr).toContain(`exporting to ${join(dir, 'third.sqlite')} with ${join(bin, 'nsys')}`);
    expect(takeNsysOption(['gaps', 'a', '--nsys=/x/nsys', '--top', '3'])).toEqual({ argv: ['gaps', 'a', '--top', '3'], nsys: '/x/nsys' });
  });

  it('a read-only directory: the export goes to the cache directory, named by the report path', () => {
    const prev = process.env.XDG_CACHE_HOME;
    process.env.XDG_CACHE_HOME = join(dir, 'cache');
    try {
      const a = exportPathFor('/readonly/a/run.nsys-rep', () => false);
      const b = exportPathFor('/readonly/b/run.nsys-rep', () => false);
      expect(a.startsWith(join(dir, 'cache', 'iterscope', 'run-'))).toBe(true);
      expect(a.endsWith('.sqlite')).toBe(true);
      expect(a).not.toBe(b);
      expect(exportCacheDir()).toBe(join(dir, 'cache', 'iterscope'));
      expect(exportPathFor(join(dir, 'x.nsys-rep'))).toBe(join(dir, 'x.sqlite'));
    } finally {
      if (prev === undefined) delete process.env.XDG_CACHE_HOME;
      else process.env.XDG_CACHE_HOME = prev;
    }
    expect(isNsysReport('a/b.NSYS-REP')).toBe(true);
    expect(isNsysReport('a/b.qdrep')).toBe(true);
    expect(isNsysReport('a/b.sqlite')).toBe(false);
  });
});
