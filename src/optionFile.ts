import { readFileSync, statSync } from 'node:fs';
import { UsageError } from './errors.js';

/**
 * Reads a file an option names and that is read whole (a `--categories` rules file, a summary
 * JSON): a regular file of at most `maxBytes`, checked with stat before reading, so `/dev/zero`,
 * a FIFO nobody writes to, a directory or a runaway file fail at once with one line instead of
 * reading forever. (Iteration logs are streamed and may be FIFOs: `--log <(zcat log.gz)`.)
 */
export function readOptionFile(path: string, what: string, maxBytes: number): string {
  let size: number;
  try {
    const st = statSync(path);
    if (!st.isFile()) throw new UsageError(`${path}: ${what} is not a regular file (${st.isDirectory() ? 'a directory' : 'a device, FIFO or socket'})`);
    size = st.size;
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`${path}: cannot read ${what}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  if (size > maxBytes) throw new UsageError(`${path}: ${what} is ${size} bytes; at most ${maxBytes} are read`);
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(`${path}: cannot read ${what}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}
