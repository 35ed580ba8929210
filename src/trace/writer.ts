import { abortOutput, commitOutput, openOutput, writeAll, type OutputTarget } from '../outputFile.js';

/** Bytes of JSON text buffered before a write (strings are UTF-16, so this is a character count). */
const CHUNK_CHARS = 1 << 20;

/**
 * Writes a trace-event file incrementally: `{"traceEvents":[` + one event per line +
 * `],"otherData":{...}}`. Events are buffered into ~1 MB chunks and written with `writeSync`, so
 * memory stays flat however many events there are. The file is written beside the target and
 * renamed over it by `close()`; `abort()` removes only that partial file, never the target.
 *
 * Only keys Perfetto's JSON tokenizer knows are written, events first: it stops reading at a key
 * it does not know, so `otherData` (the generator's notes, which can then include final counts)
 * goes last, where even a reader that skips it has already read every event.
 */
export class TraceFileWriter {
  private out: OutputTarget | null;
  private buf = '';
  private first = true;
  /** Characters written so far (= bytes for ASCII; see `bytes`). */
  private written = 0;
  events = 0;

  constructor(readonly path: string) {
    this.out = openOutput(path);
    this.buf = '{"traceEvents":[\n';
  }

  /** Appends one event (a JSON object as text). */
  event(json: string): void {
    if (this.first) this.first = false;
    else this.buf += ',\n';
    this.buf += json;
    this.events++;
    if (this.buf.length >= CHUNK_CHARS) this.flush();
  }

  private flush(): void {
    if (this.out === null || this.buf.length === 0) return;
    const b = Buffer.from(this.buf, 'utf8');
    writeAll(this.out, b);
    this.written += b.length;
    this.buf = '';
  }

  /** Bytes written to the file so far (after `close`: its size). */
  get bytes(): number {
    return this.written;
  }

  /** Ends the array, adds `otherData`, ends the object, closes the file and puts it in place. */
  close(otherData: Record<string, unknown> = {}): void {
    if (this.out === null) return;
    this.buf += `\n],\n"otherData":${JSON.stringify(otherData)}}\n`;
    this.flush();
    const out = this.out;
    this.out = null;
    commitOutput(out);
  }

  /** Closes and deletes the partial file (after an error); the target is left as it was. */
  abort(): void {
    if (this.out === null) return;
    const out = this.out;
    this.out = null;
    abortOutput(out);
  }
}
