import type BetterSqlite3 from 'better-sqlite3';
import { KINETO_CPU_OPS_DDL, NSYS_ENUM_ROWS, NSYS_TABLE_DDL } from './nsysDdl.js';

// The SQL of the Kineto -> nsys-shaped database conversion (src/kineto/convert.ts streams the
// trace's events into these). The only queries in iterscope that write: each takes the connection
// of the fresh database the conversion creates, never an opened export. Table names are our own
// constants; every value is bound.

/** TID bits of a serialized globalTid (queries/globalIds.ts): a thread's process is `globalTid - (globalTid & mask)`. */
const TID_MASK = 0xffffff;

/** The tables whose rows carry `start`/`end` times. */
const TIMED_TABLES = ['CUPTI_ACTIVITY_KIND_RUNTIME', 'CUPTI_ACTIVITY_KIND_KERNEL', 'CUPTI_ACTIVITY_KIND_MEMCPY', 'CUPTI_ACTIVITY_KIND_MEMSET', 'NVTX_EVENTS', 'KINETO_CPU_OPS'] as const;

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
 * The per-event inserts, prepared once, run once per trace event, each taking its values in the
 * order named. Times are ns; columns the conversion does not know are fixed in the SQL.
 */
export interface EventInserts {
  string: WriteStatement<[id: number, value: string]>;
  /** eventClass 0: CUDA runtime, 1: CUDA driver; `returnValue` 0. */
  runtimeCall: WriteStatement<[start: number, end: number, eventClass: number, globalTid: Id, correlationId: Id, nameId: number]>;
  /** Dynamic shared memory and local memory 0. */
  kernel: WriteStatement<KernelValues>;
  memcpy: WriteStatement<MemcpyValues>;
  /** `value` 0. */
  memset: WriteStatement<[start: number, end: number, deviceId: number, contextId: number, streamId: number, correlationId: Id, bytes: number, memKind: number]>;
  /** A push/pop range (`eventType` 59) in the default domain. */
  nvtxRange: WriteStatement<[start: number, end: number, text: string, globalTid: Id]>;
  cpuOp: WriteStatement<[start: number, end: number, globalTid: Id, nameId: number, externalId: Id]>;
}

type KernelValues = [
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

type MemcpyValues = [
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
    runtimeCall: db.prepare('INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, returnValue) VALUES (?, ?, ?, ?, ?, ?, 0)'),
    kernel: db.prepare(
      `INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, demangledName, shortName, registersPerThread,
       gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, 0, ?)`,
    ),
    memcpy: db.prepare(
      'INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, bytes, copyKind, srcKind, dstKind) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    memset: db.prepare('INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, correlationId, value, bytes, memKind) VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?)'),
    nvtxRange: db.prepare('INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (?, ?, 59, ?, ?, 0)'),
    cpuOp: db.prepare('INSERT INTO KINETO_CPU_OPS (start, end, globalTid, nameId, externalId) VALUES (?, ?, ?, ?, ?)'),
  };
}

/** Subtracts `shiftNs` from `start` and `end` of every timed table (times were stored against a provisional origin). */
export function shiftTimes(db: BetterSqlite3.Database, shiftNs: number): void {
  for (const table of TIMED_TABLES) {
    db.prepare(`UPDATE ${table} SET start = start - ?, end = end - ?`).run(shiftNs, shiftNs);
  }
}

/** An index on the runtime calls' correlation ids, for `setGpuRowProcessFromRuntime`. */
export function indexRuntimeByCorrelation(db: BetterSqlite3.Database): void {
  db.exec('CREATE INDEX CUPTI_ACTIVITY_KIND_RUNTIME_correlation ON CUPTI_ACTIVITY_KIND_RUNTIME (correlationId)');
}

/** Sets every row's `globalPid` to the process of the runtime call with its correlation id (NULL without one). */
export function setGpuRowProcessFromRuntime(db: BetterSqlite3.Database, table: GpuActivityTable): void {
  db.exec(
    `UPDATE ${table} SET globalPid = (SELECT r.globalTid - (r.globalTid & ${TID_MASK}) FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE r.correlationId = ${table}.correlationId LIMIT 1)`,
  );
}

/** Sets `globalPid` of the rows still without one. */
export function setGpuRowProcessWhereMissing(db: BetterSqlite3.Database, table: GpuActivityTable, globalPid: number): void {
  db.prepare(`UPDATE ${table} SET globalPid = ? WHERE globalPid IS NULL`).run(globalPid);
}

export function countGpuRowsWithoutProcess(db: BetterSqlite3.Database, table: GpuActivityTable): number {
  return (db.prepare(`SELECT count(*) AS n FROM ${table} WHERE globalPid IS NULL`).get() as { n: number }).n;
}

export function countCpuOps(db: BetterSqlite3.Database): number {
  return (db.prepare('SELECT count(*) AS n FROM KINETO_CPU_OPS').get() as { n: number }).n;
}

/** `[rowid, globalTid, start, end]` of every aten op, per thread by start, the longest first on equal starts (the nesting order). */
export function cpuOpsInNestingOrder(db: BetterSqlite3.Database): Iterable<number[]> {
  return db.prepare('SELECT rowid, globalTid, start, end FROM KINETO_CPU_OPS ORDER BY globalTid, start, end DESC').raw(true).iterate() as Iterable<number[]>;
}

/** Sets an op's depth, parent rowid and self time. */
export function prepareCpuOpNestingUpdate(db: BetterSqlite3.Database): WriteStatement<[depth: number, parentRowid: number | null, selfNs: number, rowid: number]> {
  return db.prepare('UPDATE KINETO_CPU_OPS SET depth = ?, parentRowid = ?, selfNs = ? WHERE rowid = ?');
}

/** The index the host-side analyses read aten ops by (thread, then time). */
export function indexCpuOpsByThread(db: BetterSqlite3.Database): void {
  db.exec('CREATE INDEX KINETO_CPU_OPS_thread_start ON KINETO_CPU_OPS (globalTid, start)');
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
