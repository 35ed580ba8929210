/**
 * What a conversion read, left out or read differently, counted while the trace streams by and
 * said once at the end: one note per kind of event (the conversion's notes end up in the converted
 * export's META_DATA_EXPORT, where every command's notes pick them up).
 */

/** `META_DATA_EXPORT` names of the conversion's notes: `KINETO_NOTE_1`, `KINETO_NOTE_2`, ... */
export const KINETO_NOTE_PREFIX = 'KINETO_NOTE_';

/**
 * `META_DATA_EXPORT` name of the tables a partial conversion wrote (`kernels` converts only the
 * kernels), comma-separated; absent when the whole trace was converted. An empty table of the
 * converted export then means "not read", not "none in the trace".
 */
export const KINETO_TABLES_READ = 'KINETO_TABLES_READ';

/** Counted kinds of events, each with the sentence that says what was done with them. */
const SENTENCES = {
  flow: (n: number) => `${n} flow events (ph s/f: ac2g launch-to-kernel arrows) not used: kernels join their launch calls by correlation id, so a flow that points nowhere changes nothing`,
  counter: (n: number) => `${n} counter events (ph C, e.g. HTA's Queue Length or Memcpy BW, whose values may be negative) not read: derived values, not activity`,
  instant: (n: number) => `${n} instant events (ph i) not read`,
  noTs: (n: number) => `${n} events without a numeric ts skipped`,
  noThread: (n: number) => `${n} CPU-side events without a numeric pid/tid skipped (no thread to put them on)`,
  noDur: (n: number) => `${n} complete events without a numeric dur read as 0 ns long`,
  zeroDurGpu: (n: number) => `${n} GPU activities with dur 0 kept as 0 ns long`,
  deviceFromPid: (n: number) => `${n} GPU activities without args.device: device taken from their pid (Kineto files GPU N's activity under pid N)`,
  streamFromTid: (n: number) => `${n} GPU activities without args.stream: stream taken from their tid ("stream 7" or 7)`,
  correlationFromExternalId: (n: number) =>
    `${n} CUDA/HIP API calls and GPU activities carry no correlation id: their External id (the id of their ac2g flow, as ROCm traces write it) joins them instead`,
} as const;

export type CountedKind = keyof typeof SENTENCES;

/** What is counted of the GPU rows themselves: complete however many other events went unparsed. */
const GPU_ROW_KINDS: ReadonlySet<CountedKind> = new Set<CountedKind>(['noDur', 'zeroDurGpu', 'deviceFromPid', 'streamFromTid', 'correlationFromExternalId']);

export class TraceNotes {
  private readonly counts = new Map<CountedKind, number>();
  /** Events of categories not converted (or not Kineto's), by category as written. */
  readonly notConverted = new Map<string, number>();
  /** Phases other than X, M, C, s/f/t, i. */
  readonly otherPhases = new Map<string, number>();
  /** Events whose category is one of Kineto's (converted or not): what makes it a Kineto trace. */
  recognised = 0;

  count(kind: CountedKind): void {
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1);
  }

  notConvertedCategory(cat: string): void {
    this.notConverted.set(cat, (this.notConverted.get(cat) ?? 0) + 1);
  }

  otherPhase(ph: string): void {
    this.otherPhases.set(ph, (this.otherPhases.get(ph) ?? 0) + 1);
  }

  /** Every count as `{ what: n }` (the conversion summary's `skipped`). */
  tally(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [k, n] of this.counts) out[k] = n;
    for (const [c, n] of this.notConverted) out[`cat:${c}`] = n;
    for (const [p, n] of this.otherPhases) out[`ph:${p}`] = n;
    return out;
  }

  /**
   * One sentence per kind counted. `readAll` false (a GPU-only conversion left events unparsed):
   * only the counts of the GPU rows, the others being counts of the few events read.
   */
  sentences(readAll = true): string[] {
    const out: string[] = [];
    for (const [kind, n] of this.counts) if (readAll || GPU_ROW_KINDS.has(kind)) out.push(SENTENCES[kind](n));
    if (!readAll) return out;
    if (this.notConverted.size) {
      const list = [...this.notConverted].sort((a, b) => b[1] - a[1]).map(([c, n]) => `${c || '(no cat)'} ${n}`);
      out.push(`events of categories not converted (not GPU activity, API calls, aten ops or annotations): ${list.join(', ')}`);
    }
    if (this.otherPhases.size) out.push(`events of other phases not read: ${[...this.otherPhases].map(([p, n]) => `ph ${p} ${n}`).join(', ')}`);
    return out;
  }
}
