import { basename } from 'node:path';
import type { ExportHandle } from '../../queries/handle.js';
import { countNonTextStrings } from '../../queries/strings.js';
import { countNullRows } from '../../queries/validRows.js';
import { apiProcessCount } from '../../queries/globalIds.js';
import { SchemaError } from '../errors.js';
import { NSYS_TABLE_DDL } from '../../queries/nsysDdl.js';
import { noteExcludedRows } from './excludedRows.js';

/**
 * What each analysis reads from an export, declared in one place: for each table, the columns it
 * cannot do without (required) and their expected storage class. Any nsys table may be absent
 * (exports are lazy: no NVTX, no kernels), and an absent table means "no such activity"; but a
 * table that is present must have the columns its analyses read. `requireContract` checks a
 * declaration against the `table_info` probe of the open export (no extra query beyond a tiny
 * `StringIds` storage-class probe) before the analysis runs, so a dropped, renamed or retyped
 * column is exit 2 with one line naming the file, the table, the column(s), the export's nsys and
 * schema versions and the command — not a crash half-way. Every other column a loader reads is
 * optional (`OPTIONAL_COLUMNS`: read as NULL, one note on what is lost), and a few supporting
 * tables are optional (`OPTIONAL_TABLES`): see there and docs/robustness.md §4.
 *
 * Rows whose values are of the wrong storage class (NULL, REAL, TEXT or BLOB times, `end < start`,
 * times beyond 2^53, a NULL `eventType`) are a different matter: the readers exclude them
 * (rowChecks.ts) and they are counted in a note; so are kernels whose name column holds no integer
 * id (excludedRows.ts `NON_INTEGER_NAME_ID`).
 */

export type StorageClass = 'integer' | 'text';

export interface TableNeed {
  table: string;
  /** Columns the analysis reads unconditionally. */
  required: readonly string[];
  /** Expected storage class of some of them: a declared type of another affinity is an error. */
  classes?: Readonly<Record<string, StorageClass>>;
  /** The analysis needs this table whenever `whenPresent` (one of them) is present. */
  whenPresent?: readonly string[];
  /**
   * Columns whose NULL rows no reader can use (they filter on the column), with why: counted in a
   * note for every analysis that reads the table (free when the column is declared NOT NULL, as
   * nsys declares it: SQLite then answers without a scan).
   */
  nullExcludes?: Readonly<Record<string, string>>;
  /**
   * Required columns the analysis can do without when the export allows an assumption, said in
   * one note (`exportNotes`): `globalPid` of a GPU table, when one process called the CUDA API.
   */
  assumable?: readonly 'globalPid'[];
}

// For each required column: can the analysis be right without it, or assume it with a note?
//
// GPU tables (kernels, memcpy, memset, whole-graph launches):
// - start, end: cannot; they are the measurement.
// - deviceId: cannot; busy and idle time are unions per device, and a second GPU would be folded
//   into the first (every nsys export writes it).
// - streamId: cannot; gaps and late launches are per stream (every nsys export writes it).
// - correlationId: cannot; it is the only link from GPU work to the API call that launched it.
// - globalPid: can assume, when one process called the CUDA API: correlation ids are unique per
//   process, so with one process they alone join GPU work to its launches; that process's
//   globalPid is bound in place of the column (queries/globalIds.ts `gpuRowGlobalPid`), one note.
//   With several processes the join is ambiguous: refused.
// - demangledName (kernels): cannot; kernel names are what the summaries and categories read.
// CUDA API calls: start, end, correlationId, nameId (which calls launch): cannot; globalTid:
//   cannot, it says which thread (the executor thread) launched the work of an iteration.
// NVTX: start, end, eventType, globalTid: cannot (ranges, their kind and thread). text and textId:
//   a range's text is coalesce(StringIds.value via textId, text), so either alone could do, but
//   every export since 2021 writes both (fixtures/external README §4): kept required. domainId:
//   could be assumed 0 (default domain), but the executor ranges are found by their domain's
//   name, which would then be wrong without saying so: kept required.
// StringIds: id, value: cannot (every name).
// ThreadNames nameId/globalTid and TARGET_INFO_GPU id/name (`info`): could be left unnamed, but no
//   export lacks them when the table is present: kept required.

const GPU_OP_TABLES = ['CUPTI_ACTIVITY_KIND_KERNEL', 'CUPTI_ACTIVITY_KIND_MEMCPY', 'CUPTI_ACTIVITY_KIND_MEMSET', 'CUPTI_ACTIVITY_KIND_GRAPH_TRACE'] as const;
const GPU_OP_COLUMNS = ['start', 'end', 'deviceId', 'streamId', 'correlationId', 'globalPid'] as const;
const INTEGER_TIMES = { start: 'integer', end: 'integer' } as const;
const GPU_OP_CLASSES = { ...INTEGER_TIMES, deviceId: 'integer', streamId: 'integer', correlationId: 'integer', globalPid: 'integer' } as const;
const GLOBAL_PID = ['globalPid'] as const;

const KERNELS: TableNeed = {
  table: 'CUPTI_ACTIVITY_KIND_KERNEL',
  required: [...GPU_OP_COLUMNS, 'demangledName'],
  classes: { ...GPU_OP_CLASSES, demangledName: 'integer' },
  assumable: GLOBAL_PID,
};
const MEMCPY: TableNeed = { table: 'CUPTI_ACTIVITY_KIND_MEMCPY', required: GPU_OP_COLUMNS, classes: GPU_OP_CLASSES, assumable: GLOBAL_PID };
const MEMSET: TableNeed = { table: 'CUPTI_ACTIVITY_KIND_MEMSET', required: GPU_OP_COLUMNS, classes: GPU_OP_CLASSES, assumable: GLOBAL_PID };
const GRAPHS: TableNeed = { table: 'CUPTI_ACTIVITY_KIND_GRAPH_TRACE', required: GPU_OP_COLUMNS, classes: GPU_OP_CLASSES, assumable: GLOBAL_PID };
const RUNTIME: TableNeed = {
  table: 'CUPTI_ACTIVITY_KIND_RUNTIME',
  required: ['start', 'end', 'correlationId', 'globalTid', 'nameId'],
  classes: { ...INTEGER_TIMES, correlationId: 'integer', globalTid: 'integer', nameId: 'integer' },
};
const NVTX: TableNeed = {
  table: 'NVTX_EVENTS',
  required: ['start', 'end', 'eventType', 'globalTid', 'text', 'textId', 'domainId'],
  classes: { ...INTEGER_TIMES, eventType: 'integer', globalTid: 'integer', textId: 'integer', domainId: 'integer', text: 'text' },
  nullExcludes: { eventType: 'NULL eventType (neither a range nor a mark)' },
};
const STRINGS: TableNeed = {
  table: 'StringIds',
  required: ['id', 'value'],
  classes: { id: 'integer', value: 'text' },
  whenPresent: ['CUPTI_ACTIVITY_KIND_KERNEL', 'CUPTI_ACTIVITY_KIND_RUNTIME', 'NVTX_EVENTS'],
};
/** What the NVTX-GPU projection reads of the GPU tables: when and which call launched them. */
const projectionOps = (table: string): TableNeed => ({
  table,
  required: ['start', 'end', 'correlationId', 'globalPid'],
  classes: { ...INTEGER_TIMES, correlationId: 'integer', globalPid: 'integer' },
  assumable: GLOBAL_PID,
});

const THREADS: TableNeed = { table: 'ThreadNames', required: ['nameId', 'globalTid'], classes: { nameId: 'integer', globalTid: 'integer' } };
const GPUS: TableNeed = { table: 'TARGET_INFO_GPU', required: ['id', 'name'], classes: { name: 'text' } };

/**
 * Columns the analyses read when they are there and do without when they are not: a column the
 * export lacks is read as NULL (queries/optionalColumns.ts), and what the output then lacks is
 * said in one note per entry (`optionalColumnNotes`); every number that does not need it stays
 * the same (test/robustness/leanExport.test.ts drops each one in turn from real fixtures and
 * checks both). No export nsys wrote lacks them (every fixture, nsys 2021 to 2026.2, has them
 * all): a lean or edited export does.
 */
export interface OptionalColumns {
  table: string;
  columns: readonly string[];
  /** What the output lacks without any one of them (the note's words). */
  degrades: string;
}

export const OPTIONAL_COLUMNS: readonly OptionalColumns[] = [
  {
    table: 'TARGET_INFO_GPU',
    columns: ['busLocation', 'totalMemory', 'smCount', 'clockRate', 'uuid', 'chipName', 'computeMajor', 'computeMinor'],
    degrades: "the GPUs' bus location, memory, SM count, clock, UUID, chip and compute capability are shown as unknown",
  },
  { table: 'TARGET_INFO_GPU', columns: ['cuDevice', 'vmId'], degrades: 'GPU metric samples are matched to CUDA devices by TARGET_INFO_CUDA_DEVICE alone, else by device id' },
  { table: 'TARGET_INFO_CUDA_DEVICE', columns: ['pid', 'cudaId', 'gpuId'], degrades: 'the table is not read: GPU metric samples are matched to CUDA devices by TARGET_INFO_GPU.cuDevice, else by device id' },
  { table: 'TARGET_INFO_SESSION_START_TIME', columns: ['utcEpochNs', 'utcTime', 'localTime'], degrades: 'the wall-clock session start is unknown (as without the table)' },
  { table: 'ANALYSIS_DETAILS', columns: ['globalVid', 'duration', 'startTime', 'stopTime'], degrades: 'the capture length is taken from the last CUDA API call (as without the table)' },
  { table: 'PROCESSES', columns: ['globalPid', 'pid', 'name'], degrades: 'processes may be shown without names' },
  { table: 'ThreadNames', columns: ['priority'], degrades: 'thread priorities are shown as unknown' },
  { table: 'META_DATA_EXPORT', columns: ['name', 'value'], degrades: 'the table is not read: the nsys version and export schema are unknown' },
  { table: 'EXPORT_META_DATA', columns: ['name', 'value'], degrades: 'the table is not read: the nsys version and export schema are unknown' },
  { table: 'META_DATA_CAPTURE', columns: ['name', 'value'], degrades: 'the table is not read: what nsys was asked to trace is unknown (as without the table)' },
  { table: 'CUPTI_ACTIVITY_KIND_MEMCPY', columns: ['bytes', 'copyKind'], degrades: 'memcpy traffic (bytes by direction) is unknown and left out; copy times are counted as always' },
  { table: 'CUPTI_ACTIVITY_KIND_KERNEL', columns: ['graphNodeId'], degrades: 'kernels run as CUDA-graph nodes are not told apart (the graph trace mode reads as none)' },
  { table: 'CUPTI_ACTIVITY_KIND_KERNEL', columns: ['shortName'], degrades: 'trace slices are named by the demangled name, and kernels --by short is refused' },
  { table: 'CUPTI_ACTIVITY_KIND_GRAPH_TRACE', columns: ['graphId'], degrades: 'kernels --graphs sums every whole-graph launch in one row [CUDA graph null]' },
  { table: 'CUPTI_ACTIVITY_KIND_GRAPH_TRACE', columns: ['graphExecId'], degrades: 'trace slices of whole-graph launches do not show their executable graph' },
  { table: 'CUPTI_ACTIVITY_KIND_MEMCPY', columns: ['srcKind', 'dstKind'], degrades: 'pageable host memory in copies is not told apart' },
];

/**
 * Tables the analyses read when they are there and do without, silently: exports nsys wrote lack
 * them (trimmed exports have no TARGET_INFO_GPU, nsys 2021 no PROCESSES or session start), and the
 * output shows what is then unknown (no GPU names, no thread names) where it shows them. Activity
 * tables (kernels, NVTX, OS runtime, GPU metrics, ...) are not listed: absent means "not
 * recorded", which the capture health says. leanExport.test.ts drops each in turn too.
 */
export const OPTIONAL_TABLES: readonly { table: string; degrades: string }[] = [
  { table: 'TARGET_INFO_GPU', degrades: 'GPUs are not named' },
  { table: 'TARGET_INFO_CUDA_DEVICE', degrades: 'GPU metric samples are matched to CUDA devices by TARGET_INFO_GPU.cuDevice, else by device id' },
  { table: 'TARGET_INFO_SESSION_START_TIME', degrades: 'the wall-clock session start is unknown' },
  { table: 'ANALYSIS_DETAILS', degrades: 'the capture length is taken from the last CUDA API call' },
  { table: 'PROCESSES', degrades: 'processes are shown without names' },
  { table: 'ThreadNames', degrades: 'threads are shown without names' },
  { table: 'META_DATA_CAPTURE', degrades: 'what nsys was asked to trace is unknown' },
  { table: 'ENUM_CUDA_MEMCPY_OPER', degrades: 'memcpy directions are named from the ids nsys keeps stable (others as kind N)' },
  { table: 'ENUM_CUDA_MEM_KIND', degrades: 'memory kinds are named from the ids nsys keeps stable' },
];

/** One note per `OPTIONAL_COLUMNS` entry the export lacks a column of (its table present). */
export function optionalColumnNotes(handle: ExportHandle): string[] {
  const notes: string[] = [];
  for (const need of OPTIONAL_COLUMNS) {
    if (!handle.hasTable(need.table)) continue;
    const absent = need.columns.filter((c) => !handle.hasColumn(need.table, c));
    if (absent.length === 0) continue;
    notes.push(`${handle.path}: ${need.table} has no ${absent.join(', ')} column${absent.length > 1 ? 's' : ''} (${exportVersionText(handle)}, a lean or edited export): ${need.degrades}`);
  }
  return notes;
}

// GPU metrics (`--gpu-metrics-devices`): every column of the samples and of their names is the
// measurement or says which GPU and metric it is: cannot. TARGET_INFO_GPU id and name as above.
const GPU_METRICS: TableNeed = { table: 'GPU_METRICS', required: ['timestamp', 'typeId', 'metricId', 'value'], classes: { timestamp: 'integer', typeId: 'integer', metricId: 'integer' } };
const GPU_METRIC_NAMES: TableNeed = { table: 'TARGET_INFO_GPU_METRICS', required: ['typeId', 'metricId', 'metricName'], classes: { typeId: 'integer', metricId: 'integer', metricName: 'text' } };
// `--cuda-memory-usage` events: the time, process, device, size, kind and whether it allocates or
// frees are what the allocation figures are made of: cannot.
const MEMORY_USAGE: TableNeed = {
  table: 'CUDA_GPU_MEMORY_USAGE_EVENTS',
  required: ['start', 'globalPid', 'deviceId', 'bytes', 'memKind', 'memoryOperationType'],
  classes: { start: 'integer', globalPid: 'integer', deviceId: 'integer', bytes: 'integer', memKind: 'integer', memoryOperationType: 'integer' },
};

/** Per analysis, the tables and columns it reads. */
export const ANALYSIS_CONTRACTS = {
  /** GPU ops in typed columns (iterations, gaps, trace, report, ranks). */
  gpuOps: [KERNELS, MEMCPY, MEMSET, GRAPHS, STRINGS],
  /** CUDA API calls (iterations attribution, gaps' host causes). */
  apiCalls: [RUNTIME, STRINGS],
  /** `kernels` (cuda_gpu_kern_sum). */
  kernelSummary: [KERNELS, STRINGS],
  /** `nvtx`, iteration windows, NVTX host causes. */
  nvtx: [NVTX, STRINGS],
  /** `nvtx --gpu` (nvtx_gpu_proj_sum). */
  nvtxGpuProjection: [NVTX, RUNTIME, ...GPU_OP_TABLES.map(projectionOps), STRINGS],
  /** `info`: threads and GPUs. */
  exportInfo: [THREADS, GPUS, STRINGS],
  /** Sampled GPU metrics (`metrics`, iterations' and phases' metric columns). */
  gpuMetrics: [GPU_METRICS, GPU_METRIC_NAMES, GPUS],
  /** `--cuda-memory-usage` allocations (the memory part). */
  memoryUsage: [MEMORY_USAGE],
} as const satisfies Record<string, readonly TableNeed[]>;

export type AnalysisName = keyof typeof ANALYSIS_CONTRACTS;

/** The tables these analyses read (what a Kineto trace's conversion must write for them). */
export function tablesReadBy(analyses: readonly AnalysisName[]): string[] {
  return [...new Set(analyses.flatMap((a) => (ANALYSIS_CONTRACTS[a] as readonly TableNeed[]).map((n) => n.table)))];
}

/**
 * The CLI command running (for messages), set by the CLI before the command's action: in the
 * environment, which worker threads (several exports) get a copy of.
 */
const COMMAND_ENV = 'ITERSCOPE_COMMAND';
export function setCommandForMessages(name: string | null): void {
  if (name) process.env[COMMAND_ENV] = name;
  else delete process.env[COMMAND_ENV];
}

/** `nsys 2025.3.2.0, export schema 3.20.3` (what the export says about itself). */
export function exportVersionText(handle: ExportHandle): string {
  const m = handle.metadata;
  return `nsys ${m.productVersion ?? 'version unknown'}, export schema ${m.schemaVersion ?? 'unknown'}`;
}

function schemaError(handle: ExportHandle, analysis: string, problem: string): SchemaError {
  const command = process.env[COMMAND_ENV] ?? null;
  const who = command ? `iterscope ${command}` : analysis === 'this' ? 'this analysis' : `the ${analysis} analysis`;
  return new SchemaError(handle.path, `${problem}, needed by ${who} (${exportVersionText(handle)} in ${basename(handle.path)}); re-export it with nsys export --type sqlite`);
}

/** SQLite's affinity of a declared column type (https://sqlite.org/datatype3.html §3.1). */
export function affinityOf(declared: string): 'integer' | 'text' | 'blob' | 'real' | 'numeric' {
  const t = declared.toUpperCase();
  if (t.includes('INT')) return 'integer';
  if (/CHAR|CLOB|TEXT/.test(t)) return 'text';
  if (t === '' || t.includes('BLOB')) return 'blob';
  if (/REAL|FLOA|DOUB/.test(t)) return 'real';
  return 'numeric';
}

/**
 * Throws a `SchemaError` (exit 2, one line) when a present table lacks a column `analysis` reads,
 * declares it with an affinity that cannot hold its storage class (a TEXT `start`, a TEXT
 * `correlationId`), or when `StringIds.value` holds BLOBs. `done`: the checks made so far on this
 * export (held by its `LoadedExport`), so each is made once.
 */
export function requireContract(handle: ExportHandle, analysis: AnalysisName, done: Set<string> = new Set()): void {
  if (done.has(analysis)) return;
  for (const need of ANALYSIS_CONTRACTS[analysis] as readonly TableNeed[]) {
    if (!handle.hasTable(need.table)) {
      const users = need.whenPresent?.filter((t) => handle.hasTable(t)) ?? [];
      if (users.length) throw schemaError(handle, analysis, `table ${need.table} is missing (${users.join(', ')} refer to it)`);
      continue;
    }
    const absent = need.required.filter((c) => !handle.hasColumn(need.table, c));
    const missing = absent.filter((c) => !(need.assumable as readonly string[] | undefined)?.includes(c));
    if (missing.length) throw schemaError(handle, analysis, `table ${need.table} lacks column${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`);
    if (absent.includes('globalPid') && apiProcessCount(handle) > 1) {
      throw schemaError(
        handle,
        analysis,
        `table ${need.table} lacks column globalPid and several processes called the CUDA API: correlation ids are unique per process only, so which call launched a row is ambiguous`,
      );
    }
    for (const [column, cls] of Object.entries(need.classes ?? {})) {
      if (absent.includes(column)) continue;
      const declared = handle.declaredTypeOf?.(need.table, column);
      if (declared == null) continue;
      const affinity = affinityOf(declared);
      const ok = cls === 'integer' ? affinity === 'integer' || affinity === 'numeric' : affinity === 'text' || affinity === 'blob';
      if (!ok) throw schemaError(handle, analysis, `column ${need.table}.${column} is declared ${declared || 'without a type'}, expected ${cls.toUpperCase()}`);
    }
    for (const [column, why] of Object.entries(need.nullExcludes ?? {})) noteExcludedRows(handle, need.table, countNullRows(handle, need.table, column), why);
  }
  if ((ANALYSIS_CONTRACTS[analysis] as readonly TableNeed[]).includes(STRINGS) && handle.hasTable('StringIds') && !done.has(TEXT_STRINGS)) {
    requireTextStrings(handle, analysis);
    done.add(TEXT_STRINGS);
  }
  done.add(analysis);
}

/** The key in `requireContract`'s `done` of the StringIds check below (made once whichever analysis asks). */
const TEXT_STRINGS = '\u0000StringIds text';

/** Kernel, API and NVTX names are StringIds.value: a BLOB there is a damaged export, not a name. */
function requireTextStrings(handle: ExportHandle, analysis: string): void {
  const nonText = countNonTextStrings(handle);
  if (nonText > 0) throw schemaError(handle, analysis, `column StringIds.value holds ${nonText} non-text value${nonText > 1 ? 's' : ''} (BLOB or number) where names are expected`);
}

/** The column named in SQLite's "no such column" (`"busLocation"`, `t.priority`, `globalPid`), unquoted and unqualified. */
function columnInSqliteMessage(message: string): string | null {
  const m = /^no such column: (.+?)(?: - should this be|$)/.exec(message);
  if (!m) return null;
  return m[1].trim().replace(/^.*\./, '').replace(/^["`[]|["`\]]$/g, '');
}

/**
 * A read no contract covers that met a missing column or table (SQLite's "no such column"), said
 * in our words: the table (the present one whose nsys DDL declares the column but which lacks it),
 * the column, the export's nsys version and the command. Never SQLite's own text.
 */
export function schemaErrorFromSqlite(handle: ExportHandle, message: string): SchemaError {
  const table = /^no such table: (?:\w+\.)?(\w+)/.exec(message)?.[1];
  if (table) return schemaError(handle, 'this', `table ${table} is missing`);
  const column = columnInSqliteMessage(message);
  // The column as the first word of a line of the table's DDL (escaped: it is matched, never run).
  const declares = (t: string) => new RegExp(`^\\s*${(column ?? '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s`, 'm').test(NSYS_TABLE_DDL[t] ?? '');
  const lacking = column ? Object.keys(NSYS_TABLE_DDL).filter((t) => handle.hasTable(t) && !handle.hasColumn(t, column) && declares(t)) : [];
  const where = lacking.length ? `table ${lacking.join(' or ')} lacks column ${column}` : `a column${column ? ` ${column}` : ''} is missing`;
  return schemaError(handle, 'this', where);
}
