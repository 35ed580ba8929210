import { columnMaker } from '../../columns/typedColumn.js';

/** One aten op's values, written once its nesting is known (`insert` runs per op). */
export type CpuOpRowWriter = (rowid: number, start: number, end: number, globalTid: number, nameId: number, externalId: number | null, depth: number, parentRowid: number | null, selfNs: number) => void;

/**
 * The aten ops of a trace, held in typed columns while the trace is read (times as read, before
 * the session-start shift), then nested and written in one pass: per thread, ops sorted by start
 * (longest first on ties) nest as a stack; a partial overlap is a sibling. Written in that order
 * (rowid = position + 1), so each op's parent is an earlier row.
 */
export class CpuOps {
  private readonly column = columnMaker(4096);
  private readonly start = this.column(Float64Array);
  private readonly end = this.column(Float64Array);
  private readonly gtid = this.column(Float64Array);
  private readonly nameId = this.column(Int32Array);
  /** NaN: no External id. */
  private readonly externalId = this.column(Float64Array);
  count = 0;

  add(start: number, end: number, globalTid: number, nameId: number, externalId: number | null): void {
    const n = this.count;
    this.start.ensure(n + 1);
    this.end.ensure(n + 1);
    this.gtid.ensure(n + 1);
    this.nameId.ensure(n + 1);
    this.externalId.ensure(n + 1);
    this.start.data[n] = start;
    this.end.data[n] = end;
    this.gtid.data[n] = globalTid;
    this.nameId.data[n] = nameId;
    this.externalId.data[n] = externalId ?? NaN;
    this.count = n + 1;
  }

  /** Nests the ops and hands each to `write` in nesting order, times minus `shiftNs`. */
  writeNested(shiftNs: number, write: CpuOpRowWriter): void {
    const n = this.count;
    const start = this.start.data;
    const end = this.end.data;
    const gtid = this.gtid.data;
    const order = new Int32Array(n);
    for (let i = 0; i < n; i++) order[i] = i;
    order.sort((a, b) => gtid[a] - gtid[b] || start[a] - start[b] || end[b] - end[a]);
    const childNs = new Float64Array(n);
    const depth = new Int32Array(n);
    const parent = new Int32Array(n).fill(-1);
    const stack: number[] = [];
    for (let k = 0; k < n; k++) {
      const i = order[k];
      while (stack.length && (gtid[order[stack[stack.length - 1]]] !== gtid[i] || end[order[stack[stack.length - 1]]] <= start[i])) stack.pop();
      while (stack.length && end[i] > end[order[stack[stack.length - 1]]]) stack.pop();
      if (stack.length) {
        const p = stack[stack.length - 1];
        parent[k] = p;
        depth[k] = depth[p] + 1;
        childNs[p] += end[i] - start[i];
      }
      stack.push(k);
    }
    for (let k = 0; k < n; k++) {
      const i = order[k];
      const ext = this.externalId.data[i];
      write(k + 1, start[i] - shiftNs, end[i] - shiftNs, gtid[i], this.nameId.data[i], Number.isNaN(ext) ? null : ext, depth[k], parent[k] >= 0 ? parent[k] + 1 : null, end[i] - start[i] - childNs[k]);
    }
  }
}
