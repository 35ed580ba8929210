import type BetterSqlite3 from 'better-sqlite3';
import { KINETO_CPU_OPS_DDL, NSYS_ENUM_ROWS, NSYS_TABLE_DDL } from './nsysDdl.js';

// The SQL of the Kineto -> nsys-shaped database conversion (src/kineto/convert/convert.ts streams the
// trace's events into these). The only queries in iterscope that write: each takes the connection
// of the fresh database the conversion creates, never an opened export. Table names are our own
// constants; every value is bound.

/** TID bits of a serialized globalTid (queries/globalIds.ts): a thread's process is `globalTid - (globalTid & mask)`. */
const TID_MASK = 0xffffff;

/** The GPU activity tables, whose rows nsys files under the launching process (`globalPid`). */
export const GPU_ACTIVITY_TABLES = ['CUPTI_ACTIVITY_KIND_KERNEL', 'CUPTI_ACTIVITY_KIND_MEMCPY', 'CUPTI_ACTIVITY_KIND_MEMSET'] as const;
export type GpuActivityTable = (typeof GPU_ACTIVITY_TABLES)[number];

/** No journal, no fsync: the file is written once, by one connection, and deleted if the conversion fails. */
export function setBulkWriteMode(db: BetterSqlite3.Database): void {
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
}

/** The nsys tables (real DDL, queries/nsysDdl.ts), `KINETO_CPU_OPS`, and the rows of the ENUM_* tables. */
export function createNsysSchema(db: BetterSqlite3.Database): void {
  for (const ddl of Object.values(NSYS_TABLE_DDL)) db.exec(ddl);
  db.exec(KINETO_CPU_OPS_DDL);
  for (const [table, rows] of Object.entries(NSYS_ENUM_ROWS)) {
    const ins = db.prepare(`INSERT INTO ${table} (id, name, label) VALUES (?, ?, ?)`);
    for (const r of rows) ins.run(...r);
  }
}

/** The one write transaction of a conversion (the trace is read, and may fail, inside it). */
export function beginWrite(db: BetterSqlite3.Database): void {
  db.exec('BEGIN');
}
export function commitWrite(db: BetterSqlite3.Database): void {
  db.exec('COMMIT');
}
export function rollbackWrite(db: BetterSqlite3.Database): void {
  db.exec('ROLLBACK');
}

/** An id column's value: NULL when the trace does not give one. */
type Id = number | null;

/** A prepared write whose `run` takes the bound values in column order. */
export type WriteStatement<Values extends unknown[]> = BetterSqlite3.Statement<Values>;

/**
 * A multi-row insert: `add` queues one row's values, and every ROWS_PER_INSERT rows one prepared
 * `INSERT ... VALUES (...), (...), ...` writes them (one call into SQLite per batch instead of per
 * row: the binding, not SQLite, dominated a per-row insert). `flush` writes the rest row by row.
 */
export interface RowBatch<Values extends unknown[]> {
  /** Queues one row (`values` is read at once: the caller may reuse the array). */
  add(values: Readonly<Values>): void;
  flush(): void;
}

const ROWS_PER_INSERT = 64;

function rowBatch<Values extends unknown[]>(db: BetterSqlite3.Database, head: string, row: string, width: number): RowBatch<Values> {
  const many = db.prepare(`${head} VALUES ${Array.from({ length: ROWS_PER_INSERT }, () => row).join(', ')}`);
  const one = db.prepare(`${head} VALUES ${row}`);
  const queued: unknown[] = new Array(width * ROWS_PER_INSERT);
  let n = 0;
  return {
    add(values: Readonly<Values>) {
      for (let k = 0; k < width; k++) queued[n * width + k] = values[k];
      if (++n === ROWS_PER_INSERT) {
        many.run(queued);
        n = 0;
      }
    },
    flush() {
      for (let r = 0; r < n; r++) one.run(queued.slice(r * width, (r + 1) * width));
      n = 0;
    },
  };
}

/**
 * The per-event inserts, prepared once, each taking its values in the order named (queued and
 * written in batches: `flushEventInserts` before the tables are read). Times are ns; columns the
 * conversion does not know are fixed in the SQL.
 */
export interface EventInserts {
  string: WriteStatement<[id: number, value: string]>;
  /** eventClass 0: CUDA runtime, 1: CUDA driver; `returnValue` 0. */
  runtimeCall: RowBatch<RuntimeCallValues>;
  /** Dynamic shared memory and local memory 0. */
  kernel: RowBatch<[...KernelValues, globalPid: Id]>;
  memcpy: RowBatch<[...MemcpyValues, globalPid: Id]>;
  /** `value` 0. */
  memset: RowBatch<[...MemsetValues, globalPid: Id]>;
  /** A push/pop range (`eventType` 59) in the default domain. */
  nvtxRange: RowBatch<[start: number, end: number, text: string, globalTid: Id]>;
  /** An aten op with its nesting (rowid given: a parent is written before its children). */
  cpuOp: RowBatch<[rowid: number, start: number, end: number, globalTid: number, nameId: number, externalId: Id, depth: number, parentRowid: Id, selfNs: number]>;
}

export type RuntimeCallValues = [start: number, end: number, eventClass: number, globalTid: Id, correlationId: Id, nameId: number];

export type KernelValues = [
  start: number,
  end: number,
  deviceId: number,
  contextId: number,
  streamId: number,
  correlationId: Id,
  demangledName: number,
  shortName: number,
  registersPerThread: number,
  gridX: number,
  gridY: number,
  gridZ: number,
  blockX: number,
  blockY: number,
  blockZ: number,
  staticSharedMemory: number,
  gridId: number,
];

export type MemsetValues = [start: number, end: number, deviceId: number, contextId: number, streamId: number, correlationId: Id, bytes: number, memKind: number];

export type MemcpyValues = [
  start: number,
  end: number,
  deviceId: number,
  contextId: number,
  streamId: number,
  correlationId: Id,
  bytes: number,
  copyKind: number,
  srcKind: number,
  dstKind: number,
];

export function prepareEventInserts(db: BetterSqlite3.Database): EventInserts {
  return {
    string: db.prepare('INSERT INTO StringIds (id, value) VALUES (?, ?)'),
    runtimeCall: rowBatch(db, 'INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, returnValue)', '(?, ?, ?, ?, ?, ?, 0)', 6),
    kernel: rowBatch(
      db,
      `INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, demangledName, shortName, registersPerThread,
       gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId, globalPid)`,
      '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, 0, ?, ?)',
      18,
    ),
    memcpy: rowBatch(
      db,
      'INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, bytes, copyKind, srcKind, dstKind, globalPid)',
      '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      11,
    ),
    memset: rowBatch(db, 'INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, correlationId, value, bytes, memKind, globalPid)', '(?, ?, ?, ?, ?, ?, 0, ?, ?, ?)', 9),
    nvtxRange: rowBatch(db, 'INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId)', '(?, ?, 59, ?, ?, 0)', 4),
    cpuOp: rowBatch(db, 'INSERT INTO KINETO_CPU_OPS (rowid, start, end, globalTid, nameId, externalId, depth, parentRowid, selfNs)', '(?, ?, ?, ?, ?, ?, ?, ?, ?)', 9),
  };
}

/** Writes every queued row. */
export function flushEventInserts(inserts: EventInserts): void {
  for (const batch of [inserts.runtimeCall, inserts.kernel, inserts.memcpy, inserts.memset, inserts.nvtxRange, inserts.cpuOp]) batch.flush();
}

/**
 * Sets `globalPid` of a GPU table's rows from the runtime call with the same correlation id
 * (correlation ids are unique per process), NULL when there is none: for a trace whose CPU side is
 * several processes (with one, the rows were written with it).
 */
export function linkGpuRowsByCorrelation(db: BetterSqlite3.Database, table: GpuActivityTable): void {
  db.exec('CREATE INDEX IF NOT EXISTS CUPTI_ACTIVITY_KIND_RUNTIME_correlation ON CUPTI_ACTIVITY_KIND_RUNTIME (correlationId)');
  db.exec(
    `UPDATE ${table} SET globalPid = (SELECT r.globalTid - (r.globalTid & ${TID_MASK}) FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE r.correlationId = ${table}.correlationId LIMIT 1)`,
  );
}

export function countGpuRowsWithoutProcess(db: BetterSqlite3.Database, table: GpuActivityTable): number {
  return (db.prepare(`SELECT count(*) AS n FROM ${table} WHERE globalPid IS NULL`).get() as { n: number }).n;
}

/** Thread and process rows (`ThreadNames`, `PROCESSES`). */
export function prepareThreadAndProcessInserts(db: BetterSqlite3.Database): {
  thread: WriteStatement<[nameId: number, globalTid: number]>;
  process: WriteStatement<[globalPid: number, pid: number, name: string | null]>;
} {
  return {
    thread: db.prepare('INSERT INTO ThreadNames (nameId, priority, globalTid) VALUES (?, NULL, ?)'),
    process: db.prepare('INSERT INTO PROCESSES (globalPid, pid, name) VALUES (?, ?, ?)'),
  };
}

/** The session start; `utcEpochNs` exceeds 2^53, so it is bound as a bigint. */
export function insertSessionStart(db: BetterSqlite3.Database, utcEpochNs: bigint, utcTime: string, localTime: string): void {
  db.prepare('INSERT INTO TARGET_INFO_SESSION_START_TIME (utcEpochNs, utcTime, localTime) VALUES (?, ?, ?)').run(utcEpochNs, utcTime, localTime);
}

/** The capture's extent: from 0 (the session start) to `durationNs`. */
export function insertAnalysisDetails(db: BetterSqlite3.Database, globalVid: number, durationNs: number): void {
  db.prepare('INSERT INTO ANALYSIS_DETAILS (globalVid, duration, startTime, stopTime) VALUES (?, ?, 0, ?)').run(globalVid, durationNs, durationNs);
}

type GpuValues = [
  vmId: number,
  id: number,
  name: string | null,
  totalMemory: Id,
  smCount: Id,
  cuDevice: number,
  computeMajor: Id,
  computeMinor: Id,
  threadsPerWarp: Id,
  maxThreadsPerBlock: Id,
  maxRegistersPerBlock: Id,
  maxShmemPerBlock: Id,
  maxShmemPerBlockOptin: Id,
  maxShmemPerSm: Id,
  maxRegistersPerSm: Id,
];

/** One `TARGET_INFO_GPU` row per device. */
export function prepareGpuInsert(db: BetterSqlite3.Database): WriteStatement<GpuValues> {
  return db.prepare(
    `INSERT INTO TARGET_INFO_GPU (vmId, id, name, totalMemory, smCount, cuDevice, computeMajor, computeMinor, threadsPerWarp, maxThreadsPerBlock,
       maxRegistersPerBlock, maxShmemPerBlock, maxShmemPerBlockOptin, maxShmemPerSm, maxRegistersPerSm)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
}

/** `META_DATA_EXPORT` name/value rows. */
export function prepareMetadataInsert(db: BetterSqlite3.Database): WriteStatement<[name: string, value: string | null]> {
  return db.prepare('INSERT INTO META_DATA_EXPORT (name, value) VALUES (?, ?)');
}
