import { closeSync, openSync, readSync, statSync } from 'node:fs';

/** What an input file holds, decided by its content (the extension only names an `.nsys-rep`). */
export type InputKind = 'nsys-export' | 'kineto-trace' | 'nsys-report';

const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1');

function head(path: string, n: number): Buffer {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(n);
    return buf.subarray(0, readSync(fd, buf, 0, n, 0));
  } finally {
    closeSync(fd);
  }
}

/** The first `n` non-whitespace bytes after an optional UTF-8 BOM. */
function significantBytes(b: Buffer, n: number): number[] {
  const out: number[] = [];
  for (let i = b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf ? 3 : 0; i < b.length && out.length < n; i++) {
    const c = b[i];
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) out.push(c);
  }
  return out;
}

/**
 * SQLite magic -> an nsys export; gzip magic or JSON (`{`, or `[{`, optionally after a BOM and
 * whitespace) -> a PyTorch profiler (Kineto) trace, whose content the streaming reader checks;
 * `.nsys-rep` / `.qdrep` that is not SQLite -> an Nsight Systems report. Anything else, and paths
 * that cannot be read, go to the export opener, which says what is wrong with them.
 */
export function detectInput(path: string): InputKind {
  let b: Buffer;
  try {
    if (!statSync(path).isFile()) return 'nsys-export';
    b = head(path, 4096);
  } catch {
    return 'nsys-export';
  }
  if (b.length >= SQLITE_MAGIC.length && b.subarray(0, SQLITE_MAGIC.length).equals(SQLITE_MAGIC)) return 'nsys-export';
  if (/\.(nsys-rep|qdrep)$/i.test(path)) return 'nsys-report';
  if (b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b) return 'kineto-trace';
  const [first, second] = significantBytes(b, 2);
  // A JSON object; or an array of objects (the other Chrome-trace form), so its error names the trace.
  if (first === 0x7b /* { */ || (first === 0x5b /* [ */ && second === 0x7b)) return 'kineto-trace';
  return 'nsys-export';
}
