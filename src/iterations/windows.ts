import { forEachNvtxRangeMatching, type NvtxRangeVisitor } from '../load/iterationRangeReads.js';
import type { LoadedExport } from '../load/loadedExport.js';
import { domainKey } from '../load/domainKeys.js';
import { nvtxDomains } from '../load/nvtxReads.js';
import type { LabelCounts } from './rangeSpec.js';
import type { IterationSource } from './source.js';
import type { IterationRange, FoundIterationRanges, UnparsedLabels } from './source.js';

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
