#!/usr/bin/env node
/**
 * Builds an N-times larger nsys export (default 10x) from a real one, for `npm run bench`:
 * copies the file into a directory, then inside SQLite (INSERT ... SELECT, no per-row JS) appends
 * N-1 copies of every event table's rows, each shifted in time by the capture span, as if the same
 * run had gone on N times as long:
 * - time columns (`start`, `end`, `timestamp`) + c * SPAN;
 * - `correlationId` + c * CORR (kernel/memcpy/memset/sync <-> CUDA API joins stay 1:1);
 * - `graphNodeId` / `originalGraphNodeId` + c * GRAPH (graph-node kernels keep pointing at their
 *   copy's CUDA_GRAPH_NODE_EVENTS rows), `eventSyncId` + c * SYNC, sampling ids + c * SAMPLE;
 * - NVTX iteration labels `[Executor] _forward_step N: ...` renumbered N + c * ITERS as new
 *   StringIds rows, so iterations continue (0..ITERS*N-1); NVTX domain-creation rows (eventType
 *   75) are not repeated (one domain, one name);
 * - ANALYSIS_DETAILS.duration / stopTime extended; metadata, threads, GPUs, enums unchanged.
 * It also writes the iteration log with the same renumbering (`'iter': N` -> N + c * ITERS), so
 * `iterations --log` joins every copy.
 *
 *   node bench/make-10x.mjs [--source trace.sqlite] [--factor 10] [--out DIR]
 *
 * DIR defaults to $TMPDIR/iterscope-bench-x<factor>; an existing build of the same source and
 * factor is reused (its .stamp.json says so). Prints the time taken and the file size.
 */
import { copyFileSync, chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { optionsOrExit } from './args.mjs';
import Database from 'better-sqlite3';

const here = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(here, '..');
export const DEFAULT_SOURCE = resolve(REPO, '..', 'shared', 'fixtures', 'pytorch-dense-long', 'trace.sqlite');

/** Tables whose rows are events in time (replicated); everything else is described once. */
const NOT_EVENTS = new Set(['DIAGNOSTIC_EVENT', 'ANALYSIS_DETAILS', 'TARGET_INFO_SESSION_START_TIME']);
/** Rows keyed by the sampling event id (COMPOSITE_EVENTS.id), not by time. */
const SAMPLE_ID_TABLES = new Set(['COMPOSITE_EVENTS', 'SAMPLING_CALLCHAINS']);
const q = (name) => `"${name.replace(/"/g, '""')}"`;

/**
 * Builds `<out>/trace.sqlite` (and `<out>/iteration_log.txt` when the source has one beside it).
 * Returns { file, log, seconds, bytes, kernels, reused }.
 */
export function make10x({ source = DEFAULT_SOURCE, factor = 10, out, log = console.error } = {}) {
  const src = resolve(source);
  const st = statSync(src);
  const dir = resolve(out ?? join(tmpdir(), `iterscope-bench-x${factor}`));
  const file = join(dir, 'trace.sqlite');
  const logOut = join(dir, 'iteration_log.txt');
  const stampFile = join(dir, '.stamp.json');
  const stamp = { source: src, sourceBytes: st.size, sourceMtimeMs: Math.round(st.mtimeMs), factor, version: 1 };
  if (existsSync(stampFile) && existsSync(file)) {
    const old = JSON.parse(readFileSync(stampFile, 'utf8'));
    if (Object.keys(stamp).every((k) => old[k] === stamp[k]) && statSync(file).size === old.bytes) {
      return { file, log: existsSync(logOut) ? logOut : null, seconds: old.seconds, bytes: statSync(file).size, kernels: old.kernels, reused: true };
    }
  }
  mkdirSync(dir, { recursive: true });
  rmSync(stampFile, { force: true });
  const t0 = process.hrtime.bigint();
  copyFileSync(src, file);
  chmodSync(file, 0o644);
  // SQLite's temp files (INSERT INTO t SELECT FROM t materialises the SELECT) go beside the copy.
  process.env.SQLITE_TMPDIR = dir;
  const db = new Database(file);
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -262144');
  db.pragma('temp_store = FILE');
  const scalar = (sql) => db.prepare(sql).pluck().get();
  const tables = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`).pluck().all();
  const cols = new Map(tables.map((t) => [t, db.pragma(`table_info(${q(t)})`).map((c) => c.name)]));
  const eventTables = tables.filter(
    (t) => !NOT_EVENTS.has(t) && !t.startsWith('TARGET_INFO_') && (cols.get(t).includes('start') || cols.get(t).includes('timestamp') || SAMPLE_ID_TABLES.has(t)) && scalar(`SELECT count(*) FROM ${q(t)}`) > 0,
  );
  const maxOf = (col, where = (t) => cols.get(t).includes(col)) => {
    const parts = tables.filter(where).map((t) => `SELECT max(${q(col)}) AS v FROM ${q(t)}`);
    return parts.length ? Number(scalar(`SELECT max(v) FROM (${parts.join(' UNION ALL ')})`) ?? 0) : 0;
  };
  const minOf = (col, ts) => {
    const parts = ts.filter((t) => cols.get(t).includes(col)).map((t) => `SELECT min(${q(col)}) AS v FROM ${q(t)}`);
    return parts.length ? Number(scalar(`SELECT min(v) FROM (${parts.join(' UNION ALL ')})`) ?? 0) : 0;
  };
  const timed = eventTables.filter((t) => !SAMPLE_ID_TABLES.has(t) || t === 'COMPOSITE_EVENTS');
  const first = Math.min(minOf('start', timed), minOf('timestamp', timed));
  const last = Math.max(maxOf('end', (t) => timed.includes(t) && cols.get(t).includes('end')), maxOf('start', (t) => timed.includes(t) && cols.get(t).includes('start')), maxOf('timestamp', (t) => timed.includes(t) && cols.get(t).includes('timestamp')));
  // The span rounded up to 1 ms: copy c starts SPAN after copy c-1, past its last event.
  const SPAN = Math.ceil((last - Math.min(0, first) + 1) / 1e6) * 1e6;
  const CORR = maxOf('correlationId') + 1;
  const GRAPH = (Math.floor(maxOf('graphNodeId') / 2 ** 32) + 1) * 2 ** 32;
  const SYNC = maxOf('eventSyncId') + 1;
  const SAMPLE = cols.has('COMPOSITE_EVENTS') ? Number(scalar('SELECT max(id) FROM COMPOSITE_EVENTS') ?? 0) + 1 : 0;
  const MAXID = Number(scalar('SELECT max(id) FROM StringIds') ?? 0);

  db.exec(`CREATE TEMP TABLE copies (c INTEGER PRIMARY KEY)`);
  const insC = db.prepare('INSERT INTO copies VALUES (?)');
  for (let c = 1; c < factor; c++) insC.run(c);

  // Iteration labels and their renumbered copies (new StringIds rows).
  db.exec(`
    CREATE TEMP TABLE labels AS
      SELECT id, substr(value, 1, instr(value, '_forward_step ') + 13) AS head,
             CAST(substr(value, instr(value, '_forward_step ') + 14, instr(substr(value, instr(value, '_forward_step ') + 14), ':') - 1) AS INTEGER) AS n,
             substr(substr(value, instr(value, '_forward_step ') + 14), instr(substr(value, instr(value, '_forward_step ') + 14), ':')) AS tail
      FROM StringIds
      WHERE value LIKE '%\\_forward\\_step %:%' ESCAPE '\\'
        AND substr(value, instr(value, '_forward_step ') + 14, instr(substr(value, instr(value, '_forward_step ') + 14), ':') - 1) GLOB '[0-9]*'
        AND substr(value, instr(value, '_forward_step ') + 14, instr(substr(value, instr(value, '_forward_step ') + 14), ':') - 1) NOT GLOB '*[^0-9]*'`);
  const nLabels = Number(scalar('SELECT count(*) FROM labels'));
  const ITERS = nLabels ? Number(scalar('SELECT max(n) FROM labels')) + 1 : 0;
  db.exec(`
    CREATE TEMP TABLE labelmap (c INTEGER, oldId INTEGER, newId INTEGER, value TEXT, PRIMARY KEY (c, oldId));
    INSERT INTO labelmap
      SELECT copies.c, l.id, ${MAXID} + (copies.c - 1) * ${nLabels} + l.rn, l.head || (l.n + copies.c * ${ITERS}) || l.tail
      FROM copies CROSS JOIN (SELECT *, row_number() OVER (ORDER BY id) AS rn FROM labels) AS l;
    INSERT INTO StringIds (id, value) SELECT newId, value FROM labelmap;`);

  const counts = {};
  const step = (table, col) => {
    if (col === 'start' || col === 'end' || col === 'timestamp') return table === 'SAMPLING_CALLCHAINS' ? null : `t.${q(col)} + copies.c * ${SPAN}`;
    if (col === 'correlationId') return `t.${q(col)} + copies.c * ${CORR}`;
    if (col === 'graphNodeId' || col === 'originalGraphNodeId') return `t.${q(col)} + copies.c * ${GRAPH}`;
    if (col === 'eventSyncId') return `t.${q(col)} + copies.c * ${SYNC}`;
    if (col === 'id' && SAMPLE_ID_TABLES.has(table)) return `t.id + copies.c * ${SAMPLE}`;
    if (col === 'textId' && table === 'NVTX_EVENTS') return 'coalesce(m.newId, t.textId)';
    return null;
  };
  db.exec('BEGIN');
  for (const t of eventTables) {
    const cs = cols.get(t);
    const exprs = cs.map((c) => step(t, c) ?? `t.${q(c)}`);
    let from = `copies CROSS JOIN ${q(t)} AS t`;
    let where = '';
    if (t === 'NVTX_EVENTS') {
      from += ' LEFT JOIN labelmap AS m ON m.c = copies.c AND m.oldId = t.textId';
      where = 'WHERE t.eventType != 75';
    }
    const t1 = process.hrtime.bigint();
    const r = db.prepare(`INSERT INTO ${q(t)} (${cs.map(q).join(', ')}) SELECT ${exprs.join(', ')} FROM ${from} ${where}`).run();
    counts[t] = r.changes;
    log(`make-10x: ${t}: +${r.changes} rows (${(Number(process.hrtime.bigint() - t1) / 1e9).toFixed(1)} s)`);
  }
  if (cols.has('ANALYSIS_DETAILS')) db.prepare(`UPDATE ANALYSIS_DETAILS SET duration = duration + ?, stopTime = stopTime + ?`).run((factor - 1) * SPAN, (factor - 1) * SPAN);
  db.exec('COMMIT');
  const kernels = cols.has('CUPTI_ACTIVITY_KIND_KERNEL') ? Number(scalar('SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL')) : 0;
  db.close();

  // The iteration log, renumbered the same way.
  let logFile = null;
  const srcLog = join(dirname(src), 'iteration_log.txt');
  if (existsSync(srcLog) && ITERS > 0) {
    const text = readFileSync(srcLog, 'utf8').replace(/\n$/, '');
    const parts = [];
    for (let c = 0; c < factor; c++) parts.push(c === 0 ? text : text.replace(/'iter': (\d+)/g, (_m, n) => `'iter': ${Number(n) + c * ITERS}`));
    writeFileSync(logOut, parts.join('\n') + '\n');
    logFile = logOut;
  }
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const bytes = statSync(file).size;
  writeFileSync(stampFile, JSON.stringify({ ...stamp, seconds, bytes, kernels, span: SPAN, iterationsPerCopy: ITERS, rowsAdded: counts }, null, 2) + '\n');
  return { file, log: logFile, seconds, bytes, kernels, reused: false };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const values = optionsOrExit('make-10x', { source: { type: 'string' }, factor: { type: 'string', default: '10' }, out: { type: 'string' } }, 'usage: node bench/make-10x.mjs [--source EXPORT] [--factor N] [--out FILE]\n');
  const factor = Number.parseInt(values.factor, 10);
  if (!(factor >= 2)) {
    console.error('make-10x: --factor must be an integer >= 2');
    process.exit(2);
  }
  const r = make10x({ source: values.source ?? DEFAULT_SOURCE, factor, out: values.out });
  console.log(`${r.reused ? 'reused' : 'built'} ${r.file}: ${(r.bytes / 1e6).toFixed(0)} MB, ${r.kernels} kernels, ${r.seconds.toFixed(1)} s${r.reused ? ' (when built)' : ''}${r.log ? `; log ${r.log}` : ''}`);
}
