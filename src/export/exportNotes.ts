import type { ExportHandle } from '../../queries/handle.js';
import { GPU_OP_SOURCES } from '../../queries/gpuOps.js';
import { soleApiProcessPid } from '../../queries/globalIds.js';
import { KINETO_NOTE_PREFIX } from '../kineto/trace/traceNotes.js';
import { optionalColumnNotes } from './contract.js';

/**
 * What the input itself makes every analysis of it read differently, one sentence each: a
 * PyTorch profiler trace's conversion notes (kept in its META_DATA_EXPORT), and a required column
 * the export lacks but the analyses could assume (contract.ts `assumable`), and optional columns it
 * lacks (contract.ts `OPTIONAL_COLUMNS`). Said once per input,
 * where excluded rows are (`flushExcludedRowNotes`).
 */
export function exportNotes(handle: ExportHandle): string[] {
  const notes: string[] = [];
  for (const [name, value] of handle.metadata.values) {
    if (name.startsWith(KINETO_NOTE_PREFIX) && value) notes.push(`${handle.path}: PyTorch profiler trace: ${value}`);
  }
  const lacking = GPU_OP_SOURCES.filter((s) => handle.hasTable(s.table) && !handle.hasColumn(s.table, 'globalPid')).map((s) => s.table);
  if (lacking.length) {
    const pid = soleApiProcessPid(handle);
    notes.push(
      `${handle.path}: ${lacking.join(', ')} ${lacking.length > 1 ? 'have' : 'has'} no globalPid column (an older or minimal export): ` +
        (pid === null
          ? 'no process called the CUDA API, so its rows join no launch call'
          : `one process (pid ${pid}) called the CUDA API, so its rows are taken as that process's and joined to their launch calls by correlation id alone`),
    );
  }
  notes.push(...optionalColumnNotes(handle));
  return notes;
}
