import { forEachNvtxRangeMatching, type NvtxRangeVisitor } from '../load/iterationRangeReads.js';
import type { LoadedExport } from '../load/loadedExport.js';
import { domainKey, nvtxDomains } from '../load/nvtxReads.js';
import type { LabelCounts } from './rangeSpec.js';
import type { IterationSource } from './source.js';

/** One NVTX range that marks an iteration, before numbering. */
export interface IterationRange {
  pid: number;
  tid: number;
  startNs: number;
  /** The range's own end (null: never closed). */
  rangeEndNs: number | null;
  text: string;
  /** Text of a span inside the range that describes the step (SGLang's `step[...]` inside `scheduler.run_batch`). */
  detail?: string;
  domain: string | null;
  /** Batch composition parsed from the text by the source (`IterationSource.parseLabel`); null when it carries none. */
  label: LabelCounts | null;
  /** Iteration number carried by the text: the PyTorch label's, or a `/regex/`'s first capture group. */
  number: number | null;
}

export interface FoundIterationRanges {
  /** The source whose ranges these are. */
  source: IterationSource;
  /** Per process: the ranges of its executor thread (the thread with the most matches), by start. */
  byPid: Map<number, IterationRange[]>;
  /** Matches on other threads of the same process, left out. */
  ignoredOtherThreads: number;
  /** Matching ranges left out for unusable times (NULL/text/end < start/beyond 2^53). */
  invalidRanges?: number;
  /**
   * Per process: the other ranges the source's `numberSteps` reads beside the steps (SGLang: the
   * scheduler's other ranges), found with them so the NVTX table is read in one place.
   */
  otherRanges?: Map<number, IterationRange[]>;
  /**
   * Markers of the source's family whose text did not parse (no batch) or parsed in part, for a
   * source whose labels carry the batch (`IterationSource.labelsExpected`); absent when none.
   */
  unparsedLabels?: UnparsedLabels;
}

/** Markers read as steps whose text was not (fully) understood, and the first one's text. */
export interface UnparsedLabels {
  /** Texts that gave no batch at all. */
  unparsed: number;
  /** Texts whose batch was read in part (the rest left null). */
  partial: number;
  example: string;
}

/** Counts the labels `collectRanges` could not read whole; undefined when every one parsed. */
function unparsedLabelsOf(ranges: readonly IterationRange[]): UnparsedLabels | undefined {
  let unparsed = 0;
  let partial = 0;
  let example: string | undefined;
  for (const r of ranges) {
    if (r.label && !r.label.partial) continue;
    if (r.label) partial++;
    else unparsed++;
    example ??= r.text;
  }
  return example === undefined ? undefined : { unparsed, partial, example };
}

/**
 * All NVTX ranges whose resolved text satisfies `match`, grouped per process (executor thread),
 * labelled by `source.parseLabel` and numbered by `numberOf` (default: the label's own number).
 * The one helper every source finds its ranges with; the SQL is in queries/iterationRanges.ts.
 */
export function collectRanges(
  loaded: LoadedExport,
  source: IterationSource,
  match: (text: string) => boolean,
  numberOf: (text: string, label: LabelCounts | null) => number | null = (_t, label) => label?.iter ?? null,
): FoundIterationRanges {
  const all: IterationRange[] = [];
  let domains: ReadonlyMap<number, string> | undefined;
  const visit: NvtxRangeVisitor = (start, end, pid, tid, domainId, text) => {
    const label = source.parseLabel(text);
    domains ??= nvtxDomains(loaded);
    all.push({
      pid,
      tid,
      startNs: start,
      rangeEndNs: end,
      text,
      domain: domains.get(domainKey(domainId, pid)) ?? null,
      label,
      number: numberOf(text, label),
    });
  };
  const { matched, invalid } = forEachNvtxRangeMatching(loaded, match, visit);
  if (!matched) return { source, byPid: new Map(), ignoredOtherThreads: 0 };
  const { byPid, ignoredOtherThreads } = executorThreadPerProcess(all);
  const unparsedLabels = source.labelsExpected ? unparsedLabelsOf([...byPid.values()].flat()) : undefined;
  return { source, byPid, ignoredOtherThreads, invalidRanges: invalid, ...(unparsedLabels ? { unparsedLabels } : {}) };
}

/** Per process, keeps the thread with the most matches: the executor loop. */
function executorThreadPerProcess(all: IterationRange[]): { byPid: Map<number, IterationRange[]>; ignoredOtherThreads: number } {
  const perThread = new Map<string, IterationRange[]>();
  for (const r of all) {
    const k = `${r.pid}:${r.tid}`;
    const list = perThread.get(k) ?? [];
    list.push(r);
    perThread.set(k, list);
  }
  const byPid = new Map<number, IterationRange[]>();
  let ignored = 0;
  for (const list of perThread.values()) {
    const pid = list[0].pid;
    const cur = byPid.get(pid);
    if (!cur) byPid.set(pid, list);
    else if (list.length > cur.length) {
      ignored += cur.length;
      byPid.set(pid, list);
    } else ignored += list.length;
  }
  return { byPid, ignoredOtherThreads: ignored };
}
