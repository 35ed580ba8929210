/**
 * Issue 14 "Nothing lost, nothing injected, nothing crashes": a hostile corpus of damaged exports,
 * each a COPY of the pytorch-tp2 rank-0 fixture edited from its real DDL (hostileExport.ts), run
 * through the CLI in one node process (cliBatch.mjs). Every run must: exit 0 or 2; print exactly
 * one stderr line when it exits 2, and never a stack trace; print no NaN/Infinity; leave the input
 * bytes and the input directory listing unchanged; and write output its format's parser accepts
 * (CSV via an RFC 4180 parser, JSON.parse, Markdown tables with the same number of cells per row,
 * CommonMark line endings counted, so a bare CR shows). Each case also asserts what it is about.
 */
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCsv } from '../helpers/csv.js';
import { mdCells } from '../report/markdownTables.js';
import { REPO_ROOT, fixture } from '../helpers/fixtures.js';
import { copyExport, dropColumn, editExport, renameColumn, retypeColumn } from '../helpers/hostileExport.js';

const SOURCE = fixture('pytorch-tp2', 'trace.rank0.sqlite');
const LOG = fixture('pytorch-tp2', 'executor.rank0.log');
const K = 'CUPTI_ACTIVITY_KIND_KERNEL';
const R = 'CUPTI_ACTIVITY_KIND_RUNTIME';
const N = 'NVTX_EVENTS';

const root = mkdtempSync(join(tmpdir(), 'iterscope-hostile-'));
const inputs = join(root, 'inputs');
const outputs = join(root, 'outputs');
mkdirSync(inputs);
mkdirSync(outputs);
afterAll(() => rmSync(root, { recursive: true, force: true }));

type Db = BetterSqlite3.Database;
interface Run {
  args: string[];
  status: number;
  stdout: string;
  stderr: string;
}
interface Case {
  name: string;
  /** Issue item the case belongs to (the describe block). */
  item: string;
  /** Edits the copy; may return facts read from it for the assertions. */
  edit: (db: Db) => Record<string, number> | void;
  /** Command lines; `E` is the damaged export, `O` an output path. */
  commands: string[][];
  check: (runs: Run[], facts: Record<string, number>) => void;
  /** A file name other than `<name>.sqlite` (special characters). */
  fileName?: string;
  /** Make the copy a WAL-mode database after editing. */
  wal?: boolean;
}

const sqlCount = (db: Db, query: string) => (db.prepare(query).get() as { n: number }).n;
const schemaLine = (table: string, column: string, command: string) =>
  new RegExp(`^iterscope: .*: table ${table} lacks column ${column}, needed by iterscope ${command} \\(nsys 2025\\.3\\.2\\.0, export schema 3\\.20\\.3 in .*\\); re-export it with nsys export --type sqlite\\n$`);
const excludedNote = (n: number, table: string) => new RegExp(`: ${n} ${table} rows? excluded: NULL, non-integer, end-before-start or beyond-2\\^53 start/end`);

/** A required column dropped or renamed: exit 2, one line naming file, table, column, versions, command. */
function droppedColumn(table: string, column: string, commands: string[], how: 'drop' | 'rename' = 'drop'): Case {
  return {
    name: `${how}-${table}-${column}`,
    item: '4. schema contract: crashes',
    edit: (db) => (how === 'drop' ? dropColumn(db, table, column) : renameColumn(db, table, column, `${column}_old`)),
    commands: commands.map((c) => [c, 'E', '--format', 'csv']),
    check: (runs) => {
      for (const r of runs) {
        expect(r.status, r.args.join(' ')).toBe(2);
        expect(r.stderr).toMatch(schemaLine(table, column, r.args[0]));
      }
    },
  };
}

const cases: Case[] = [
  // ---- 4. crashes: the columns the issue lists, and whole tables ----
  ...['start', 'end', 'deviceId', 'correlationId', 'demangledName', 'streamId'].map((c) => droppedColumn(K, c, ['kernels', 'iterations'])),
  {
    // Issue 31: one process called the CUDA API, so the kernels are its own and the correlation id
    // alone joins them to their launches: assumed, with one note (refused when several processes).
    name: `drop-${K}-globalPid`,
    item: '4. schema contract: crashes',
    edit: (db) => dropColumn(db, K, 'globalPid'),
    commands: [['kernels', 'E', '--format', 'csv'], ['iterations', 'E', '--format', 'csv']],
    check: (runs) => {
      for (const r of runs) {
        expect(r.status, r.args.join(' ')).toBe(0);
        expect(r.stderr.match(/has no globalPid column/g), r.stderr).toHaveLength(1);
      }
    },
  },
  ...['correlationId', 'globalTid', 'nameId', 'start'].map((c) => droppedColumn(R, c, ['iterations', 'gaps'])),
  ...['text', 'textId', 'eventType', 'end', 'domainId', 'globalTid'].map((c) => droppedColumn(N, c, ['nvtx', 'iterations'])),
  droppedColumn('StringIds', 'value', ['kernels', 'info'], 'rename'),
  droppedColumn('ThreadNames', 'nameId', ['info']),
  droppedColumn('TARGET_INFO_GPU', 'name', ['info']),
  {
    name: 'StringIds-dropped',
    item: '4. schema contract: crashes',
    edit: (db) => db.exec('DROP TABLE StringIds'),
    commands: [['kernels', 'E'], ['iterations', 'E']],
    check: (runs) => {
      for (const r of runs) {
        expect(r.status).toBe(2);
        expect(r.stderr).toMatch(/table StringIds is missing \(CUPTI_ACTIVITY_KIND_KERNEL, CUPTI_ACTIVITY_KIND_RUNTIME, NVTX_EVENTS refer to it\), needed by iterscope (kernels|iterations) \(nsys 2025/);
      }
    },
  },
  {
    name: 'StringIds-value-BLOB',
    item: '4. schema contract: crashes',
    edit: (db) => {
      db.exec('UPDATE StringIds SET value = CAST(value AS BLOB) WHERE id % 3 = 0');
      return { blobs: sqlCount(db, `SELECT count(*) AS n FROM StringIds WHERE typeof(value) = 'blob'`) };
    },
    commands: [['kernels', 'E'], ['iterations', 'E'], ['trace', 'E', '-o', 'O']],
    check: (runs, f) => {
      expect(f.blobs).toBeGreaterThan(0);
      for (const r of runs) {
        expect(r.status).toBe(2);
        expect(r.stderr).toMatch(new RegExp(`column StringIds\\.value holds ${f.blobs} non-text values \\(BLOB or number\\) where names are expected, needed by iterscope ${r.args[0]}`));
      }
    },
  },
  {
    name: 'utcEpochNs-yesterday',
    item: '4. schema contract: crashes',
    edit: (db) => db.exec(`UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = 'yesterday'`),
    commands: [['info', 'E', '--format', 'json'], ['trace', 'E', '-o', 'O']],
    check: ([info, trace]) => {
      expect(info.status).toBe(0);
      expect(trace.status).toBe(0);
      const json = JSON.parse(info.stdout) as { sessionStartUtc: unknown; sessionStartEpochNs: unknown };
      expect(json.sessionStartUtc).toBeNull();
      expect(json.sessionStartEpochNs).toBeNull();
    },
  },
  {
    name: 'runtime-correlationId-declared-TEXT',
    item: '4. schema contract: crashes',
    edit: (db) => retypeColumn(db, R, 'correlationId', 'TEXT', 'CAST(correlationId AS TEXT)'),
    commands: [['iterations', 'E'], ['nvtx', 'E', '--gpu']],
    check: (runs) => {
      for (const r of runs) {
        expect(r.status).toBe(2);
        expect(r.stderr).toMatch(/column CUPTI_ACTIVITY_KIND_RUNTIME\.correlationId is declared TEXT, expected INTEGER, needed by iterscope (iterations|nvtx)/);
      }
    },
  },

  // ---- 4. wrong with no note: rows excluded and counted ----
  ...(
    [
      ['kernel-NULL-start', (db: Db) => { retypeColumn(db, K, 'start', 'INTEGER'); db.exec(`UPDATE ${K} SET start = NULL WHERE rowid % 7 = 0`); }],
      ['kernel-NULL-end', (db: Db) => { retypeColumn(db, K, 'end', 'INTEGER'); db.exec(`UPDATE ${K} SET "end" = NULL WHERE rowid % 7 = 0`); }],
      ['kernel-TEXT-start', (db: Db) => db.exec(`UPDATE ${K} SET start = 'abc' WHERE rowid % 7 = 0`)],
      ['kernel-BLOB-end', (db: Db) => db.exec(`UPDATE ${K} SET "end" = X'00ff' WHERE rowid % 11 = 0`)],
      ['kernel-end-before-start', (db: Db) => db.exec(`UPDATE ${K} SET "end" = start - 1000 WHERE rowid % 9 = 0`)],
      ['kernel-ending-at-2^62', (db: Db) => db.exec(`UPDATE ${K} SET "end" = 4611686018427387904 WHERE rowid = (SELECT max(rowid) FROM ${K})`)],
    ] as const
  ).map(
    ([name, edit]): Case => ({
      name,
      item: '4. schema contract: wrong numbers get a note',
      edit: (db) => {
        edit(db);
        return {
          bad: sqlCount(db, `SELECT count(*) AS n FROM ${K} WHERE NOT (typeof(start) = 'integer' AND typeof("end") = 'integer' AND "end" >= start AND "end" <= 9007199254740991)`),
          good: sqlCount(db, `SELECT count(*) AS n FROM ${K} WHERE typeof(start) = 'integer' AND typeof("end") = 'integer' AND "end" >= start AND "end" <= 9007199254740991`),
        };
      },
      commands: [['kernels', 'E', '--format', 'json'], ['iterations', 'E', '--format', 'csv'], ['summarize', 'E'], ['report', 'E']],
      check: (runs, f) => {
        expect(f.bad).toBeGreaterThan(0);
        for (const r of runs) {
          expect(r.status, r.args[0]).toBe(0);
          expect(r.stderr).toMatch(excludedNote(f.bad, K));
        }
        // The kernels kept are exactly the rows with usable times, and no duration is negative.
        const rows = (JSON.parse(runs[0].stdout) as { rows: { count: number; min: number }[] }).rows;
        expect(rows.reduce((a, k) => a + k.count, 0)).toBe(f.good);
        expect(Math.min(...rows.map((k) => k.min))).toBeGreaterThanOrEqual(0);
      },
    }),
  ),
  {
    name: 'timestamps-past-2^53',
    item: '4. schema contract: wrong numbers get a note',
    edit: (db) => {
      for (const t of [K, R, N, 'CUPTI_ACTIVITY_KIND_MEMCPY', 'CUPTI_ACTIVITY_KIND_MEMSET']) db.exec(`UPDATE ${t} SET start = start + 9007199254740992, "end" = "end" + 9007199254740992`);
      return { kernels: sqlCount(db, `SELECT count(*) AS n FROM ${K}`) };
    },
    commands: [['kernels', 'E'], ['iterations', 'E'], ['gaps', 'E', '--format', 'json']],
    check: ([kernels, iterations, gaps], f) => {
      expect(kernels.status).toBe(0);
      expect(kernels.stderr).toMatch(excludedNote(f.kernels, K));
      // Every iteration range is beyond 2^53: a one-line error that says so.
      expect(iterations.status).toBe(2);
      expect(iterations.stderr).toMatch(/no iteration ranges found \(40 matching ranges have a NULL, non-integer, end-before-start or beyond-2\^53 time and were left out\)/);
      expect(gaps.status).toBe(0);
      expect(gaps.stderr).toMatch(excludedNote(f.kernels, K));
    },
  },
  {
    name: 'runtime-TEXT-start',
    item: '4. schema contract: wrong numbers get a note',
    edit: (db) => {
      db.exec(`UPDATE ${R} SET start = 'x' WHERE rowid % 13 = 0`);
      return { bad: sqlCount(db, `SELECT count(*) AS n FROM ${R} WHERE typeof(start) != 'integer' AND eventClass != 67`) };
    },
    commands: [['iterations', 'E', '--format', 'md'], ['gaps', 'E', '--format', 'csv']],
    check: (runs, f) => {
      for (const r of runs) {
        expect(r.status).toBe(0);
        expect(r.stderr).toMatch(excludedNote(f.bad, R));
      }
    },
  },
  {
    name: 'NVTX-NULL-and-TEXT-times',
    item: '4. schema contract: wrong numbers get a note',
    edit: (db) => {
      retypeColumn(db, N, 'start', 'INTEGER');
      db.exec(`UPDATE ${N} SET start = NULL WHERE rowid % 5 = 0 AND eventType != 59; UPDATE ${N} SET "end" = 'x' WHERE rowid % 5 = 1 AND eventType != 59`);
      return { bad: sqlCount(db, `SELECT count(*) AS n FROM ${N} WHERE start IS NULL OR typeof("end") = 'text'`) };
    },
    commands: [['nvtx', 'E', '--format', 'json'], ['nvtx', 'E', '--gpu', '--format', 'csv'], ['report', 'E']],
    check: (runs, f) => {
      for (const r of runs) {
        expect(r.status).toBe(0);
        expect(r.stderr).toMatch(excludedNote(f.bad, N));
      }
    },
  },
  {
    name: 'PyTorch-log-num_ctx_requests-disagrees-with-label',
    item: '4. schema contract: wrong numbers get a note',
    edit: () => {
      const text = readFileSync(LOG, 'utf8').replace(/(iter = 35,.*)'num_ctx_requests': \d+/, "$1'num_ctx_requests': 99");
      writeFileSync(join(inputs, 'executor.label-mismatch.log'), text);
    },
    commands: [['iterations', 'E', '--log', join(inputs, 'executor.label-mismatch.log')]],
    check: ([r]) => {
      expect(r.status).toBe(0);
      expect(r.stderr).toMatch(/NVTX label counts differ from the log in iterations 34\n/);
    },
  },

  // ---- 2. injection ----
  {
    name: 'TEXT-correlationId-in-trace',
    item: '2. injection: export content is never spliced',
    edit: (db) => {
      db.exec(`UPDATE ${K} SET correlationId = '1,"ph":"X","name":"INJECTED","pid":1,"tid":1,"ts":0,"dur":1' WHERE rowid = 5`);
      return { kernels: sqlCount(db, `SELECT count(*) AS n FROM ${K}`) };
    },
    commands: [['trace', 'E', '-o', 'O']],
    check: ([r], f) => {
      expect(r.status).toBe(0);
      const trace = JSON.parse(readFileSync(join(outputs, 'TEXT-correlationId-in-trace.json'), 'utf8')) as { traceEvents: { name?: string; cat?: string; args?: { correlationId?: unknown } }[] };
      expect(trace.traceEvents.filter((e) => e.name === 'INJECTED')).toEqual([]);
      expect(trace.traceEvents.filter((e) => e.cat === 'kernel')).toHaveLength(f.kernels);
      expect(trace.traceEvents.some((e) => typeof e.args?.correlationId === 'string' && (e.args.correlationId as string).includes('INJECTED'))).toBe(true);
    },
  },
  {
    name: 'StringIds-id-TEXT-into-ranks-IN-list',
    item: '2. injection: export content is never spliced',
    edit: (db) => {
      retypeColumn(db, 'StringIds', 'id', 'TEXT');
      db.exec(`INSERT INTO StringIds VALUES ('0) OR (1=1', 'ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm *, unsigned long, ncclWork *)')`);
    },
    commands: [['ranks', 'E', fixture('pytorch-tp2', 'trace.rank1.sqlite'), '--jobs', '1']],
    check: ([r]) => {
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(/column StringIds\.id is declared TEXT, expected INTEGER/);
    },
  },
  {
    name: 'kernel-demangledName-TEXT-into-ranks-IN-list',
    item: '2. injection: export content is never spliced',
    edit: (db) => {
      const before = sqlCount(db, `SELECT count(*) AS n FROM ${K} k JOIN StringIds s ON s.id = k.demangledName WHERE s.value LIKE 'nccl%' OR s.value LIKE '%AllReduce%'`);
      db.exec(`UPDATE ${K} SET demangledName = '0) OR (1=1' WHERE rowid IN (SELECT k.rowid FROM ${K} k JOIN StringIds s ON s.id = k.demangledName WHERE s.value LIKE 'nccl%' LIMIT 1)`);
      return { collectivesBefore: before };
    },
    commands: [['ranks', 'E', fixture('pytorch-tp2', 'trace.rank1.sqlite'), '--jobs', '1', '--format', 'json']],
    check: ([r]) => {
      expect(r.status).toBe(0);
      // As on the undamaged pair, minus the one collective that lost its name: never "every kernel".
      const matched = /(\d+) collectives matched/.exec(r.stderr);
      expect(matched).not.toBeNull();
      expect(Number(matched![1])).toBeGreaterThan(0);
      expect(Number(matched![1])).toBeLessThanOrEqual(720);
    },
  },
  {
    name: 'bare-CR-and-pipe-in-kernel-and-thread-names',
    item: '2. injection: export content is never spliced',
    edit: (db) => {
      db.exec(`UPDATE StringIds SET value = value || char(13) || '| x' || char(27) || '[31m' WHERE id IN (SELECT demangledName FROM ${K} UNION SELECT shortName FROM ${K} UNION SELECT nameId FROM ThreadNames)`);
    },
    commands: [
      ['kernels', 'E', '--format', 'md'],
      ['info', 'E', '--format', 'md'],
      ['iterations', 'E', '--format', 'md'],
      ['gaps', 'E', '--format', 'md'],
      ['report', 'E'],
      ['kernels', 'E', '--format', 'table'],
    ],
    check: (runs) => {
      for (const r of runs) {
        expect(r.status).toBe(0);
        expect(r.stdout).not.toMatch(/\r|\u001b/);
      }
      expect(runs[0].stdout).toContain('\\| x');
    },
  },

  // ---- 5. read-only: nothing written beside the input ----
  {
    name: 'WAL-mode-export',
    item: '5. read-only means nothing written beside the input',
    edit: () => {},
    wal: true,
    commands: [['info', 'E', '--format', 'json'], ['kernels', 'E'], ['iterations', 'E']],
    check: (runs) => {
      for (const r of runs) expect(r.status).toBe(0);
      expect(readdirSync(inputs).filter((f) => /-(shm|wal|journal)$/.test(f))).toEqual([]);
    },
  },
  {
    name: 'WAL-mode-export-with-?#%-in-its-name',
    item: '5. read-only means nothing written beside the input',
    fileName: 'odd ?#%25 name.sqlite',
    edit: () => {},
    wal: true,
    commands: [['kernels', 'E']],
    check: ([r]) => {
      expect(r.status).toBe(0);
      expect(r.stdout.split('\n')[0]).toMatch(/^Time \(%\)/);
    },
  },
];

/** What every run must satisfy, whatever the case. */
function checkRunInvariants(r: Run): void {
  const what = r.args.join(' ');
  expect([0, 2], what).toContain(r.status);
  expect(r.stderr, what).not.toMatch(/\n\s+at |internal error/);
  if (r.status === 2) {
    expect(r.stderr.split('\n').filter(Boolean), what).toHaveLength(1);
    expect(r.stderr).toMatch(/^iterscope: /);
  }
  expect(r.stdout, what).not.toMatch(/\bNaN\b|Infinity/);
  if (r.status !== 0 || r.stdout === '') return;
  const format = r.args.includes('--format') ? r.args[r.args.indexOf('--format') + 1] : r.args[0] === 'report' ? 'md' : r.args[0] === 'summarize' ? 'json' : 'csv';
  if (format === 'json') expect(() => JSON.parse(r.stdout), what).not.toThrow();
  if (format === 'csv') expect(() => parseCsv(r.stdout), what).not.toThrow();
  if (format === 'md') {
    // CommonMark ends a line at \n, \r\n or a bare \r: each table row must keep the header's cell count.
    let cells = -1;
    for (const line of r.stdout.split(/\r\n|\r|\n/)) {
      if (!line.startsWith('|')) {
        cells = -1;
        continue;
      }
      const n = mdCells(line).length;
      if (cells < 0) cells = n;
      expect(n, `${what}: ${line.slice(0, 120)}`).toBe(cells);
    }
  }
}

const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');
const results = new Map<string, { runs: Run[]; facts: Record<string, number> }>();
let listingBefore: string[] = [];
const hashesBefore = new Map<string, string>();

beforeAll(() => {
  const jobs: { case: string; args: string[] }[] = [];
  const facts = new Map<string, Record<string, number>>();
  for (const c of cases) {
    const file = join(inputs, c.fileName ?? `${c.name}.sqlite`);
    copyExport(SOURCE, file);
    let f: Record<string, number> = {};
    editExport(file, (db) => {
      f = c.edit(db) ?? {};
    });
    if (c.wal) editExport(file, (db) => db.pragma('journal_mode = WAL'));
    facts.set(c.name, f);
    for (const cmd of c.commands) jobs.push({ case: c.name, args: cmd.map((a) => (a === 'E' ? file : a === 'O' ? join(outputs, `${c.name}.json`) : a)) });
  }
  listingBefore = readdirSync(inputs).sort();
  for (const f of listingBefore) hashesBefore.set(f, sha(join(inputs, f)));
  const jobsFile = join(root, 'jobs.json');
  const resultsFile = join(root, 'results.json');
  writeFileSync(jobsFile, JSON.stringify(jobs.map((j) => ({ args: j.args }))));
  const batch = spawnSync(process.execPath, [join(REPO_ROOT, 'test', 'helpers', 'cliBatch.mjs'), jobsFile, resultsFile], { encoding: 'utf8', env: { ...process.env, ITERSCOPE_JOBS: '1' } });
  if (batch.status !== 0) throw new Error(`batch runner failed: ${batch.stderr}`);
  const runs = JSON.parse(readFileSync(resultsFile, 'utf8')) as Run[];
  runs.forEach((r, i) => {
    const name = jobs[i].case;
    const entry = results.get(name) ?? { runs: [], facts: facts.get(name)! };
    entry.runs.push(r);
    results.set(name, entry);
  });
}, 120_000);

for (const item of [...new Set(cases.map((c) => c.item))]) {
  describe(`issue 14 ${item}`, () => {
    for (const c of cases.filter((x) => x.item === item)) {
      it(c.name, () => {
        const { runs, facts } = results.get(c.name)!;
        for (const r of runs) checkRunInvariants(r);
        c.check(runs, facts);
      });
    }
  });
}

describe('issue 14: the corpus as a whole', () => {
  it('left every input byte-identical and the input directory listing unchanged', () => {
    expect(readdirSync(inputs).sort()).toEqual(listingBefore);
    for (const f of listingBefore) expect(sha(join(inputs, f)), f).toBe(hashesBefore.get(f));
  });
  it('ran every case (nothing skipped)', () => expect(results.size).toBe(cases.length));
});

describe('issue 14 4. schema contract: compare rejects a malformed baseline', () => {
  const good = join(root, 'baseline.json');
  const variants: [string, (s: any) => void, RegExp][] = [
    ['null figure', (s) => (s.overall.meanGpuBusyNs = null), /overall\.meanGpuBusyNs is null, expected a non-negative number/],
    ['negated figure', (s) => (s.phases.generation.meanCategoryNs.gemm = -s.phases.generation.meanCategoryNs.gemm), /phases\.generation\.meanCategoryNs\.gemm is -\d+(\.\d+)?, expected a non-negative number/],
    ['string figure', (s) => (s.iterations[0].wallNs = '26143014'), /iterations\[0\]\.wallNs is '26143014', expected a non-negative number/],
    ['kernel instances as text', (s) => (s.kernels[0].instances = 'many'), /kernels\[0\]\.instances is 'many', expected a non-negative integer/],
  ];
  beforeAll(() => {
    const r = spawnSync(process.execPath, [join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js'), 'summarize', SOURCE, '-o', good], { encoding: 'utf8', env: { ...process.env, GITHUB_STEP_SUMMARY: '' } });
    if (r.status !== 0) throw new Error(r.stderr);
  });
  it('a valid baseline still compares (exit 0 against itself)', () => {
    const r = spawnSync(process.execPath, [join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js'), 'compare', good, good], { encoding: 'utf8', env: { ...process.env, GITHUB_STEP_SUMMARY: '' } });
    expect(r.status).toBe(0);
  });
  for (const [name, mutate, message] of variants) {
    it(name, () => {
      const s = JSON.parse(readFileSync(good, 'utf8'));
      mutate(s);
      const bad = join(root, `baseline-${name.replace(/\W+/g, '-')}.json`);
      writeFileSync(bad, JSON.stringify(s));
      const r = spawnSync(process.execPath, [join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js'), 'compare', bad, good], { encoding: 'utf8', env: { ...process.env, GITHUB_STEP_SUMMARY: '' } });
      expect(r.status).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.split('\n').filter(Boolean)).toHaveLength(1);
      expect(r.stderr).toMatch(message);
    });
  }
});

// The fixture is never edited in place (copies only).
describe('issue 14: the source fixture', () => {
  it('is untouched', () => {
    const src = new BetterSqlite3(SOURCE, { readonly: true, fileMustExist: true });
    try {
      expect((src.prepare(`SELECT typeof(start) AS t FROM ${K} LIMIT 1`).get() as { t: string }).t).toBe('integer');
    } finally {
      src.close();
    }
  });
});
