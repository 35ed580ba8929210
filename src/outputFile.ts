import { accessSync, chmodSync, constants as fsConstants, closeSync, existsSync, openSync, realpathSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { UsageError } from './errors.js';

/**
 * Where an output's bytes go while it is written. A regular (or not yet existing) target is
 * written to a temporary file in its own directory and renamed over it only when complete, so a
 * failed write (disk full, a crash, an analysis error half-way) leaves the target as it was and
 * only the temporary file, which we created, is removed. A device, FIFO or socket (`-o /dev/full`,
 * `-o /dev/stdout`, `-o >(gzip > x)`) has nothing to rename over: it is written in place and
 * never unlinked.
 */
export interface OutputTarget {
  /** The path as the user named it. */
  readonly path: string;
  /** The temporary file being written, or null when writing straight to a special file. */
  readonly tempPath: string | null;
  /** Where `commit` renames `tempPath` to: the target with symlinks resolved. */
  readonly finalPath: string;
  fd: number | null;
}

/** Opens `path` for writing as described on `OutputTarget`. */
export function openOutput(path: string): OutputTarget {
  try {
    return openOutputAt(path);
  } catch (err) {
    // One line naming the output as the user gave it, not the temporary file beside it.
    const e = err as NodeJS.ErrnoException;
    if (e instanceof UsageError || typeof e?.code !== 'string') throw err;
    throw new UsageError(`${path}: cannot write: ${e.code === 'ENOENT' ? `no directory ${dirname(path)}` : e.code === 'EACCES' ? 'permission denied' : e.message}`);
  }
}

function openOutputAt(path: string): OutputTarget {
  if (existsSync(path)) {
    const st = statSync(path);
    if (st.isDirectory()) throw new UsageError(`${path}: is a directory, not an output file`);
    if (!st.isFile()) return { path, tempPath: null, finalPath: path, fd: openSync(path, 'w') };
    // Writing in place would fail on a file we may not write; so does replacing it.
    accessSync(path, fsConstants.W_OK);
    // A symlink to a regular file: replace the file it points at, keep the link.
    const finalPath = realpathSync(path);
    const tempPath = tempPathBeside(finalPath);
    const fd = openSync(tempPath, 'wx', 0o600);
    try {
      chmodSync(tempPath, st.mode & 0o7777);
    } catch {
      // keep 0600 (a file system without modes)
    }
    return { path, tempPath, finalPath, fd };
  }
  const tempPath = tempPathBeside(path);
  return { path, tempPath, finalPath: path, fd: openSync(tempPath, 'wx', 0o666) };
}

function tempPathBeside(target: string): string {
  return join(dirname(target), `.${basename(target)}.iterscope-${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
}

/** Writes all of `bytes` (writeSync may write less than asked). */
export function writeAll(target: OutputTarget, bytes: Buffer): void {
  if (target.fd === null) throw new Error(`${target.path}: output already closed`);
  let off = 0;
  try {
    while (off < bytes.length) off += writeSync(target.fd, bytes, off, bytes.length - off);
  } catch (err) {
    // Name the output (the CLI prints an fs error's message as its one line).
    const e = err as NodeJS.ErrnoException;
    if (typeof e?.message === 'string' && !e.message.startsWith(target.path)) e.message = `${target.path}: ${e.message}`;
    throw err;
  }
}

/** Closes and, for a temporary file, renames it over the target. */
export function commitOutput(target: OutputTarget): void {
  if (target.fd === null) return;
  const fd = target.fd;
  target.fd = null;
  try {
    closeSync(fd);
    if (target.tempPath) renameSync(target.tempPath, target.finalPath);
  } catch (err) {
    removeTemp(target);
    throw err;
  }
}

/** Closes and removes the temporary file; the target itself is never touched. */
export function abortOutput(target: OutputTarget): void {
  if (target.fd !== null) {
    try {
      closeSync(target.fd);
    } catch {
      // already failing; the original error is what matters
    }
    target.fd = null;
  }
  removeTemp(target);
}

function removeTemp(target: OutputTarget): void {
  if (!target.tempPath) return;
  try {
    unlinkSync(target.tempPath);
  } catch {
    // already gone
  }
}

/** Writes `text` to `path` whole or not at all (see `OutputTarget`). */
export function writeOutputFile(path: string, text: string): void {
  const target = openOutput(path);
  try {
    writeAll(target, Buffer.from(text, 'utf8'));
    commitOutput(target);
  } catch (err) {
    abortOutput(target);
    throw err;
  }
}
