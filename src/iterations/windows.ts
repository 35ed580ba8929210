import { sql } from 'kysely';
import { isValidNvtxTimes, noteExcludedRows } from '../export/rowChecks.js';
import type { ExportHandle } from '../../queries/handle.js';
import { forEachRow } from '../../queries/run.js';
import { loadNvtxDomains } from '../analysis/nvtxSummary.js';
import { IterationError } from '../errors.js';
import { CPP_ITERATION_RANGES, parseForwardStepLabel, PYTORCH_FORWARD_STEP, type IterationRangeSpec, type LabelCounts } from './rangeSpec.js';
import { requireContract } from '../export/contract.js';

/** One NVTX range that marks an iteration, before numbering. */
export interface IterationRange {
  pid: number;
  tid: number;
  startNs: number;
  /** The range's own end (null: never closed). */
  rangeEndNs: number | null;
  text: string;
  domain: string | null;
  /** Counts from a PyTorch `_forward_step` label; null for other ranges. */
  label: LabelCounts | null;
  /** Iteration number carried by the text: the PyTorch label's, or a `/regex/`'s first capture group. */
  number: number | null;
}

export interface FoundIterationRanges {
  spec: IterationRangeSpec;
  /** Per process: the ranges of its executor thread (the thread with the most matches), by start. */
  byPid: Map<number, IterationRange[]>;
  /** Matches on other threads of the same process, left out. */
  ignoredOtherThreads: number;
  /** Matching ranges left out for unusable times (NULL/text/end < start/beyond 2^53). */
  invalidRanges?: number;
}

/** `--iteration-range '/step (\\d+)/'`: the first capture group, when it is an integer, numbers the range. */
function numberFromRegex(spec: IterationRangeSpec, text: string): number | null {
  if (spec.kind !== 'regex') return null;
  const m = spec.regex.exec(text);
  return m && m[1] !== undefined && /^\d+$/.test(m[1]) ? Number(m[1]) : null;
}

/** Text ids and plain texts of NVTX ranges whose text satisfies `match`. */
function matchingTexts(handle: ExportHandle, match: (text: string) => boolean): { ids: number[]; texts: string[] } {
  const ids: number[] = [];
  const texts: string[] = [];
  if (handle.hasTable('StringIds')) {
    forEachRow(handle, handle.db.selectFrom('StringIds').select(['id', 'value']), (id: number, value: string) => {
      if (match(value)) ids.push(id);
    });
  }
  forEachRow(
    handle,
    handle.db.selectFrom('NVTX_EVENTS').select('text').distinct().where('text', 'is not', null).where('eventType', 'in', [59, 60, 70, 71]),
    (text: string) => {
      if (match(text)) texts.push(text);
    },
  );
  return { ids, texts };
}

/** All NVTX ranges whose resolved text satisfies `match`, grouped per process (executor thread). */
function collectRanges(handle: ExportHandle, spec: IterationRangeSpec, match: (text: string) => boolean): FoundIterationRanges {
  const byPid = new Map<number, IterationRange[]>();
  if (!handle.hasTable('NVTX_EVENTS')) return { spec, byPid, ignoredOtherThreads: 0 };
  const { ids, texts } = matchingTexts(handle, match);
  if (ids.length === 0 && texts.length === 0) return { spec, byPid, ignoredOtherThreads: 0 };
  const strings = new Map<number, string>();
  if (ids.length) {
    forEachRow(
      handle,
      handle.db.selectFrom('StringIds').select(['id', 'value']).where(sql<boolean>`id IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`),
      (id: number, value: string) => strings.set(id, value),
    );
  }
  const domains = loadNvtxDomains(handle);
  const all: IterationRange[] = [];
  let invalidRanges = 0;
  forEachRow(
    handle,
    handle.db
      .selectFrom('NVTX_EVENTS')
      .select([
        'start',
        'end',
        sql<number>`(globalTid >> 24) & 16777215`.as('pid'),
        sql<number>`globalTid & 16777215`.as('tid'),
        'domainId',
        'textId',
        'text',
      ])
      .where('eventType', 'in', [59, 60, 70, 71])
      .where(
        sql<boolean>`(textId IN (SELECT value FROM json_each(${JSON.stringify(ids)})) OR text IN (SELECT value FROM json_each(${JSON.stringify(texts)})))`,
      )
      .orderBy('start'),
    (start: number, end: number | null, pid: number, tid: number, domainId: number | null, textId: number | null, text: string | null) => {
      const t = (textId != null ? strings.get(textId) : undefined) ?? text ?? '';
      if (!match(t)) return;
      // Few rows (the iteration ranges): checked here, excluded and counted (rowChecks.ts).
      if (!isValidNvtxTimes(start, end)) {
        invalidRanges++;
        return;
      }
      const label = spec.kind === 'pytorch' ? parseForwardStepLabel(t) : null;
      all.push({
        pid,
        tid,
        startNs: start,
        rangeEndNs: end,
        text: t,
        domain: domains.get((domainId ?? 0) * 16777216 + pid) ?? null,
        label,
        number: label ? label.iter : numberFromRegex(spec, t),
      });
    },
  );
  noteExcludedRows(handle, 'NVTX_EVENTS', invalidRanges);
  // Per process, keep the thread with the most matches: the executor loop.
  const perThread = new Map<string, IterationRange[]>();
  for (const r of all) {
    const k = `${r.pid}:${r.tid}`;
    const list = perThread.get(k) ?? [];
    list.push(r);
    perThread.set(k, list);
  }
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
  return { spec, byPid, ignoredOtherThreads: ignored, invalidRanges };
}

/** `: 12 matching ranges have unusable times` when matches were left out for their times. */
function unusable(found: { invalidRanges?: number }): string {
  const n = found.invalidRanges ?? 0;
  return n ? ` (${n} matching range${n > 1 ? 's have' : ' has'} a NULL, non-integer, end-before-start or beyond-2^53 time and ${n > 1 ? 'were' : 'was'} left out)` : '';
}

/**
 * Finds the NVTX ranges that mark executor iterations. With no spec: the PyTorch executor's
 * `[Executor] _forward_step ...` ranges, else the C++ runtime's `forwardAsync` ranges; neither
 * found is an error that says which option to pass.
 */
export function findIterationRanges(handle: ExportHandle, spec?: IterationRangeSpec): FoundIterationRanges {
  requireContract(handle, 'nvtx');
  if (spec) {
    const match =
      spec.kind === 'regex' ? (t: string) => spec.regex.test(t) : spec.kind === 'pytorch' ? (t: string) => PYTORCH_FORWARD_STEP.test(t) : (t: string) => t === spec.name;
    const found = collectRanges(handle, spec, match);
    if (found.byPid.size === 0) {
      const what = spec.kind === 'regex' ? spec.source : spec.kind === 'pytorch' ? '[Executor] _forward_step' : spec.name;
      throw new IterationError(`no NVTX ranges match --iteration-range ${what}${unusable(found)}`, handle.path);
    }
    return found;
  }
  const pytorch = collectRanges(handle, { kind: 'pytorch' }, (t) => PYTORCH_FORWARD_STEP.test(t));
  if (pytorch.byPid.size > 0) return pytorch;
  let invalid = pytorch.invalidRanges ?? 0;
  for (const name of CPP_ITERATION_RANGES) {
    const cpp = collectRanges(handle, { kind: 'cpp', name }, (t) => t === name);
    if (cpp.byPid.size > 0) return cpp;
    invalid += cpp.invalidRanges ?? 0;
  }
  throw new IterationError(
    handle.hasTable('NVTX_EVENTS')
      ? `no iteration ranges found${unusable({ invalidRanges: invalid })} (neither '[Executor] _forward_step ...' nor 'TrtGptModelInflightBatching::forwardAsync'); pass --iteration-range NAME or --iteration-range /regex/ naming the NVTX range that marks one iteration`
      : 'the export has no NVTX events, so iterations cannot be found; profile with `-t cuda,nvtx` (and TLLM_LLMAPI_ENABLE_NVTX=1 / an --nvtx build)',
    handle.path,
  );
}
