/**
 * The import graph of src/, queries/ and reports/, read from the sources: every `import` and
 * `export ... from` (type-only ones included) and `import()` of a relative module, its `.js`
 * specifier resolved to the `.ts` file. Used by floors.test.ts.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import ts from 'typescript';
import { FLOORS, ONLY_FROM, type Floor } from './floors.js';

export const ROOTS = ['src', 'queries', 'reports'];

export interface ImportEdge {
  /** Repository-relative paths, `/`-separated. */
  from: string;
  to: string;
  /** The specifier as written, and its 1-based line. */
  specifier: string;
  line: number;
}

export interface ImportGraph {
  files: string[];
  edges: ImportEdge[];
  /** Relative specifiers that name no file. */
  unresolved: ImportEdge[];
}

function sourceFiles(repo: string, dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(repo, dir))) {
    const path = posix.join(dir, name);
    if (statSync(join(repo, path)).isDirectory()) out.push(...sourceFiles(repo, path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

export function readImportGraph(repo: string): ImportGraph {
  const files = ROOTS.flatMap((r) => sourceFiles(repo, r)).sort();
  const edges: ImportEdge[] = [];
  const unresolved: ImportEdge[] = [];
  for (const from of files) {
    const text = readFileSync(join(repo, from), 'utf8');
    // preProcessFile lists static imports, re-exports, `import type` and `import()` alike.
    for (const ref of ts.preProcessFile(text, true, true).importedFiles) {
      const specifier = ref.fileName;
      if (!specifier.startsWith('.')) continue;
      const line = text.slice(0, ref.pos).split('\n').length;
      const to = posix.normalize(posix.join(posix.dirname(from), specifier)).replace(/\.js$/, '.ts');
      const edge = { from, to, specifier, line };
      (existsSync(join(repo, to)) ? edges : unresolved).push(edge);
    }
  }
  return { files, edges, unresolved };
}

/** Where a module lives: its floor (index from the bottom) and room (the longest entry naming it). */
export interface Place {
  floor: number;
  room: string;
}

export function placeOf(file: string, floors: readonly Floor[] = FLOORS): Place | null {
  let best: Place | null = null;
  floors.forEach((f, floor) => {
    for (const room of f.rooms) {
      const match = room.endsWith('/') ? file.startsWith(room) : file === room;
      if (match && (!best || room.length > best.room.length)) best = { floor, room };
    }
  });
  return best;
}

/** Why `edge` breaks the layering, or null when it may be there. */
export function ruleBroken(edge: ImportEdge, floors: readonly Floor[] = FLOORS): string | null {
  const a = placeOf(edge.from, floors);
  const b = placeOf(edge.to, floors);
  if (!a || !b) return null; // reported as unplaced modules
  if (dirname(edge.from) === dirname(edge.to) || a.room === b.room) return null;
  const only = Object.hasOwn(ONLY_FROM, b.room) ? ONLY_FROM[b.room] : null;
  if (only && !only.includes(a.room)) return `${b.room} may be imported only from ${only.join(', ')}`;
  if (b.floor < a.floor) return null;
  const fa = floors[a.floor];
  if (b.floor > a.floor) return `floor '${fa.name}' (${a.room}) may not import floor '${floors[b.floor].name}' (${b.room}), which is above it`;
  if (fa.peers) return null;
  const order = fa.rooms;
  if (order.indexOf(b.room) < order.indexOf(a.room)) return null;
  return `on floor '${fa.name}', ${a.room} may import only the rooms listed before it (${order.slice(0, order.indexOf(a.room)).join(', ') || 'none'}), not ${b.room}`;
}

/** The import circles (strongly connected sets of two or more modules, or a module importing itself). */
export function importCircles(graph: Pick<ImportGraph, 'files' | 'edges'>): string[][] {
  const next = new Map<string, string[]>();
  for (const e of graph.edges) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  let counter = 0;
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const set: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      set.push(w);
    } while (w !== v);
    if (set.length > 1 || (next.get(v) ?? []).includes(v)) circles.push(set.sort());
  };
  for (const f of graph.files) if (!index.has(f)) visit(f);
  return circles;
}

export const repoRoot = (): string => relative(process.cwd(), join(dirname(new URL(import.meta.url).pathname), '..', '..')) || '.';
