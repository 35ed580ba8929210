/**
 * Bad input and bad usage: exit 2, exactly one line on stderr naming the file and the problem, no
 * stack trace, nothing on stdout; the input file is never modified (even when it is writable).
 */
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture } from '../helpers/fixtures.js';
import { runCli, type CliResult } from '../helpers/cli.js';

const COMMANDS = ['info', 'kernels', 'nvtx'] as const;
const dir = mkdtempSync(join(tmpdir(), 'iterscope-badinput-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

/** Deterministic "random" bytes (xorshift32), so a failure reproduces. */
function pseudoRandomBytes(n: number, seed: number): Buffer {
  const out = Buffer.alloc(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = x & 0xff;
  }
  return out;
}

interface BadCase {
  name: string;
  path: string;
  /** What the one-line message must say about the file. */
  problem: RegExp;
}

const cases: BadCase[] = [];

beforeAll(() => {
  const p = (name: string) => join(dir, name);
  writeFileSync(p('empty.sqlite'), '');
  writeFileSync(p('random.sqlite'), pseudoRandomBytes(64 * 1024, 0x1234567));
  writeFileSync(p('notes.txt'), 'kernel,time\nadd_one,1280\nThis is a text file, not an nsys export.\n');
  // The first 1 MB of a real export: a valid SQLite header, but most pages are missing.
  const real = readFileSync(fixture('pytorch-dense', 'trace.sqlite'));
  writeFileSync(p('truncated.sqlite'), real.subarray(0, 1024 * 1024));
  // A whole real export with 4 MB in the middle overwritten: the schema pages are intact, so the
  // damage shows only once a query reads the data pages.
  const damaged = Buffer.from(real);
  pseudoRandomBytes(4 * 1024 * 1024, 0xbadf00d).copy(damaged, 4 * 1024 * 1024);
  writeFileSync(p('damaged.sqlite'), damaged);
  // SQLite, but another application's database.
  const other = new BetterSqlite3(p('other-app.sqlite'));
  other.exec(`CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO customers (name) VALUES ('a'), ('b');`);
  other.close();
  // SQLite with no tables at all.
  const none = new BetterSqlite3(p('no-tables.sqlite'));
  none.pragma('user_version = 7');
  none.close();
  mkdirSync(p('a-directory.sqlite'));
  cases.push(
    { name: 'a missing file', path: p('missing.sqlite'), problem: /no such file/ },
    { name: 'a directory', path: p('a-directory.sqlite'), problem: /is a directory/ },
    { name: 'an empty file', path: p('empty.sqlite'), problem: /is empty \(0 bytes\)/ },
    { name: 'random bytes', path: p('random.sqlite'), problem: /not an SQLite database/ },
    { name: 'a text file', path: p('notes.txt'), problem: /not an SQLite database/ },
    { name: 'the first 1 MB of a real export', path: p('truncated.sqlite'), problem: /(damaged|malformed)/ },
    { name: 'a real export with damaged data pages', path: p('damaged.sqlite'), problem: /damaged SQLite database/ },
    { name: 'another application\'s SQLite database', path: p('other-app.sqlite'), problem: /SQLite database, but not an nsys export/ },
    { name: 'an SQLite database with no tables', path: p('no-tables.sqlite'), problem: /not an nsys export/ },
  );
});

function expectOneLineError(r: CliResult, path: string | null, problem: RegExp): void {
  expect(r.stdout).toBe('');
  expect(r.stderr).not.toMatch(/^\s+at /m);
  expect(r.stderr.endsWith('\n')).toBe(true);
  const lines = r.stderr.slice(0, -1).split('\n');
  expect(lines, r.stderr).toHaveLength(1);
  if (path !== null) expect(lines[0].startsWith(`iterscope: ${path}: `), lines[0]).toBe(true);
  expect(lines[0]).toMatch(problem);
  expect(r.status, r.stderr).toBe(2);
}

describe.each(COMMANDS)('%s on bad input', (command) => {
  it('exits 2 with one line naming the file and the problem, and leaves the file as it was', () => {
    expect(cases.length).toBe(9);
    for (const c of cases) {
      let before: string | null = null;
      try {
        if (statSync(c.path).isFile()) before = sha256(c.path);
      } catch {
        // missing file
      }
      const r = runCli([command, c.path, '--format', 'csv']);
      try {
        expectOneLineError(r, c.path, c.problem);
      } catch (err) {
        throw new Error(`${command} on ${c.name}: ${(err as Error).message}`);
      }
      if (before !== null) expect(sha256(c.path), `${c.name} unchanged`).toBe(before);
    }
  });
});

describe('a writable real export is never modified', () => {
  let copy: string;
  let sub: string;
  beforeAll(() => {
    sub = join(dir, 'writable');
    mkdirSync(sub);
    copy = join(sub, 'trace.sqlite');
    copyFileSync(fixture('pytorch-dense', 'trace.sqlite'), copy);
    chmodSync(copy, 0o644);
  });

  it.each(['kernels', 'nvtx', 'info'])('%s leaves the bytes, mtime and directory unchanged', (command) => {
    const before = sha256(copy);
    const mtime = statSync(copy).mtimeMs;
    const r = runCli([command, copy, '--format', 'csv']);
    expect(r.stderr).not.toMatch(/error/i);
    expect(r.status).toBe(0);
    expect(r.stdout.length).toBeGreaterThan(100);
    expect(sha256(copy)).toBe(before);
    expect(statSync(copy).mtimeMs).toBe(mtime);
    // No journal, WAL or shared-memory files left beside the export.
    expect(readdirSync(sub)).toEqual(['trace.sqlite']);
  });
});

describe('bad usage exits 2 without reading the export', () => {
  const file = fixture('cpp-legacy-windows', 'trace.2.sqlite');

  it.each([
    ['an unknown option', ['kernels', file, '--bogus'], /unknown option '--bogus'/],
    ['an unknown command', ['bogus', file], /unknown command 'bogus'/],
    ['a missing export argument', ['nvtx'], /missing required argument 'exports'/],
    ['an option without its value', ['info', file, '--format'], /argument missing/],
  ])('%s', (_name, args, message) => {
    const r = runCli(args as string[]);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message as RegExp);
    expect(r.stderr).not.toMatch(/^\s+at /m);
  });

  // This export makes `kernels` print notes: a bad --format must fail before any of them.
  it.each(COMMANDS)('%s --format xml: one line, before the export is read', (command) => {
    expectOneLineError(runCli([command, file, '--format', 'xml']), null, /^iterscope: --format must be one of table, csv, md, json \(got 'xml'\)$/);
  });

  it('kernels --by mangled: one line', () => {
    expectOneLineError(runCli(['kernels', file, '--by', 'mangled']), null, /^iterscope: --by must be 'demangled' or 'short' \(got 'mangled'\)$/);
  });

  it('a bad --format is reported even for a missing file, as a usage error', () => {
    expectOneLineError(runCli(['info', join(dir, 'missing.sqlite'), '--format', 'yaml']), null, /--format must be one of/);
  });
});
