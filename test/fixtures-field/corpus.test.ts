/**
 * The field corpus (test/fixtures-field/README.md, issue 54 item 7): every file against the
 * numbers its independent Python reader (`read_kernels.py` beside it) wrote to `expected.json`,
 * the "other" share of kernel time the README lists for it, and every command on every file.
 * Rerun a reader (`python3 read_kernels.py`) when a file of its folder changes.
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultCategoryClassifier } from '../../src/categories/rules.js';
import { runCli } from '../helpers/cli.js';
import { REPO_ROOT } from '../helpers/fixtures.js';

const FIELD = join(REPO_ROOT, 'test', 'fixtures-field');
const KINETO = join(FIELD, 'kineto');
const TABLES = join(FIELD, 'tracelens-kernels');
const README = readFileSync(join(FIELD, 'README.md'), 'utf8');
const cls = defaultCategoryClassifier();
const category = (name: string) => cls.categories[cls.classify(name)];

interface KinetoExpected {
  kernel_ns: number;
  kernel_count: number;
  kernels: { name: string; ns: number; count: number }[];
}
interface TableExpected {
  kernel_us: number;
  kernel_count: number;
  kernels: { name: string; us: number; count: number; tracelens_op_categories: string[] }[];
}
const readJson = <T>(path: string) => JSON.parse(readFileSync(path, 'utf8')) as Record<string, T>;
const kinetoExpected = readJson<KinetoExpected>(join(KINETO, 'expected.json'));
const tableExpected = readJson<TableExpected>(join(TABLES, 'expected.json'));

/** Share of kernel time whose name the default table files under `other`, in percent. */
function otherPercent(kernels: { name: string; time: number }[]): number {
  const total = kernels.reduce((a, k) => a + k.time, 0);
  const other = kernels.filter((k) => category(k.name) === 'other').reduce((a, k) => a + k.time, 0);
  return (other * 100) / total;
}

/** The "other" share the README's corpus table lists for `file` ("after" column), e.g. `0.12%`. */
function readmeOtherAfter(file: string): string {
  const row = README.split('\n').find((l) => l.startsWith(`| ${file} |`) && /%\s*\|\s*$/.test(l));
  if (!row) throw new Error(`README.md lists no "other" share for ${file}`);
  const cells = row.split('|').map((c) => c.trim());
  return cells[cells.length - 2];
}

describe('every corpus folder has its reader\'s numbers for every file', () => {
  it.each([
    [KINETO, kinetoExpected, '.json'],
    [TABLES, tableExpected, '.csv'],
  ])('%s', (dir, expected, ext) => {
    const files = readdirSync(dir).filter((f) => f.endsWith(ext) && f !== 'expected.json');
    expect(Object.keys(expected).sort()).toEqual(files.sort());
  });
});

describe('Kineto traces: `iterscope kernels` equals the reader\'s kernel totals', () => {
  it.each(Object.entries(kinetoExpected))('%s', (file, expected) => {
    const r = runCli(['kernels', join(KINETO, file), '--format', 'json']);
    expect(r.status).toBe(0);
    const rows = (JSON.parse(r.stdout) as { rows: { name: string; total: number; count: number }[] }).rows;
    const got = rows.map((k) => ({ name: k.name, ns: k.total, count: k.count })).sort((a, b) => a.name.localeCompare(b.name));
    expect(got).toEqual([...expected.kernels].sort((a, b) => a.name.localeCompare(b.name)));
    expect(otherPercent(expected.kernels.map((k) => ({ name: k.name, time: k.ns }))).toFixed(2) + '%').toBe(readmeOtherAfter(file));
  });
});

/** TraceLens op categories whose kernels must land in these of ours (the others mix kinds). */
const TRACELENS_AGREES: Record<string, string[]> = {
  GEMM: ['gemm', 'moe_gemm'],
  InferenceAttention: ['attention'],
  RMSNorm: ['norm'],
  RoPE_fwd: ['rope'],
};

describe('LLM-serving kernel tables (SGLang, vLLM on MI300): categories', () => {
  it.each(Object.entries(tableExpected))('%s: "other" is at most 5 percent of kernel time, as the README lists it', (file, expected) => {
    const share = otherPercent(expected.kernels.map((k) => ({ name: k.name, time: k.us })));
    expect(share).toBeLessThanOrEqual(5);
    expect(share.toFixed(2) + '%').toBe(readmeOtherAfter(file));
  });
  it.each(Object.entries(tableExpected))('%s: agrees with TraceLens\'s own op categories', (file, expected) => {
    let checked = 0;
    for (const k of expected.kernels) {
      const theirs = k.tracelens_op_categories.length === 1 ? TRACELENS_AGREES[k.tracelens_op_categories[0]] : undefined;
      if (!theirs) continue;
      checked++;
      expect(theirs, k.name).toContain(category(k.name));
    }
    expect(checked).toBeGreaterThan(5);
  });
});

const COMMANDS = ['info', 'kernels', 'nvtx', 'iterations', 'gaps', 'findings', 'report', 'trace'] as const;
const out = mkdtempSync(join(tmpdir(), 'iterscope-corpus-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));
const corpusFiles = [...Object.keys(kinetoExpected).map((f) => join(KINETO, f)), ...Object.keys(tableExpected).map((f) => join(TABLES, f))];

describe('every command on every corpus file: exit 0, or exit 2 with one line; never a stack trace or SQLite\'s words', () => {
  const cases = corpusFiles.flatMap((file) => COMMANDS.map((command) => [command, relative(FIELD, file), file] as const));
  it.each(cases)('%s %s', (command, _shown, file) => {
    const traceOut = join(out, `${command}-${file.replace(/\W+/g, '_')}.json`);
    const r = runCli(command === 'trace' ? ['trace', file, '-o', traceOut] : [command, file]);
    expect(r.stderr).not.toMatch(/^\s+at /m);
    expect(r.stderr + r.stdout).not.toMatch(/SQLITE_|no such (column|table)/);
    if (file.endsWith('.csv')) expect(r.status, r.stderr).toBe(2); // a kernel table is not an input
    if (r.status === 2) {
      expect(r.stderr.trimEnd().split('\n'), r.stderr).toHaveLength(1);
      expect(r.stdout).toBe('');
      return;
    }
    expect(r.status, r.stderr).toBe(0);
    if (command === 'trace') expect(() => JSON.parse(readFileSync(traceOut, 'utf8'))).not.toThrow();
    else expect(existsSync(traceOut)).toBe(false);
  });
});
