/**
 * Issue 54 item 6, lean exports: generated from the contract (src/export/contract.ts). Every
 * optional column (`OPTIONAL_COLUMNS`) is dropped in turn from a copy of a real fixture (its real
 * DDL: `ALTER TABLE ... DROP COLUMN` on the copy), and every optional table (`OPTIONAL_TABLES`):
 * the whole analysis (`REPORT_PARTS`) must still run, say exactly one note naming the table and
 * the column (none for a table: exports nsys wrote lack them), and give every number that does
 * not depend on it unchanged. What may change is declared here per entry (`MAY_CHANGE`), so an
 * entry added to the contract without saying what it degrades fails here. Then the minimal
 * export of the issue (a TARGET_INFO_GPU of `id, name` only) through every command of the CLI.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type BetterSqlite3 from 'better-sqlite3';
import { analyzeExport, openExport, REPORT_PARTS, SchemaError } from '../../src/index.js';
import { ANALYSIS_CONTRACTS, OPTIONAL_COLUMNS, OPTIONAL_TABLES, type TableNeed } from '../../src/export/contract.js';
import { exportNotes } from '../../src/export/exportNotes.js';
import { excludedRowNotes } from '../../src/export/excludedRows.js';
import { copyExport, editExport } from '../helpers/hostileExport.js';
import { REPO_ROOT, fixture } from '../helpers/fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'iterscope-lean-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** vllm-dense (2.5 MB) has every optional table and column but EXPORT_META_DATA (nsys 2022: rodinia) and whole-graph launches (cpp-legacy-windows). */
const VLLM = fixture('vllm-dense', 'trace.sqlite');
const OLD = fixture('external', 'nsys2022.4_rodinia_gaussian.sqlite');
const GRAPHS = fixture('cpp-legacy-windows', 'trace.1.sqlite');

/**
 * Per contract entry (`TABLE.column` or `TABLE`), the analysis paths (prefixes, `[]` for any
 * element) whose values may differ without it; every other value must be identical.
 */
const MAY_CHANGE: Record<string, readonly string[]> = {
  'TARGET_INFO_GPU.busLocation': ['.info.gpus.[].busLocation'],
  'TARGET_INFO_GPU.totalMemory': ['.info.gpus.[].totalMemory'],
  'TARGET_INFO_GPU.smCount': ['.info.gpus.[].smCount'],
  'TARGET_INFO_GPU.clockRate': [],
  'TARGET_INFO_GPU.uuid': [],
  'TARGET_INFO_GPU.chipName': [],
  'TARGET_INFO_GPU.computeMajor': [],
  'TARGET_INFO_GPU.computeMinor': [],
  // Read only where GPU metrics were sampled (not in these fixtures).
  'TARGET_INFO_GPU.cuDevice': [],
  'TARGET_INFO_GPU.vmId': [],
  'TARGET_INFO_CUDA_DEVICE.pid': [],
  'TARGET_INFO_CUDA_DEVICE.cudaId': [],
  'TARGET_INFO_CUDA_DEVICE.gpuId': [],
  'TARGET_INFO_SESSION_START_TIME.utcEpochNs': ['.info.sessionStartUtc', '.info.sessionStartEpochNs'],
  'TARGET_INFO_SESSION_START_TIME.utcTime': [],
  'TARGET_INFO_SESSION_START_TIME.localTime': [],
  'ANALYSIS_DETAILS.globalVid': [],
  'ANALYSIS_DETAILS.duration': ['.info.durationNs'],
  'ANALYSIS_DETAILS.startTime': [],
  'ANALYSIS_DETAILS.stopTime': [],
  'PROCESSES.globalPid': [],
  'PROCESSES.pid': [],
  'PROCESSES.name': ['.info.processes.[].name'],
  'ThreadNames.priority': [],
  // The nsys version and schema, and where they were read from.
  'META_DATA_EXPORT.name': ['.metadata', '.info.productVersion', '.info.schemaVersion', '.info.metadataTable'],
  'META_DATA_EXPORT.value': ['.metadata', '.info.productVersion', '.info.schemaVersion', '.info.metadataTable'],
  'EXPORT_META_DATA.name': ['.metadata', '.info.productVersion', '.info.schemaVersion', '.info.metadataTable'],
  'EXPORT_META_DATA.value': ['.metadata', '.info.productVersion', '.info.schemaVersion', '.info.metadataTable'],
  // What nsys was asked to trace: the capture, the health and the findings that cite it.
  'META_DATA_CAPTURE.name': ['.capture', '.info.graphTraceModeConfigured', '.info.profilerApiGated', '.health', '.findings', '.coverage'],
  'META_DATA_CAPTURE.value': ['.capture', '.info.graphTraceModeConfigured', '.info.profilerApiGated', '.health', '.findings', '.coverage'],
  'CUPTI_ACTIVITY_KIND_MEMCPY.bytes': ['.memory.memoryKindsRecorded', '.memory.byDirection', '.memory.iterations', '.findings', '.coverage'],
  'CUPTI_ACTIVITY_KIND_MEMCPY.copyKind': ['.memory.memoryKindsRecorded', '.memory.byDirection', '.memory.iterations', '.findings', '.coverage'],
  'CUPTI_ACTIVITY_KIND_MEMCPY.srcKind': ['.memory.memoryKindsRecorded', '.memory.byDirection.[].pageable', '.memory.iterations.[].pageable', '.findings', '.coverage'],
  'CUPTI_ACTIVITY_KIND_MEMCPY.dstKind': ['.memory.memoryKindsRecorded', '.memory.byDirection.[].pageable', '.memory.iterations.[].pageable', '.findings', '.coverage'],
  'CUPTI_ACTIVITY_KIND_KERNEL.graphNodeId': ['.info.graphTraceMode', '.findings'],
  // Read by `trace` and `kernels --by short` only (not parts of the report).
  'CUPTI_ACTIVITY_KIND_KERNEL.shortName': [],
  // Whole-graph launches: in cpp-legacy-windows (graph-level trace), whose kernels summary counts them.
  'CUPTI_ACTIVITY_KIND_GRAPH_TRACE.graphId': [],
  'CUPTI_ACTIVITY_KIND_GRAPH_TRACE.graphExecId': [],
  TARGET_INFO_GPU: ['.info.gpus'],
  TARGET_INFO_CUDA_DEVICE: [],
  TARGET_INFO_SESSION_START_TIME: ['.info.sessionStartUtc', '.info.sessionStartEpochNs'],
  ANALYSIS_DETAILS: ['.info.durationNs'],
  PROCESSES: ['.info.processes.[].name', '.info.rowCounts.PROCESSES'],
  ThreadNames: ['.info.processes.[].threads', '.info.rowCounts.ThreadNames'],
  META_DATA_CAPTURE: ['.capture', '.info.graphTraceModeConfigured', '.info.profilerApiGated', '.health', '.findings', '.coverage', '.info.rowCounts.META_DATA_CAPTURE'],
  ENUM_CUDA_MEMCPY_OPER: ['.info.rowCounts.ENUM_CUDA_MEMCPY_OPER'],
  ENUM_CUDA_MEM_KIND: ['.info.rowCounts.ENUM_CUDA_MEM_KIND'],
};

/** The analysis as plain JSON: typed arrays as arrays, 64-bit values as text, the input's path as INPUT, no timings. */
function plain(v: unknown, path: string): unknown {
  const json = JSON.stringify(v, (k, x: unknown) =>
    k === 'ms' || k === 'timingsMs' ? undefined : typeof x === 'bigint' ? String(x) : ArrayBuffer.isView(x) ? Array.from(x as Float64Array) : x instanceof Map ? Object.fromEntries(x) : x,
  );
  return JSON.parse(json.replaceAll(path, 'INPUT')) as unknown;
}

/** The paths (`.a.b.[].c`) where `a` and `b` differ, as deep as both are objects of one shape. */
function differences(a: unknown, b: unknown, at = '', out: string[] = []): string[] {
  if (JSON.stringify(a) === JSON.stringify(b)) return out;
  const obj = (x: unknown): x is Record<string, unknown> => x !== null && typeof x === 'object';
  if (obj(a) && obj(b) && Array.isArray(a) === Array.isArray(b) && (!Array.isArray(a) || a.length === (b as unknown as unknown[]).length)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) differences(a[k], b[k], `${at}.${Array.isArray(a) ? '[]' : k}`, out);
  } else out.push(at);
  return out;
}

/** The whole analysis of `path` and the notes said about the input. */
function analysed(path: string): { a: unknown; notes: string[] } {
  const h = openExport(path);
  try {
    const a = analyzeExport(h, { parts: REPORT_PARTS });
    return { a: plain(a, path), notes: [...exportNotes(h), ...excludedRowNotes(h)] };
  } finally {
    h.close();
  }
}

function columnsOf(file: string, table: string): string[] {
  let cols: string[] = [];
  editExport(copyExport(file, join(dir, 'probe.sqlite')), (db) => (cols = (db.prepare('SELECT name FROM pragma_table_info(?)').all(table) as { name: string }[]).map((r) => r.name)));
  return cols;
}

/** ALTER TABLE DROP COLUMN refuses an indexed column: its indexes go first (only the copy's). */
function dropColumnInPlace(db: BetterSqlite3.Database, table: string, column: string): void {
  for (const { name } of db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL`).all(table) as { name: string }[]) db.exec(`DROP INDEX "${name}"`);
  db.exec(`ALTER TABLE "${table}" DROP COLUMN "${column}"`);
}

const base = new Map<string, { a: unknown; notes: string[] }>();
const full = (file: string) => base.get(file) ?? base.set(file, analysed(file)).get(file)!;

/** Checks the copy without `label`'s column or table against the full export. */
function expectDegraded(file: string, label: string, edit: (db: BetterSqlite3.Database) => void, note: RegExp | null): void {
  const copy = editExport(copyExport(file, join(dir, `${label}.sqlite`)), edit);
  const lean = analysed(copy);
  const allowed = MAY_CHANGE[label];
  const unexpected = differences(full(file).a, lean.a).filter((p) => !allowed.some((prefix) => p.startsWith(prefix)));
  expect(unexpected, `${label}: values that changed though they do not need it`).toEqual([]);
  expect(full(file).notes).toEqual([]);
  if (note) {
    expect(lean.notes, label).toHaveLength(1);
    expect(lean.notes[0].replace(copy, 'INPUT')).toMatch(note);
  } else expect(lean.notes, label).toEqual([]);
}

describe('the contract: what every optional entry degrades (declared here, checked on real exports)', () => {
  it('every optional column and table says what may change without it', () => {
    const labels = [...OPTIONAL_COLUMNS.flatMap((e) => e.columns.map((c) => `${e.table}.${c}`)), ...OPTIONAL_TABLES.map((t) => t.table)];
    expect(labels.filter((l) => !(l in MAY_CHANGE))).toEqual([]);
    expect(Object.keys(MAY_CHANGE).filter((l) => !labels.includes(l))).toEqual([]);
  });
});

describe('each optional column dropped in turn: exit 0, one note naming it, the other numbers unchanged', () => {
  for (const entry of OPTIONAL_COLUMNS) {
    for (const column of entry.columns) {
      const label = `${entry.table}.${column}`;
      it(label, () => {
        const file = [VLLM, OLD, GRAPHS].find((f) => columnsOf(f, entry.table).includes(column)) ?? VLLM;
        expect(columnsOf(file, entry.table), `${label}: no fixture has it`).toContain(column);
        const note = new RegExp(`^INPUT: ${entry.table} has no ${column} column \\(nsys [^)]*, a lean or edited export\\): ${entry.degrades.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
        expectDegraded(file, label, (db) => dropColumnInPlace(db, entry.table, column), note);
      });
    }
  }
});

describe('each optional table dropped in turn: exit 0, the other numbers unchanged, no note (exports nsys wrote lack them)', () => {
  for (const { table } of OPTIONAL_TABLES) {
    it(table, () => {
      expect(columnsOf(VLLM, table).length, `${table}: not in the fixture`).toBeGreaterThan(0);
      expectDegraded(VLLM, table, (db) => db.exec(`DROP TABLE "${table}"`), null);
    });
  }
});

describe('each required column dropped in turn: exit 2, one line in our words naming table, column and nsys version', () => {
  const required = new Map<string, Set<string>>();
  for (const needs of Object.values(ANALYSIS_CONTRACTS) as readonly (readonly TableNeed[])[]) {
    for (const n of needs) for (const c of n.required) if (!n.assumable?.includes(c as 'globalPid')) (required.get(n.table) ?? required.set(n.table, new Set()).get(n.table)!).add(c);
  }
  const fileWith = (table: string) => [VLLM, GRAPHS, fixture('pytorch-gpu-metrics', 'trace.sqlite'), fixture('fieldguide-vllm', 'trace.sqlite')].find((f) => columnsOf(f, table).length > 0);
  for (const [table, columns] of required) {
    it(table, () => {
      const file = fileWith(table);
      expect(file, `${table}: no fixture has it`).toBeDefined();
      // One copy per table; each column renamed away in turn and back (a schema edit, no table rewrite:
      // to the export's reader the column is as absent as dropped).
      const copy = copyExport(file!, join(dir, `required-${table}.sqlite`));
      for (const column of columns) {
        editExport(copy, (db) => db.exec(`ALTER TABLE "${table}" RENAME COLUMN "${column}" TO "${column}_gone"`));
        const h = openExport(copy);
        let error: unknown = null;
        try {
          analyzeExport(h, { parts: REPORT_PARTS });
        } catch (e) {
          error = e;
        } finally {
          h.close();
        }
        editExport(copy, (db) => db.exec(`ALTER TABLE "${table}" RENAME COLUMN "${column}_gone" TO "${column}"`));
        expect(error, `${table}.${column}`).toBeInstanceOf(SchemaError);
        const message = (error as Error).message;
        expect(message, `${table}.${column}`).toMatch(new RegExp(`table ${table} lacks column ${column}[ ,].*\\(nsys 2025\\.3\\.2\\.0, export schema 3\\.20\\.3 in `));
        expect(message).not.toMatch(/no such column|string literal/);
        expect(message.split('\n')).toHaveLength(1);
      }
    }, 60_000);
  }
});

describe('the minimal export of the issue (TARGET_INFO_GPU of id, name only), through every command', () => {
  it('exit 0 for each command, the note once, numbers as on the full export', () => {
    const lean = editExport(copyExport(VLLM, join(dir, 'gpu-id-name.sqlite')), (db) => {
      const keep = new Set(['id', 'name']);
      for (const c of (db.prepare('SELECT name FROM pragma_table_info(?)').all('TARGET_INFO_GPU') as { name: string }[]).map((r) => r.name)) {
        if (!keep.has(c)) dropColumnInPlace(db, 'TARGET_INFO_GPU', c);
      }
    });
    const out = join(dir, 'out');
    const commands = [
      ['info', 'E', '--format', 'json'],
      ['kernels', 'E', '--format', 'json'],
      ['nvtx', 'E', '--format', 'json'],
      // vLLM's profiler window starts at engine step 40 (fixtures README).
      ['iterations', 'E', '--first-iter', '40', '--format', 'json'],
      ['gaps', 'E', '--format', 'json'],
      ['findings', 'E', '--format', 'json'],
      ['report', 'E', '-o', `${out}-report.html`],
      ['metrics', 'E', '--format', 'json'],
      ['trace', 'E', '-o', `${out}-trace.json`],
      ['engines', 'E', '--format', 'json'],
      ['summarize', 'E', '--first-iter', '40'],
    ];
    // A read no contract declares (kernels --by short on an export without shortName): the safety net's line, in our words.
    const noShort = editExport(copyExport(VLLM, join(dir, 'no-short.sqlite')), (db) => dropColumnInPlace(db, 'CUPTI_ACTIVITY_KIND_KERNEL', 'shortName'));
    const jobs = [
      ...commands.map((c) => ({ args: c.map((a) => (a === 'E' ? lean : a)) })),
      ...commands.slice(0, 6).map((c) => ({ args: c.map((a) => (a === 'E' ? VLLM : a)) })),
      { args: ['kernels', noShort, '--by', 'short', '--format', 'csv'] },
    ];
    const jobsFile = join(dir, 'jobs.json');
    const resultsFile = join(dir, 'results.json');
    writeFileSync(jobsFile, JSON.stringify(jobs));
    const batch = spawnSync(process.execPath, [join(REPO_ROOT, 'test', 'helpers', 'cliBatch.mjs'), jobsFile, resultsFile], { encoding: 'utf8', env: { ...process.env, ITERSCOPE_JOBS: '1' } });
    expect(batch.status, batch.stderr).toBe(0);
    const runs = JSON.parse(readFileSync(resultsFile, 'utf8')) as { args: string[]; status: number; stdout: string; stderr: string }[];
    const note = `iterscope: ${lean}: TARGET_INFO_GPU has no busLocation, totalMemory, smCount, clockRate, uuid, chipName, computeMajor, computeMinor column`;
    for (const r of runs.slice(0, commands.length)) {
      expect(r.status, `${r.args[0]}: ${r.stderr}`).toBe(0);
      expect(r.stderr).not.toMatch(/no such column|should this be a string literal/);
      expect(r.stderr.split('\n').filter((l) => l.startsWith(note)), r.args[0]).toHaveLength(1);
    }
    // The numbers of the first six commands are those of the full export, the GPUs' lost properties aside.
    for (let i = 0; i < 6; i++) {
      const [leanRun, fullRun] = [runs[i], runs[commands.length + i]];
      const a = JSON.parse(leanRun.stdout.replaceAll(lean, 'INPUT')) as Record<string, unknown>;
      const b = JSON.parse(fullRun.stdout.replaceAll(VLLM, 'INPUT')) as Record<string, unknown>;
      const changed = differences(b, a).filter((p) => !/^\.(gpus|info\.gpus)\.\[\]\.(busLocation|totalMemory|smCount)$/.test(p) && !/ms$|Ms$|elapsed/i.test(p));
      expect(changed, leanRun.args[0]).toEqual([]);
    }
    const short = runs.at(-1)!;
    expect(short.status).toBe(2);
    expect(short.stderr).toBe(
      `iterscope: ${noShort}: table CUPTI_ACTIVITY_KIND_KERNEL lacks column shortName, needed by iterscope kernels (nsys 2025.3.2.0, export schema 3.20.3 in no-short.sqlite); re-export it with nsys export --type sqlite\n`,
    );
    const info = JSON.parse(runs[0].stdout) as { gpus: { id: number; name: string; busLocation: unknown; smCount: unknown }[] };
    expect(info.gpus.length).toBeGreaterThan(0);
    expect(info.gpus.every((g) => typeof g.name === 'string' && g.name.length > 0 && g.busLocation === null && g.smCount === null)).toBe(true);
  }, 120_000);
});
