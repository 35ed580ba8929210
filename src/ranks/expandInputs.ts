import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { UsageError } from '../errors.js';

/** Does a path's last segment hold a glob (`*` or `?`)? Only the last segment may. */
export function hasGlob(path: string): boolean {
  return /[*?]/.test(basename(path));
}

/** `*` (any run of characters but `/`) and `?` (one character) as an anchored RegExp. */
export function globToRegExp(pattern: string): RegExp {
  let src = '';
  for (const ch of pattern) {
    if (ch === '*') src += '[^/]*';
    else if (ch === '?') src += '[^/]';
    else src += ch.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${src}$`);
}

/**
 * Natural order (`rank2` before `rank10`), made for each sort: the first ICU collator of a process
 * takes ~6 ms to make, which a command given its files one by one (most commands) never pays. Made
 * when this module loaded, it was part of every command's start-up, `--version` included.
 */
export function naturalOrder(): (a: string, b: string) => number {
  return new Intl.Collator('en', { numeric: true, sensitivity: 'variant' }).compare;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

export interface ExpandOptions {
  /** Extensions a directory contributes (lowercase, with the dot), e.g. ['.sqlite']. */
  extensions: readonly string[];
  /** What the files are, for messages ("exports", "summaries"). */
  what: string;
}

/**
 * Expands command-line inputs into files, in order:
 * - a directory: its files with one of `extensions` (not recursive, no dot files), in natural name order (a
 *   directory without any is kept as given, and fails when opened: 'is a directory');
 * - a path whose last segment has `*` or `?` (quoted, so the shell left it alone): the matching
 *   files of that directory, in natural name order (dot files only when the pattern starts with a dot);
 * - anything else: kept as given (a missing file is reported when it is opened, naming it).
 * Node 20 has no `fs.glob`; this covers what rank layouts need (`run/rank*.sqlite`,
 * `summaries/*.json`). Directories in the middle of a pattern are not expanded. A file named
 * twice is kept once (first position).
 */
export function expandInputs(inputs: readonly string[], opts: ExpandOptions): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const add = (p: string) => {
    if (seen.has(p)) return;
    seen.add(p);
    out.push(p);
  };
  for (const input of inputs) {
    if (isDirectory(input)) {
      const names = readdirSync(input)
        .filter((n) => !n.startsWith('.') && opts.extensions.some((e) => n.toLowerCase().endsWith(e)) && isFile(join(input, n)))
        .sort(naturalOrder());
      // No matching file: keep the directory, so opening it fails with the usual one-line error.
      if (names.length === 0) add(input);
      for (const n of names) add(join(input, n));
    } else if (hasGlob(input) && !isFile(input)) {
      const dir = dirname(input);
      const pattern = basename(input);
      if (/[*?]/.test(dir)) throw new UsageError(`${input}: only the last path segment may hold * or ?`);
      const re = globToRegExp(pattern);
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        throw new UsageError(`${input}: no such directory ${dir}`);
      }
      const hits = names.filter((n) => re.test(n) && (pattern.startsWith('.') || !n.startsWith('.')) && isFile(join(dir, n))).sort(naturalOrder());
      if (hits.length === 0) throw new UsageError(`${input}: no files match`);
      // Keep the prefix as the user wrote it (`./x/` stays `./x/`, `rank*` stays relative).
      const prefix = input.slice(0, input.length - pattern.length);
      for (const n of hits) add(prefix + n);
    } else {
      if (/[*?]/.test(dirname(input)) && !existsSync(input)) throw new UsageError(`${input}: only the last path segment may hold * or ?`);
      add(input);
    }
  }
  return out;
}
