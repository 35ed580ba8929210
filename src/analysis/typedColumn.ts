/**
 * A growable typed-array column for streaming millions of rows without JS objects. Loaders size
 * it up front (from max(rowid)) so it rarely grows; `trim` hands out a view of the filled part.
 */
export class Column<T extends Float64Array | Int32Array | Uint8Array> {
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
