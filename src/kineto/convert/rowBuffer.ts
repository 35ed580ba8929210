/**
 * Rows of one table held while a trace is read, `width` numbers each in one growable
 * Float64Array (NULL held as NaN), written once the session start and the launching process are
 * known: no table is rewritten to shift its times (an UPDATE of every row cost as much as the
 * insert). The first two values of a row are its start and end.
 */
export class RowBuffer {
  private data: Float64Array;
  count = 0;

  constructor(
    readonly width: number,
    capacityRows = 4096,
  ) {
    this.data = new Float64Array(width * capacityRows);
  }

  /** Appends one row; `values.length` must be `width`. */
  push(values: readonly (number | null)[]): void {
    const at = this.count * this.width;
    if (at + this.width > this.data.length) {
      const next = new Float64Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    for (let k = 0; k < this.width; k++) this.data[at + k] = values[k] ?? NaN;
    this.count++;
  }

  /**
   * Hands every row to `write` (NaN back to null), start and end minus `shiftNs`, followed by the
   * `tail` values (the same for every row). The array is reused: `write` must not keep it.
   */
  forEach(shiftNs: number, write: (row: (number | null)[], index: number) => void, tail: readonly (number | null)[] = []): void {
    const row: (number | null)[] = [...new Array<number | null>(this.width).fill(null), ...tail];
    for (let i = 0; i < this.count; i++) {
      const at = i * this.width;
      for (let k = 0; k < this.width; k++) {
        const v = this.data[at + k];
        row[k] = Number.isNaN(v) ? null : v;
      }
      row[0] = (row[0] as number) - shiftNs;
      row[1] = (row[1] as number) - shiftNs;
      write(row, i);
    }
  }
}
