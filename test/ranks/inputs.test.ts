import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expandInputs, globToRegExp } from '../../src/ranks/expandInputs.js';
import { identifyRanks, rankFromPath } from '../../src/ranks/identify.js';
import { IterscopeError } from '../../src/errors.js';

const EXPORTS = { extensions: ['.sqlite'], what: 'nsys exports' };

function tree(): string {
  const dir = mkdtempSync(join(tmpdir(), 'iterscope-expand-'));
  for (const n of ['trace.rank10.sqlite', 'trace.rank2.sqlite', 'trace.rank0.sqlite', 'notes.txt', '.hidden.sqlite', 'summary.rank0.json']) writeFileSync(join(dir, n), '');
  mkdirSync(join(dir, 'sub.sqlite'));
  return dir;
}

describe('expandInputs', () => {
  it('a directory gives its *.sqlite files (not sub-directories, not dot files) in natural order', () => {
    const dir = tree();
    expect(expandInputs([dir], EXPORTS)).toEqual(['trace.rank0.sqlite', 'trace.rank2.sqlite', 'trace.rank10.sqlite'].map((n) => join(dir, n)));
  });

  it('a quoted glob in the last segment: * and ?, natural order, no dot files, prefix kept', () => {
    const dir = tree();
    expect(expandInputs([join(dir, 'trace.rank*.sqlite')], EXPORTS)).toEqual(['trace.rank0.sqlite', 'trace.rank2.sqlite', 'trace.rank10.sqlite'].map((n) => join(dir, n)));
    expect(expandInputs([join(dir, 'trace.rank?.sqlite')], EXPORTS)).toEqual(['trace.rank0.sqlite', 'trace.rank2.sqlite'].map((n) => join(dir, n)));
    expect(expandInputs([`${dir}/*.json`], { extensions: ['.json'], what: 'summaries' })).toEqual([`${dir}/summary.rank0.json`]);
  });

  it('plain paths pass through (missing ones fail later, when opened), duplicates are dropped', () => {
    const dir = tree();
    const a = join(dir, 'trace.rank0.sqlite');
    expect(expandInputs([a, join(dir, 'missing.sqlite'), a], EXPORTS)).toEqual([a, join(dir, 'missing.sqlite')]);
  });

  it('a directory without exports is kept (opening it says "is a directory")', () => {
    const dir = tree();
    expect(expandInputs([join(dir, 'sub.sqlite')], EXPORTS)).toEqual([join(dir, 'sub.sqlite')]);
  });

  it('a glob matching nothing, or a glob in a directory segment, is a usage error', () => {
    const dir = tree();
    expect(() => expandInputs([join(dir, 'nothing*.sqlite')], EXPORTS)).toThrow(/no files match/);
    expect(() => expandInputs([join(dir, '*', 'x.sqlite')], EXPORTS)).toThrow(IterscopeError);
  });

  it('globToRegExp escapes everything but * and ?', () => {
    expect(globToRegExp('a.b*(1)?').test('a.bXYZ(1)Q')).toBe(true);
    expect(globToRegExp('a.b*').test('aXb')).toBe(false);
  });
});

describe('identifyRanks', () => {
  it('reads rank<N> from the file name, else the directory name', () => {
    expect(rankFromPath('/x/trace.rank12.sqlite')).toBe(12);
    expect(rankFromPath('/x/rank_3/trace.sqlite')).toBe(3);
    expect(rankFromPath('/x/RANK-4.sqlite')).toBe(4);
    expect(rankFromPath('/home/frank7/trace.sqlite')).toBeNull();
    expect(rankFromPath('/x/trace.sqlite')).toBeNull();
  });

  it('uses the file-name ranks when all are named and distinct, else the input order', () => {
    expect(identifyRanks(['r/trace.rank1.sqlite', 'r/trace.rank0.sqlite'])).toMatchObject({ source: 'file-name', inputs: [{ rank: 1 }, { rank: 0 }] });
    const mixed = identifyRanks(['a/trace.rank1.sqlite', 'a/other.sqlite']);
    expect(mixed.source).toBe('input-order');
    expect(mixed.inputs.map((i) => i.rank)).toEqual([0, 1]);
    const dup = identifyRanks(['a/trace.rank0.sqlite', 'b/trace.rank0.sqlite']);
    expect(dup.source).toBe('input-order');
    expect(dup.note).toMatch(/rank 0 is named twice/);
  });

  it('falls back to a hint (a summary\'s export path)', () => {
    expect(identifyRanks(['s/a.json', 's/b.json'], ['/run/trace.rank1.sqlite', '/run/trace.rank0.sqlite']).inputs.map((i) => i.rank)).toEqual([1, 0]);
  });
});
