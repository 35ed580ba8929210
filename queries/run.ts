import type BetterSqlite3 from 'better-sqlite3';
import type { Compilable } from 'kysely';
import type { ExportHandle } from './handle.js';

export interface StreamOptions {
  /** Return 64-bit integers as bigint (needed for globalTid/globalPid on VM/Windows exports). */
  safeIntegers?: boolean;
  /** Rows as arrays in select order instead of objects (faster for hot loops). */
  raw?: boolean;
}

/**
 * Compiles a Kysely builder and prepares it on the export's better-sqlite3 connection, so hot
 * paths can stream with `iterate()` instead of materialising every row through the driver.
 */
export function prepareQuery(
  handle: ExportHandle,
  query: Compilable<unknown>,
  opts: StreamOptions = {},
): { stmt: BetterSqlite3.Statement; parameters: unknown[] } {
  const compiled = query.compile();
  const stmt = handle.sqlite.prepare(compiled.sql);
  if (opts.safeIntegers) stmt.safeIntegers(true);
  if (opts.raw) stmt.raw(true);
  return { stmt, parameters: compiled.parameters as unknown[] };
}

/** Streams the rows of a builder (typed by the builder's output). */
export function* iterateQuery<R>(handle: ExportHandle, query: Compilable<R>, opts: StreamOptions = {}): Generator<R> {
  const { stmt, parameters } = prepareQuery(handle, query, opts);
  yield* stmt.iterate(...parameters) as Iterable<R>;
}

/** All rows of a builder, synchronously. For small results (metadata, GPUs, threads). */
export function allRows<R>(handle: ExportHandle, query: Compilable<R>, opts: StreamOptions = {}): R[] {
  const { stmt, parameters } = prepareQuery(handle, query, opts);
  return stmt.all(...parameters) as R[];
}

type RowCallback = (...values: any[]) => void;
interface EachSlot {
  cb: RowCallback | null;
}
const eachSlots = new WeakMap<BetterSqlite3.Database, { plain: EachSlot; big: EachSlot }>();

/**
 * Registers (once per connection) the aggregates `iterscope_each` / `iterscope_each_big`, whose
 * step hands each row's values straight to the current callback. SQLite then drives the scan and
 * calls into JS with plain arguments: no row array or object is allocated per row, which makes
 * large scans several times faster than `iterate()` (see bench/).
 */
function eachSlotsFor(sqlite: BetterSqlite3.Database) {
  let slots = eachSlots.get(sqlite);
  if (slots) return slots;
  slots = { plain: { cb: null }, big: { cb: null } };
  for (const [name, slot, safeIntegers] of [
    ['iterscope_each', slots.plain, false],
    ['iterscope_each_big', slots.big, true],
  ] as const) {
    const step = function (_acc: number, a: unknown, b: unknown, c: unknown, d: unknown, e: unknown, f: unknown, g: unknown, h: unknown, i: unknown, j: unknown, k: unknown, l: unknown) {
      slot.cb!(a, b, c, d, e, f, g, h, i, j, k, l);
    };
    sqlite.aggregate(name, {
      varargs: true,
      safeIntegers,
      start: 0,
      // Fixed parameters (not a rest array) so V8 allocates nothing per call.
      step: step as unknown as (acc: number, next: number) => void,
    });
  }
  eachSlots.set(sqlite, slots);
  return slots;
}

/**
 * Streams a builder's rows into `onRow(col1, col2, ...)` (select order, at most 12 columns).
 * The fastest way to scan millions of rows; rows arrive in the order the query yields them.
 * Returns the number of rows.
 */
export function forEachRow(
  handle: ExportHandle,
  query: Compilable<unknown>,
  onRow: RowCallback,
  opts: { safeIntegers?: boolean } = {},
): number {
  const compiled = query.compile();
  const inner = handle.sqlite.prepare(compiled.sql);
  const names = inner.columns().map((c) => `"${c.name.replace(/"/g, '""')}"`);
  if (names.length > 12) throw new Error(`forEachRow: at most 12 columns (got ${names.length})`);
  const slots = eachSlotsFor(handle.sqlite);
  const slot = opts.safeIntegers ? slots.big : slots.plain;
  const fn = opts.safeIntegers ? 'iterscope_each_big' : 'iterscope_each';
  let n = 0;
  slot.cb = onRow;
  const outer = handle.sqlite.prepare(`SELECT ${fn}(${names.join(', ')}), count(*) FROM (${compiled.sql})`);
  try {
    const row = outer.raw(true).get(...(compiled.parameters as unknown[])) as [unknown, number];
    n = Number(row[1]);
  } finally {
    slot.cb = null;
  }
  return n;
}
