/**
 * Child-process entry of `convertKinetoTraceSync`: `node convertMain.js <trace.json[.gz]> <out.sqlite> [TABLE,TABLE,...]`.
 * Prints one JSON line on stdout: `{"ok": summary}` or `{"error": {"code", "message"}}`. The
 * progress bar goes to the inherited stderr (drawn only on a terminal).
 */
import { convertKinetoTrace } from './convert.js';
import { IterscopeError } from '../../errors.js';
import { progress, type Progress } from '../../progress.js';

const [input, output, tables] = process.argv.slice(2);
const MB = 1024 * 1024;
const shown: { bar: Progress | null } = { bar: null };
try {
  const summary = await convertKinetoTrace(input, output, {
    tables: tables ? tables.split(',') : undefined,
    onProgress: (done, total) => {
      shown.bar ??= progress('iterscope: reading PyTorch profiler trace', Math.max(1, Math.round(total / MB)), { unit: 'MB' });
      shown.bar.update(Math.round(done / MB));
    },
  });
  shown.bar?.done();
  process.stdout.write(`${JSON.stringify({ ok: summary })}\n`);
} catch (err) {
  shown.bar?.done();
  const typed = err instanceof IterscopeError;
  const message = typed ? (err.file && err.message.startsWith(`${err.file}: `) ? err.message.slice(err.file.length + 2) : err.message) : err instanceof Error ? err.message : String(err);
  process.stdout.write(`${JSON.stringify({ error: { code: typed ? err.code : 'E_INTERNAL', message } })}\n`);
}
