import { UsageError } from './errors.js';

/**
 * `value` as a non-negative integer, or a UsageError naming the option. Here rather than in the
 * CLI because analyses that run in worker threads check the options they are handed too.
 */
export function parseNonNegativeInt(value: string, option: string): number {
  const v = value.trim();
  if (!/^\d+$/.test(v)) throw new UsageError(`${option} expects a non-negative integer (got '${value}')`);
  return Number(v);
}
