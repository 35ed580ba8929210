import { duplicateIters } from '../logs/parse.js';
import type { IterationLogRecord, LogFormat, ParsedIterationLog } from '../logs/logRecords.js';
import { counterShift, type CounterShift } from './numbering.js';
import type { LabelCounts } from './rangeSpec.js';
import type { FoundIterationRanges } from './source.js';

/**
 * The formats whose counter servers printed before or after the increment, depending on the
 * version (vLLM's steps carry no loop number to shift: `alignToLog` places them).
 */
const COUNTER_FORMATS: ReadonlySet<LogFormat> = new Set<LogFormat>(['legacy-json', 'triton-stats-json', 'iteration-stats-json', 'iteration-stats-pyrepr', 'pytorch-text']);

/** Iteration number → batch composition, of the numbered ranges whose label carries one. */
function labelsByNumber(found: FoundIterationRanges): Map<number, LabelCounts> {
  const labels = new Map<number, LabelCounts>();
  for (const ranges of found.byPid.values()) {
    for (const r of ranges) if (r.number != null && r.label && !labels.has(r.number)) labels.set(r.number, r.label);
  }
  return labels;
}

/** `K`, `K-1`, `K+1`: how a printed counter K is read. */
const reading = (offset: number) => (offset === 0 ? 'K' : `K${offset > 0 ? '+' : ''}${offset}`);

/** One sentence on the offset used for one format of one log, or null when there is nothing to say. */
function shiftNote(file: string, format: LogFormat, sample: IterationLogRecord, s: CounterShift): string | null {
  const documented = sample.iter - sample.sourceIter;
  const used = documented + s.shift;
  const head = `${file} (${format}): counter K read as iteration ${reading(used)}`;
  if (s.basis === 'labels') {
    return `${head}, not ${reading(documented)} as documented: the batch compositions of the NVTX labels agree with ${s.agree} of ${s.compared} records there, ${s.agreeAtDefault} at ${reading(documented)}`;
  }
  if (s.basis === 'zero-counter') return `${head}, not ${reading(documented)} as documented: the log prints a counter of 0, so it counts before the increment`;
  return s.compared ? `${head}, as documented; the batch compositions of the NVTX labels agree with ${s.agree} of ${s.compared} records there` : null;
}

/**
 * Puts each log's records on the loops they describe (`counterShift`, per log and format), and
 * says which offset was used and why. Logs that need no shift are returned as they are.
 */
export function alignLogCounters(found: FoundIterationRanges, logs: readonly ParsedIterationLog[]): { logs: ParsedIterationLog[]; notes: string[] } {
  const labels = labelsByNumber(found);
  const notes: string[] = [];
  const aligned = logs.map((log) => {
    let records = log.records;
    for (const format of Object.keys(log.formats) as LogFormat[]) {
      if (!COUNTER_FORMATS.has(format)) continue;
      const group = records.filter((r) => r.format === format);
      const s = counterShift(labels, group);
      const note = group.length ? shiftNote(log.file, format, group[0], s) : null;
      if (note) notes.push(note);
      if (s.shift) records = records.map((r) => (r.format === format ? { ...r, iter: r.iter + s.shift } : r));
    }
    return records === log.records ? log : { ...log, records, duplicateIters: duplicateIters(records) };
  });
  return { logs: aligned, notes };
}
