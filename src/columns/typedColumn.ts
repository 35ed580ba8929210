/**
 * A growable typed-array column for streaming millions of rows without JS objects. Loaders size
 * it up front (from max(rowid)) so it rarely grows; `trim` hands out a view of the filled part.
 */
export class Column<T extends Float64Array | Int32Array | Uint32Array | Uint8Array> {
  data: T;
  constructor(
    private readonly make: (n: number) => T,
    capacity = 4096,
  ) {
    this.data = make(Math.max(1, capacity));
  }
  ensure(n: number): void {
    this.data = withRoomFor(this.data, n, this.make);
  }
  trim(n: number): T {
    return this.data.subarray(0, n) as T;
  }
}

/**
 * `data` when it holds `n` values, else a copy into an array `make` gives with the length doubled
 * until it does: how every growable column here grows.
 */
function withRoomFor<T extends { length: number; set(values: ArrayLike<number>): void }>(data: T, n: number, make: (length: number) => T): T {
  if (n <= data.length) return data;
  let cap = data.length * 2;
  while (cap < n) cap *= 2;
  const next = make(cap);
  next.set(data as unknown as ArrayLike<number>);
  return next;
}

/** Integers a column holds in one byte or two until one does not fit (`NarrowingIntColumn`). */
export type SmallInts = Int8Array | Int16Array | Int32Array;

/**
 * A growable column of integers that are usually small (a device id, a stream id): held in
 * `Int8Array` or `Int16Array` until a value does not fit, then in the next width that holds it
 * (`Int16Array`, else `Int32Array`). Each value is stored as an `Int32Array` stores it (`v | 0`),
 * so the numbers read back are the same as from an Int32 column: on the 10x bench export's 7M GPU
 * ops, 3 bytes a row for the device and 2 for the stream (35 MB) that the Int32 columns held for nothing.
 */
export class NarrowingIntColumn {
  data: SmallInts;
  constructor(
    private readonly make: <T extends SmallInts>(Type: TypedArrayClass<T>, n: number) => T,
    narrow: TypedArrayClass<Int8Array> | TypedArrayClass<Int16Array>,
    capacity = 4096,
  ) {
    this.data = make(narrow as TypedArrayClass<SmallInts>, Math.max(1, capacity));
  }
  /** Stores row `i`'s value (room made with `ensure`). */
  put(i: number, v: number | null): void {
    const x = (v as number) | 0;
    this.data[i] = x;
    if (this.data[i] !== x) this.widen(i, x);
  }
  /** To the narrowest width that holds `x` (bytes to two, else four): a device id of 300 costs two bytes, not four. */
  private widen(i: number, x: number): void {
    const next = this.data instanceof Int8Array && x === (x << 16) >> 16 ? this.make(Int16Array, this.data.length) : this.make(Int32Array, this.data.length);
    next.set(this.data);
    next[i] = x;
    this.data = next;
  }
  ensure(n: number): void {
    this.data = withRoomFor(this.data, n, (length) => this.make(this.data.constructor as TypedArrayClass<SmallInts>, length));
  }
  trim(n: number): SmallInts {
    return this.data.subarray(0, n);
  }
}

/** What a `Uint32OrFloat64Column` holds: read back, the same numbers either way. */
export type IdArray = Float64Array | Uint32Array;

/**
 * A growable column of ids that are whole numbers below 2^32 on every export nsys writes (CUPTI's
 * correlation ids): held in a `Uint32Array` while every value is one, else (a NULL, a fraction, a
 * text, -0, a value past 2^32) in a `Float64Array` with NaN for NULL, as a Float64 column holds it.
 * Either way the numbers read back are the Float64 column's, so readers need not know which: on
 * the 10x bench export's 7M GPU ops and 3.6M API calls, 4 bytes a row (42 MB).
 */
export class Uint32OrFloat64Column {
  data: Uint32Array | Float64Array;
  constructor(
    private readonly make: <T extends Uint32Array | Float64Array>(Type: TypedArrayClass<T>, n: number) => T,
    capacity = 4096,
  ) {
    this.data = make(Uint32Array as TypedArrayClass<Uint32Array | Float64Array>, Math.max(1, capacity));
  }
  /** Stores row `i`'s value (room made with `ensure`). */
  put(i: number, v: number | null): void {
    if (this.data instanceof Uint32Array) {
      if (typeof v === 'number' && v >>> 0 === v && (v !== 0 || 1 / v > 0)) {
        this.data[i] = v;
        return;
      }
      this.widen();
    }
    this.data[i] = v ?? NaN;
  }
  private widen(): void {
    const next = this.make(Float64Array, this.data.length);
    next.set(this.data);
    this.data = next;
  }
  ensure(n: number): void {
    this.data = withRoomFor(this.data, n, (length) => this.make(this.data.constructor as TypedArrayClass<Uint32Array | Float64Array>, length));
  }
  trim(n: number): Uint32Array | Float64Array {
    return this.data.subarray(0, n);
  }
}

type TypedArrayClass<T> = { new (length: number): T; new (buffer: SharedArrayBuffer): T; readonly BYTES_PER_ELEMENT: number };

/**
 * The column maker of one loader: `column(Float64Array)` is a `Column` of that type sized for
 * `capacity` rows, over ordinary memory, or with `shared` over a SharedArrayBuffer, so that a
 * worker thread reading the column (posted to it) sees the same memory instead of a copy. Every
 * column a loader makes this way is of the same kind. Shared columns are written only while they
 * are loaded, before they are posted.
 */
export function columnMaker(capacity: number, shared = false) {
  return <T extends Float64Array | Int32Array | Uint32Array | Uint8Array>(Type: TypedArrayClass<T>): Column<T> => new Column((n) => typedArray(Type, n, shared), capacity);
}

/** `columnMaker`'s `NarrowingIntColumn`s: `narrowColumn(Int8Array)`, over the same kind of memory. */
export function narrowingColumnMaker(capacity: number, shared = false) {
  return (narrow: TypedArrayClass<Int8Array> | TypedArrayClass<Int16Array>): NarrowingIntColumn =>
    new NarrowingIntColumn((Type, n) => typedArray(Type, n, shared), narrow, capacity);
}

/** `columnMaker`'s `Uint32OrFloat64Column`, over the same kind of memory. */
export function idColumnMaker(capacity: number, shared = false): () => Uint32OrFloat64Column {
  return () => new Uint32OrFloat64Column((Type, n) => typedArray(Type, n, shared), capacity);
}

/** A typed array of `n` elements, over a SharedArrayBuffer when `shared`. */
function typedArray<T>(Type: TypedArrayClass<T>, n: number, shared: boolean): T {
  return shared ? new Type(new SharedArrayBuffer(n * Type.BYTES_PER_ELEMENT)) : new Type(n);
}

/**
 * A NULL string id in an Int32 name column (kernel, API call): the one value no id takes. Not -1:
 * an edited export's negative ids are ids all the same (they resolve through StringIds as any id).
 */
export const NO_STRING_ID = -2147483648;

/**
 * Small non-negative integers by string id (a kernel name's category, its slot), looked up once per
 * op on millions of ops: a table over StringIds' keys (0..`maxId`, at most 2^22), a Map for any
 * other id (an edited export's negative or far ids, `NO_STRING_ID`).
 */
export class StringIdTable {
  private readonly dense: Int32Array;
  private readonly other = new Map<number, number>();
  constructor(maxId: number) {
    this.dense = new Int32Array(Math.min(Math.max(0, maxId), 1 << 22) + 1).fill(-1);
  }
  /** The value of `id`; -1 when none was set. */
  get(id: number): number {
    return id >= 0 && id < this.dense.length ? this.dense[id] : (this.other.get(id) ?? -1);
  }
  set(id: number, value: number): void {
    if (id >= 0 && id < this.dense.length) this.dense[id] = value;
    else this.other.set(id, value);
  }
}
