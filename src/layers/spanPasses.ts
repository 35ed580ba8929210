import type { LayerSpan, StepLayers } from './types.js';

/** A layer span with which pass of its layer it is in the step (1 for the first; 0 outside layers). */
export interface NumberedSpan extends LayerSpan {
  pass: number;
}

/**
 * A step's layer spans (`StepLayers.spans`, launch order) numbered by pass: the k-th span of a layer
 * in the step is its pass k (a prefill of k requests one after the other runs each layer k times).
 * What `trace --layers` and the HTML step timeline both draw; empty when the spans were not asked for.
 */
export function numberedSpans(step: StepLayers): NumberedSpan[] {
  const seen = new Map<number, number>();
  return (step.spans ?? []).map((span) => {
    if (span.layer === null) return { ...span, pass: 0 };
    const pass = (seen.get(span.layer) ?? 0) + 1;
    seen.set(span.layer, pass);
    return { ...span, pass };
  });
}
