import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { accessSync, closeSync, constants, existsSync, fstatSync, mkdirSync, openSync, readSync, renameSync, rmSync, statSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { listTablesAndViews } from '../../queries/probe.js';
import { hasNsysTables } from './nsysTables.js';
import { homedir } from 'node:os';
import { basename, delimiter, dirname, extname, join, resolve } from 'node:path';
import { InputError } from '../errors.js';

/** Nsight Systems report extensions (`.qdrep` before 2021.3). */
const REPORT_EXTENSIONS = ['.nsys-rep', '.qdrep'];

/** The environment variable `--nsys PATH` sets, so worker threads and nested calls see it too. */
export const NSYS_ENV = 'ITERSCOPE_NSYS';

/** An Nsight Systems report (not an SQLite export), judged by its extension. */
export function isNsysReport(path: string): boolean {
  return REPORT_EXTENSIONS.includes(extname(path).toLowerCase());
}

/** `nsys` as given (`--nsys` / ITERSCOPE_NSYS), else the first executable `nsys` on PATH; null when none. */
export function findNsys(explicit?: string): string | null {
  const given = explicit ?? process.env[NSYS_ENV];
  if (given) return given;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, 'nsys');
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

function writableDir(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** Where cached exports go when the report's directory is read-only: $XDG_CACHE_HOME/iterscope (or ~/.cache/iterscope). */
export function exportCacheDir(): string {
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'iterscope');
}

/**
 * Where the SQLite export of a report lives: next to it (`X.nsys-rep` -> `X.sqlite`) when that
 * directory is writable or the export already exists there; else in the cache directory, under a
 * name that includes a hash of the report's absolute path (two `run.nsys-rep` never collide).
 */
export function exportPathFor(report: string, isWritable: (dir: string) => boolean = writableDir): string {
  const beside = join(dirname(report), `${basename(report, extname(report))}.sqlite`);
  if (existsSync(beside) || isWritable(dirname(report))) return beside;
  const hash = createHash('sha256').update(resolve(report)).digest('hex').slice(0, 12);
  return join(exportCacheDir(), `${basename(report, extname(report))}-${hash}.sqlite`);
}

const SQLITE_MAGIC = 'SQLite format 3\0';

/** What the 100-byte header says is wrong with a file meant to be an SQLite database (size `size`), or null. */
function headerProblem(header: Buffer, size: number): string | null {
  if (size === 0) return 'empty (0 bytes)';
  if (header.subarray(0, 16).toString('latin1') !== SQLITE_MAGIC) {
    return header.every((b) => b === 0) ? 'zero-filled: an interrupted export' : 'not an SQLite database';
  }
  if (size < 100) return `truncated: ${size} bytes, less than the SQLite header`;
  const raw = header.readUInt16BE(16);
  const pageSize = raw === 1 ? 65536 : raw;
  // The header's page count is valid when its "version valid for" equals the change counter (sqlite.org/fileformat.html §1.3.7).
  const pages = header.readUInt32BE(28);
  if (pages > 0 && header.readUInt32BE(92) === header.readUInt32BE(24) && size < pages * pageSize) return `truncated: ${size} of ${pages * pageSize} bytes`;
  return null;
}

/**
 * Why `file` cannot be the SQLite export of a report, or null when it can: empty, zero-filled,
 * not SQLite, shorter than its header says (an interrupted or killed export), not openable, or
 * without nsys tables. Its time alone says nothing: an interrupted export is newer than the report.
 */
export function unusableExportReason(file: string): string | null {
  let header = Buffer.alloc(100);
  let size: number;
  const fd = openSync(file, 'r');
  try {
    size = fstatSync(fd).size;
    header = header.subarray(0, readSync(fd, header, 0, 100, 0));
  } finally {
    closeSync(fd);
  }
  const problem = headerProblem(Buffer.concat([header, Buffer.alloc(100 - header.length)]), size);
  if (problem) return problem;
  // A WAL-mode file would get -shm/-wal files beside it when opened: nsys writes none, openExport reads it from memory.
  if (header[18] === 2 || header[19] === 2) return null;
  try {
    const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
    try {
      return hasNsysTables(new Set(listTablesAndViews(db))) ? null : 'no nsys tables';
    } finally {
      db.close();
    }
  } catch (err) {
    return `cannot be opened as SQLite: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]}`;
  }
}

/** True when `exported` exists and was written after `report` last changed. */
function upToDate(exported: string, report: string): boolean {
  try {
    return statSync(exported).mtimeMs >= statSync(report).mtimeMs;
  } catch {
    return false;
  }
}

export interface NsysRepOptions {
  /** `--nsys PATH`; default: ITERSCOPE_NSYS, else `nsys` on PATH. */
  nsys?: string;
  /** One line for people (stderr in the CLI). */
  notify?: (message: string) => void;
}

/**
 * The SQLite export of an `.nsys-rep`: reused while it is newer than the report, else written once
 * with `nsys export --type sqlite` (to a temporary name, renamed when complete, so a killed export
 * is never reused). Other paths are returned unchanged. Without nsys: an `E_NSYS_REP` error whose
 * one line says how to export the report by hand.
 */
export function resolveNsysReport(path: string, opts: NsysRepOptions = {}): string {
  if (!isNsysReport(path)) return path;
  const notify = opts.notify ?? ((m: string) => process.stderr.write(`iterscope: ${m}\n`));
  if (!existsSync(path)) throw new InputError('E_INPUT_MISSING', path, 'no such file');
  const out = exportPathFor(path);
  const fresh = upToDate(out, path);
  const unusable = fresh ? unusableExportReason(out) : null;
  if (fresh && !unusable) {
    notify(`${path}: using its SQLite export ${out} (newer than the report)`);
    return out;
  }
  const nsys = findNsys(opts.nsys);
  if (unusable) {
    // Never reused, never deleted by us without nsys: the user is told which file and what to run.
    const again = `nsys export --type sqlite -o ${out} --force-overwrite true ${path}`;
    if (!nsys) throw new InputError('E_NSYS_REP', path, `its SQLite export ${out} is unusable (${unusable}) and nsys is not on PATH: export it again with \`${again}\` (or pass --nsys PATH)`);
    notify(`${path}: its SQLite export ${out} is unusable (${unusable}): exporting it again`);
  }
  const manual = `nsys export --type sqlite -o ${join(dirname(path), `${basename(path, extname(path))}.sqlite`)} ${path}`;
  if (!nsys) throw new InputError('E_NSYS_REP', path, `is an Nsight Systems report and nsys is not on PATH: export it with \`${manual}\` (or pass --nsys PATH)`);
  mkdirSync(dirname(out), { recursive: true });
  const tmp = join(dirname(out), `.${basename(out, '.sqlite')}.iterscope-${process.pid}.sqlite`);
  notify(`${path}: exporting to ${out} with ${nsys} (once; reused while newer than the report)`);
  try {
    execFileSync(nsys, ['export', '--type', 'sqlite', '--force-overwrite', 'true', '-o', tmp, path], { stdio: ['ignore', 'ignore', 'pipe'] });
    if (!existsSync(tmp)) throw new Error(`nsys wrote no ${tmp}`);
    const bad = unusableExportReason(tmp);
    if (bad) throw new Error(`nsys wrote an unusable export: ${bad}`);
    renameSync(tmp, out);
  } catch (err) {
    rmSync(tmp, { force: true });
    const e = err as { stderr?: Buffer; message?: string };
    const detail = (e.stderr?.toString() || e.message || String(err)).trim().split('\n').pop();
    throw new InputError('E_NSYS_REP', path, `nsys export failed (${detail}); export it by hand with \`${manual}\``);
  }
  return out;
}

/**
 * Takes `--nsys PATH` / `--nsys=PATH` out of a command line (any position, any command) and
 * returns the rest: the option applies to every input, so it is read once, before the commands parse.
 */
export function takeNsysOption(argv: readonly string[]): { argv: string[]; nsys: string | undefined } {
  const out: string[] = [];
  let nsys: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') {
      out.push(...argv.slice(i));
      break;
    }
    if (a === '--nsys' && i + 1 < argv.length) nsys = argv[++i];
    else if (a.startsWith('--nsys=')) nsys = a.slice('--nsys='.length);
    else out.push(a);
  }
  return { argv: out, nsys };
}
