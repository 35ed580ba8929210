/**
 * The house rule "functions under 80 lines", checked on every `npm test` over src/, queries/ and
 * reports/ (the modules of the import graph): a function, method or arrow function with a body of
 * more than 80 lines, counted from its first line to its closing brace, fails naming file, line and name.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { readImportGraph, repoRoot } from './importGraph.js';

const MAX_FUNCTION_LINES = 80;

/** `file:line name (N lines)` for each function of `source` longer than `max` lines. */
function longFunctions(file: string, source: string, max = MAX_FUNCTION_LINES): string[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isArrowFunction(node) || ts.isFunctionExpression(node) || ts.isConstructorDeclaration(node)) && node.body) {
      const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const last = sf.getLineAndCharacterOfPosition(node.end).line;
      const lines = last - first + 1;
      if (lines > max) out.push(`${file}:${first + 1} ${node.name?.getText(sf) ?? '(anonymous)'} (${lines} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

describe('function length (src/, queries/, reports/)', () => {
  it(`has no function over ${MAX_FUNCTION_LINES} lines`, () => {
    const root = repoRoot();
    const files = readImportGraph(root).files;
    expect(files.length).toBeGreaterThan(250);
    expect(files.flatMap((f) => longFunctions(f, readFileSync(join(root, f), 'utf8')))).toEqual([]);
  });

  it('names a function one line too long, and passes one at the limit', () => {
    const body = (n: number) => Array.from({ length: n - 2 }, (_, i) => `  const v${i} = ${i};`).join('\n');
    const src = `export function atLimit(): void {\n${body(80)}\n}\nclass C {\n  tooLong(): void {\n${body(81)}\n  }\n}\n`;
    expect(longFunctions('x.ts', src)).toEqual(['x.ts:82 tooLong (81 lines)']);
  });
});
