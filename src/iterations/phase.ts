/**
 * An iteration's batch phase, from its request counts (a leaf: the iteration sources and every
 * analysis import it).
 */

/**
 * Batch phase of an iteration, from its context and generation request counts; `speculative`: a
 * speculative-decoding verify step (SGLang's TARGET_VERIFY), never counted as generation.
 */
export type Phase = 'context' | 'mixed' | 'generation' | 'speculative' | 'empty' | 'unknown';

export const PHASES: readonly Phase[] = ['context', 'mixed', 'generation', 'speculative', 'empty', 'unknown'];

export function phaseOf(ctx: number | null, gen: number | null): Phase {
  if (ctx == null || gen == null) return 'unknown';
  if (ctx > 0 && gen > 0) return 'mixed';
  if (ctx > 0) return 'context';
  if (gen > 0) return 'generation';
  return 'empty';
}
