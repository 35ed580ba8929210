import type { IterationRangeSpec } from '../rangeSpec.js';
import type { IterationSource } from '../source.js';
import { collectRanges } from '../windows.js';

/** The user's `--iteration-range NAME` or `--iteration-range /regex/`: any engine, counts unknown. */
export function nvtxRangeSource(spec: Extract<IterationRangeSpec, { kind: 'name' | 'regex' }>): IterationSource & { readonly spec: typeof spec } {
  const match = spec.kind === 'regex' ? (t: string) => spec.regex.test(t) : (t: string) => t === spec.name;
  return {
    id: 'nvtx-range',
    engine: 'unknown',
    profileRangeSemantics: 'closed',
    spec,
    findRanges(loaded) {
      return collectRanges(loaded, this, match, (t) => numberFromRegex(spec, t));
    },
    parseLabel: () => null,
  };
}

/** `--iteration-range '/step (\\d+)/'`: the first capture group, when it is an integer, numbers the range. */
function numberFromRegex(spec: IterationRangeSpec, text: string): number | null {
  if (spec.kind !== 'regex') return null;
  const m = spec.regex.exec(text);
  return m && m[1] !== undefined && /^\d+$/.test(m[1]) ? Number(m[1]) : null;
}

/** What the user asked for, for messages. */
export function describeSpec(spec: IterationRangeSpec): string {
  return spec.kind === 'regex' ? spec.source : spec.kind === 'pytorch' ? '[Executor] _forward_step' : spec.name;
}
