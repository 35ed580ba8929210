import type { IterationRow } from './types.js';

/** `1 ctx (768 tok), 15 gen` from the joined log record (else the step's label); null when unknown. */
export function batchComposition(row: Pick<IterationRow, 'contextRequests' | 'contextTokens' | 'generationRequests'>): string | null {
  const { contextRequests: ctx, contextTokens: tok, generationRequests: gen } = row;
  if (ctx == null && gen == null) return null;
  const parts: string[] = [];
  if (ctx != null) parts.push(`${ctx} ctx${ctx > 0 && tok != null ? ` (${tok} tok)` : ''}`);
  if (gen != null) parts.push(`${gen} gen`);
  return parts.join(', ');
}

/** `iter 103`, or `capture step 3` when the engine gave no number (`captureOrder`). */
export function iterationLabel(row: Pick<IterationRow, 'iter' | 'captureOrder'>): string {
  return row.captureOrder ? `capture step ${row.iter}` : `iter ${row.iter}`;
}

/**
 * An iteration named by its batch: `iter 103: 1 ctx (768 tok), 15 gen`; without counts, the phase
 * and what told it (`capture step 3: generation (from launches)`); else the bare label.
 */
export function iterationName(row: Pick<IterationRow, 'iter' | 'captureOrder' | 'contextRequests' | 'contextTokens' | 'generationRequests' | 'phase' | 'phaseBasis'>): string {
  const batch = batchComposition(row) ?? (row.phaseBasis ? `${row.phase} (from ${row.phaseBasis === 'launches' ? 'launches' : 'step span'})` : null);
  return batch ? `${iterationLabel(row)}: ${batch}` : iterationLabel(row);
}
