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
    if (n <= this.data.length) return;
    let cap = this.data.length * 2;
    while (cap < n) cap *= 2;
    const next = this.make(cap);
    next.set(this.data as never);
    this.data = next;
  }
  trim(n: number): T {
    return this.data.subarray(0, n) as T;
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
  return <T extends Float64Array | Int32Array | Uint8Array>(Type: TypedArrayClass<T>): Column<T> =>
    new Column(shared ? (n) => new Type(new SharedArrayBuffer(n * Type.BYTES_PER_ELEMENT)) : (n) => new Type(n), capacity);
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
