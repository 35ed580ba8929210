import { readFileSync } from 'node:fs';
import { InputError } from '../errors.js';
import { withExport } from '../export/openExport.js';
import type { IterationOptions } from '../iterations/analyze.js';
import { SUMMARY_SCHEMA, type RunSummary } from '../summary/runSummary.js';
import { summarizeExportWithFindings } from '../findings/summarizeWithFindings.js';

/** A summary.json written by `iterscope summarize` (checked for its schema tag). */
export function readSummaryFile(path: string): RunSummary {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new InputError('E_LOG', path, `not a readable iterscope summary JSON: ${(err as Error).message.split('\n')[0]}`);
  }
  const schema = (json as { schema?: unknown })?.schema;
  if (typeof schema !== 'string' || !schema.startsWith('iterscope.summary/')) throw new InputError('E_LOG', path, 'JSON without an iterscope summary schema tag');
  if (schema !== SUMMARY_SCHEMA) throw new InputError('E_LOG', path, `summary schema ${schema} is not supported (this iterscope reads ${SUMMARY_SCHEMA})`);
  return json as RunSummary;
}

/** `compare`'s inputs: a summary.json, or an export summarised on the fly (with its findings). */
export function loadRun(path: string, opts: IterationOptions = {}): RunSummary {
  if (/\.json$/i.test(path)) return readSummaryFile(path);
  return withExport(path, (h) => summarizeExportWithFindings(h, opts));
}
