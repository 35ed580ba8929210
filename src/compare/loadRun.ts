import { EmptyCaptureError, InputError } from '../errors.js';
import { readOptionFile } from '../optionFile.js';
import { validateSummary } from './validateSummary.js';

/** Summaries are a few hundred kB; a file far above that is not one. */
export const MAX_SUMMARY_FILE_BYTES = 64 * 1024 * 1024;
import { withExport } from '../export/openExport.js';
import type { AnalysisRequest } from '../pipeline/request.js';
import { summarizeExport, SUMMARY_SCHEMA, type RunSummary } from '../summary/runSummary.js';

/** A summary.json written by `iterscope summarize` (checked for its schema tag). */
export function readSummaryFile(path: string): RunSummary {
  const text = readOptionFile(path, 'summary file', MAX_SUMMARY_FILE_BYTES);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new InputError('E_LOG', path, `not a readable iterscope summary JSON: ${(err as Error).message.split('\n')[0]}`);
  }
  const schema = (json as { schema?: unknown })?.schema;
  if (typeof schema !== 'string' || !schema.startsWith('iterscope.summary/')) throw new InputError('E_LOG', path, 'JSON without an iterscope summary schema tag');
  if (schema !== SUMMARY_SCHEMA) throw new InputError('E_LOG', path, `summary schema ${schema} is not supported (this iterscope reads ${SUMMARY_SCHEMA})`);
  validateSummary(json, path);
  return json as RunSummary;
}

/** `compare`'s inputs: a summary.json, or an export summarised on the fly. */
export function loadRun(path: string, request: Omit<AnalysisRequest, 'parts'> = {}): RunSummary {
  if (/\.json$/i.test(path)) return readSummaryFile(path);
  try {
    return withExport(path, (h) => summarizeExport(h, request));
  } catch (err) {
    throw err instanceof EmptyCaptureError ? err.withConsequence('nothing to compare') : err;
  }
}
