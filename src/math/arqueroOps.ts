import * as aq from 'arquero';
import { percentile } from './percentile.js';

/**
 * The arquero the small tables (per iteration, per phase, per rank, compare) are built with, with
 * iterscope's own aggregates registered once per module instance (so once per worker thread).
 * Import `aq` and `op` from here, not from 'arquero', so the aggregates exist wherever they are used.
 *
 * - `op.percentile(field, p)`: the nearest-rank percentile of `percentile` (p in 0..100), not
 *   arquero's interpolating `quantile`: summaries keep the numbers they always printed.
 *
 * Sums: arquero's `op.sum` adds in row order from 0, as `values.reduce((a, b) => a + b, 0)` does,
 * so a mean written `op.sum(x) / op.count()` is bit-identical to the plain loop (`op.mean` is a
 * running mean and is not).
 */
aq.addAggregateFunction('percentile', {
  create: (p: number) => ({
    init: () => {},
    add: () => {},
    rem: () => {},
    // `list` holds the group's valid values (required below: array_agg).
    value: (state: object) => percentile((state as { list: { values(): number[] } }).list.values(), p),
  }),
  param: [1, 1],
  req: ['array_agg'],
});

/**
 * arquero's `op`, typed as table expressions use it (`count()` is a number there, not an `Op`),
 * with the registered aggregates.
 */
export const op = aq.op as unknown as Omit<typeof aq.op, 'count'> & { count(): number; percentile(field: unknown, p: number): number };

export { aq };

/** A JS string literal naming a column in a string table expression (`d[${column('gemm')}]`). */
export const column = (name: string): string => JSON.stringify(name);
