import { abortOutput, commitOutput, openOutput, writeAll, type OutputTarget } from '../outputFile.js';

/** Bytes of JSON text buffered before a write. */
const CHUNK_BYTES = 1 << 20;

/**
 * Writes a trace-event file incrementally: `{"traceEvents":[` + one event per line +
 * `],"otherData":{...}}`. Events are encoded into one reused ~1 MB buffer and written with
 * `writeSync`, so memory stays flat however many events there are: each event's text dies young
 * (a growing string of concatenated events would keep thousands alive into the old generation).
 * The file is written beside the target and renamed over it by `close()`; `abort()` removes only
 * that partial file, never the target.
 *
 * Only keys Perfetto's JSON tokenizer knows are written, events first: it stops reading at a key
 * it does not know, so `otherData` (the generator's notes, which can then include final counts)
 * goes last, where even a reader that skips it has already read every event.
 */
export class TraceFileWriter {
  private out: OutputTarget | null;
  private buf = Buffer.allocUnsafe(CHUNK_BYTES);
  /** Bytes of `buf` in use. */
  private used = 0;
  private first = true;
  /** Bytes written to the file so far. */
  private written = 0;
  events = 0;

  constructor(readonly path: string) {
    this.out = openOutput(path);
    this.append('{"traceEvents":[\n');
  }

  /** Appends one event (a JSON object as text). */
  event(json: string): void {
    if (this.first) this.first = false;
    else this.append(',\n');
    this.append(json);
    this.events++;
  }

  /** Encodes `text` into the buffer, writing the buffer out first when it might not fit. */
  private append(text: string): void {
    // At most 3 UTF-8 bytes per UTF-16 unit (a surrogate pair is 2 units, 4 bytes).
    const most = text.length * 3;
    if (this.used + most > this.buf.length) {
      this.flush();
      if (most > this.buf.length) {
        this.writeBytes(Buffer.from(text, 'utf8'));
        return;
      }
    }
    this.used += this.buf.write(text, this.used, 'utf8');
  }

  private flush(): void {
    if (this.used === 0) return;
    this.writeBytes(this.buf.subarray(0, this.used));
    this.used = 0;
  }

  private writeBytes(bytes: Buffer): void {
    if (this.out === null) return;
    writeAll(this.out, bytes);
    this.written += bytes.length;
  }

  /** Bytes written to the file so far (after `close`: its size). */
  get bytes(): number {
    return this.written;
  }

  /** Ends the array, adds `otherData`, ends the object, closes the file and puts it in place. */
  close(otherData: Record<string, unknown> = {}): void {
    if (this.out === null) return;
    this.append(`\n],\n"otherData":${JSON.stringify(otherData)}}\n`);
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
