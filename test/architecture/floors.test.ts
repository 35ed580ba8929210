/**
 * The layering (floors.ts) held against the real import graph: a new import from a lower floor to
 * a higher one, a module on no floor, or an import circle (type-only imports included) fails here,
 * naming the file, the import and the rule.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FLOORS, HANDLE_READERS } from './floors.js';
import { importCircles, placeOf, readImportGraph, repoRoot, ruleBroken, type ImportEdge } from './importGraph.js';

const graph = readImportGraph(repoRoot());
const where = (e: ImportEdge) => `${e.from}:${e.line} imports '${e.specifier}'`;

describe('the import graph (src/, queries/, reports/)', () => {
  it('is read: every relative import names a file', () => {
    expect(graph.files.length).toBeGreaterThan(250);
    expect(graph.edges.length).toBeGreaterThan(900);
    expect(graph.unresolved.map(where)).toEqual([]);
  });

  it('places every module on a floor (a new folder is added to test/architecture/floors.ts)', () => {
    expect(graph.files.filter((f) => placeOf(f) === null)).toEqual([]);
  });

  it('has no import from a lower floor to a higher one, nor against a floor\'s order', () => {
    const broken = graph.edges.flatMap((e) => {
      const rule = ruleBroken(e);
      return rule ? [`${where(e)}: ${rule}`] : [];
    });
    expect(broken).toEqual([]);
  });

  it('has no import circle, type-only imports included', () => {
    expect(importCircles(graph)).toEqual([]);
  });

  it('reads the open export (`loaded.handle`) in the loader only: the parts read loaded columns', () => {
    const readers = graph.files.filter((f) => {
      const room = placeOf(f)?.room;
      return !HANDLE_READERS.includes(room ?? '') && /\.handle\b/.test(readFileSync(join(repoRoot(), f), 'utf8'));
    });
    expect(readers).toEqual([]);
  });

  it('defines each exported name once (a const and its type of one name, in one module, count once)', () => {
    const definedIn = new Map<string, Set<string>>();
    for (const f of graph.files) {
      const text = readFileSync(join(repoRoot(), f), 'utf8');
      for (const m of text.matchAll(/^export (?:declare )?(?:async )?(?:abstract )?(?:function\*?|const|let|class|interface|type|enum) +([A-Za-z_$][\w$]*)/gm)) {
        definedIn.set(m[1], (definedIn.get(m[1]) ?? new Set()).add(f));
      }
    }
    const twice = [...definedIn].filter(([, where]) => where.size > 1).map(([name, where]) => `${name}: ${[...where].join(', ')}`);
    expect(twice).toEqual([]);
  });

  it('leaves no room empty (each entry of floors.ts places some module)', () => {
    const rooms = FLOORS.flatMap((f) => f.rooms);
    const used = new Set(graph.files.map((f) => placeOf(f)?.room));
    expect(rooms.filter((r) => !used.has(r))).toEqual([]);
  });
});

describe("the README's Layout section", () => {
  it('draws every floor, bottom last, with every room on it', () => {
    const readme = readFileSync(join(repoRoot(), 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Layout\n'), readme.indexOf('\n## ', readme.indexOf('## Layout\n') + 1));
    const drawing = section.slice(section.indexOf('```\n') + 4, section.indexOf('```', section.indexOf('```\n') + 4));
    const floorLines = drawing.split('\n').filter((l) => /^\S/.test(l)).map((l) => l.split(' ')[0]);
    expect(floorLines).toEqual(FLOORS.map((f) => f.name).reverse());
    const missing = FLOORS.flatMap((f) => f.rooms.map((r) => (r.endsWith('/') ? r.slice(0, -1) : r.replace(/^.*\//, '').replace(/\.ts$/, ''))).filter((r) => !drawing.includes(r)));
    expect(missing).toEqual([]);
  });
});

describe('the checks themselves', () => {
  const edge = (from: string, to: string): ImportEdge => ({ from, to, specifier: to, line: 1 });

  it('name an import from the ground floor up to the loader, and allow the one down', () => {
    expect(ruleBroken(edge('src/export/openExport.ts', 'src/load/loadedExport.ts'))).toBe(
      "floor 'ground' (src/export/) may not import floor 'load' (src/load/), which is above it",
    );
    expect(ruleBroken(edge('src/load/loadedExport.ts', 'src/export/contract.ts'))).toBeNull();
  });

  it('keep SQL to the loader: a part importing queries/ is named, and so is a worker thread (it runs the loader)', () => {
    const only = 'queries/ may be imported only from src/export/, src/kineto/convert/, src/load/, src/index.ts';
    expect(ruleBroken(edge('src/gaps/analyzeGaps.ts', 'queries/gpuOps.ts'))).toBe(only);
    expect(ruleBroken(edge('src/worker/readInBackground.ts', 'queries/handle.ts'))).toBe(only);
  });

  it('hold a floor\'s order: iterations below findings', () => {
    expect(ruleBroken(edge('src/iterations/attribute.ts', 'src/findings/finding.ts'))).toMatch(/^on floor 'parts', src\/iterations\/ may import only the rooms listed before it \(none\), not src\/findings\/$/);
    expect(ruleBroken(edge('src/findings/finding.ts', 'src/iterations/types.ts'))).toBeNull();
  });

  it('find a circle of type-only imports as any other', () => {
    const files = ['a.ts', 'b.ts', 'c.ts'];
    expect(importCircles({ files, edges: [edge('a.ts', 'b.ts'), edge('b.ts', 'c.ts'), edge('c.ts', 'a.ts')] })).toEqual([files]);
    expect(importCircles({ files, edges: [edge('a.ts', 'b.ts'), edge('b.ts', 'c.ts')] })).toEqual([]);
  });
});
