import { EmptyCaptureError, InputError } from '../errors.js';
import { readOptionFile } from '../optionFile.js';
import { validateSummary } from './validateSummary.js';

/** Summaries are a few hundred kB; a file far above that is not one. */
export const MAX_SUMMARY_FILE_BYTES = 64 * 1024 * 1024;
import { withExport } from '../export/openExport.js';
import type { AnalysisRequest } from '../pipeline/request.js';
import { summarizeExport, SUMMARY_SCHEMA, type RunSummary, type SummaryTokens } from './runSummary.js';

/** A token count given for a summary's run (`--base-tokens`): its span's figures per those tokens. */
function withTokens(s: RunSummary, tokens: SummaryTokens | null): RunSummary {
  if (!tokens || !s.gate.span) return s;
  return { ...s, gate: { ...s.gate, span: { ...s.gate.span, generatedTokens: tokens.count, tokenSource: tokens.source } } };
}

/** Why a summary of another schema version cannot be read, and what to do. */
function schemaMismatch(schema: string): string {
  const version = (v: string) => Number(/\/(\d+)$/.exec(v)?.[1] ?? NaN);
  const theirs = version(schema);
  if (theirs < version(SUMMARY_SCHEMA)) return `summary schema ${schema} was written by an older iterscope and holds no samples for the gate's statistics; summarize the baseline again with this iterscope (it writes ${SUMMARY_SCHEMA})`;
  if (theirs > version(SUMMARY_SCHEMA)) return `summary schema ${schema} was written by a newer iterscope; this one reads ${SUMMARY_SCHEMA}: upgrade iterscope`;
  return `summary schema ${schema} is not supported (this iterscope reads ${SUMMARY_SCHEMA})`;
}

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
  if (schema !== SUMMARY_SCHEMA) throw new InputError('E_LOG', path, schemaMismatch(schema));
  validateSummary(json, path);
  return json as RunSummary;
}

/** `compare`'s inputs: a summary.json, or an export summarised on the fly. */
export function loadRun(path: string, request: Omit<AnalysisRequest, 'parts'> = {}, tokens: SummaryTokens | null = null): RunSummary {
  if (/\.json$/i.test(path)) return withTokens(readSummaryFile(path), tokens);
  try {
    return withExport(path, (h) => summarizeExport(h, request, tokens));
  } catch (err) {
    throw err instanceof EmptyCaptureError ? err.withConsequence('nothing to compare') : err;
  }
}
