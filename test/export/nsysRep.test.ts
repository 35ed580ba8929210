import { chmodSync, copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, utimesSync, writeFileSync, mkdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportCacheDir, exportPathFor, isNsysReport, takeNsysOption, unusableExportReason } from '../../src/export/nsysRep.js';
import { CLI, REPO_ROOT, fixture } from '../helpers/fixtures.js';
import { editExport } from '../helpers/hostileExport.js';

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
  /** `run` for several command lines in one node process (cliBatch.mjs: node's start-up dominates a run here). */
  const runBatch = (jobs: { args: string[]; path?: string }[]) => {
    const jobsFile = join(dir, 'jobs.json');
    const resultsFile = join(dir, 'results.json');
    const env = (path?: string) => ({ PATH: path ?? `${bin}:${process.env.PATH}`, NSYS_FIXTURE: FIXTURE, NSYS_CALLS: calls, ITERSCOPE_NSYS: '' });
    writeFileSync(jobsFile, JSON.stringify(jobs.map((j) => ({ args: j.args, env: env(j.path) }))));
    const batch = spawnSync(process.execPath, [join(REPO_ROOT, 'test', 'helpers', 'cliBatch.mjs'), jobsFile, resultsFile], { encoding: 'utf8', env: { ...process.env, ITERSCOPE_NSYS: '' } });
    if (batch.status !== 0) throw new Error(`batch runner failed: ${batch.stderr}`);
    return JSON.parse(readFileSync(resultsFile, 'utf8')) as { status: number; stdout: string; stderr: string }[];
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

  /** A report and, beside it, a sibling `.sqlite` made by `make`, newer than the report (as an interrupted export is). */
  const reportWithSibling = (name: string, make: (sibling: string) => void): { rep: string; sibling: string } => {
    const rep = join(dir, `${name}.nsys-rep`);
    const sibling = join(dir, `${name}.sqlite`);
    writeFileSync(rep, 'an Nsight Systems report stand-in');
    make(sibling);
    const later = statSync(rep).mtimeMs / 1000 + 60;
    utimesSync(sibling, later, later);
    return { rep, sibling };
  };
  const damaged: [string, (sibling: string) => void, RegExp][] = [
    ['empty', (f) => writeFileSync(f, ''), /^empty \(0 bytes\)$/],
    ['zero-filled', (f) => writeFileSync(f, Buffer.alloc(8192)), /^zero-filled: an interrupted export$/],
    ['not-sqlite', (f) => writeFileSync(f, 'this is a text file, not a database\n'.repeat(20)), /^not an SQLite database$/],
    [
      'truncated',
      (f) => {
        copyFileSync(FIXTURE, f);
        chmodSync(f, 0o644);
        truncateSync(f, Math.floor(statSync(FIXTURE).size / 2 / 4096) * 4096);
      },
      new RegExp(`^truncated: \\d+ of ${statSync(FIXTURE).size} bytes$`),
    ],
  ];

  it('says why a sibling export is unusable from its header, size and tables, not its time', () => {
    for (const [name, make, why] of damaged) {
      const { sibling } = reportWithSibling(`why-${name}`, make);
      expect(unusableExportReason(sibling), name).toMatch(why);
    }
    expect(unusableExportReason(FIXTURE)).toBeNull();
    // SQLite, complete, but no nsys table in it.
    const other = join(dir, 'plain.sqlite');
    editExport(other, (db) => db.exec('CREATE TABLE t (x INTEGER)'));
    expect(unusableExportReason(other)).toBe('no nsys tables');
  });

  it('an unusable sibling export (empty, zero-filled, not SQLite, truncated) newer than the report: exported again with nsys', () => {
    const before = nsysCalls();
    const cases = damaged.map(([name, make]) => ({ name, ...reportWithSibling(`again-${name}`, make) }));
    const runs = runBatch(cases.map((c) => ({ args: ['kernels', c.rep, '--format', 'csv'] })));
    cases.forEach(({ name, rep, sibling }, i) => {
      const r = runs[i];
      expect(r.status, `${name}: ${r.stderr}`).toBe(0);
      expect(r.stderr).toContain(`${rep}: its SQLite export ${sibling} is unusable (`);
      expect(r.stderr).toContain('exporting it again');
      expect(unusableExportReason(sibling)).toBeNull();
      expect(r.stdout.split('\n').length).toBeGreaterThan(10);
    });
    expect(nsysCalls()).toBe(before + damaged.length);
  });

  it('an unusable sibling export without nsys: exit 2, one line naming it and the command that exports it again; the file is left as it was', () => {
    const cases = damaged.map(([name, make, why]) => {
      const { rep, sibling } = reportWithSibling(`manual-${name}`, make);
      return { name, why, rep, sibling, bytes: readFileSync(sibling) };
    });
    const runs = runBatch(cases.map((c) => ({ args: ['findings', c.rep], path: '/usr/bin:/bin' })));
    cases.forEach(({ name, why, rep, sibling, bytes }, i) => {
      const r = runs[i];
      expect(r.status, name).toBe(2);
      expect(r.stdout).toBe('');
      const line = r.stderr.trimEnd();
      expect(line.split('\n'), name).toHaveLength(1);
      expect(line.startsWith(`iterscope: ${rep}: its SQLite export ${sibling} is unusable (`)).toBe(true);
      expect(line.slice(line.indexOf('unusable (') + 'unusable ('.length, line.indexOf(') and nsys'))).toMatch(why);
      expect(line.endsWith(`and nsys is not on PATH: export it again with \`nsys export --type sqlite -o ${sibling} --force-overwrite true ${rep}\` (or pass --nsys PATH)`)).toBe(true);
      expect(readFileSync(sibling).equals(bytes), name).toBe(true);
    });
  });

  it('an nsys that writes an unusable export: exit 2, nothing kept under the export name', () => {
    const badBin = join(dir, 'bad-bin');
    mkdirSync(badBin);
    writeFileSync(join(badBin, 'nsys'), '#!/bin/sh\nwhile [ $# -gt 0 ]; do case "$1" in -o) out="$2"; shift 2;; *) shift;; esac; done\nhead -c 4096 /dev/zero > "$out"\n');
    chmodSync(join(badBin, 'nsys'), 0o755);
    const rep = join(dir, 'badexport.nsys-rep');
    writeFileSync(rep, 'x');
    const r = run(['info', rep], { path: `${badBin}:/usr/bin:/bin` });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('nsys export failed (nsys wrote an unusable export: zero-filled: an interrupted export)');
    expect(existsSync(join(dir, 'badexport.sqlite'))).toBe(false);
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
