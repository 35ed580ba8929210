import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';

const dir = fixture('pytorch-tp2');
const rank0 = fixture('pytorch-tp2', 'trace.rank0.sqlite');
const rank1 = fixture('pytorch-tp2', 'trace.rank1.sqlite');

describe('iterscope ranks / merge (CLI)', () => {
  it('both commands are registered (src/cli/main.ts: registerRanks, registerMerge)', () => {
    const help = runCli(['--help']).stdout;
    expect(help).toMatch(/^\s+ranks /m);
    expect(help).toMatch(/^\s+merge /m);
  });

  it('ranks on a quoted glob prints one row per aligned iteration with the straggler and the waits', () => {
    const r = runCli(['ranks', join(dir, 'trace.rank*.sqlite'), '--format', 'json']);
    expect(r.status, r.stderr).toBe(0);
    const v = JSON.parse(r.stdout);
    expect(v.schema).toBe('iterscope.ranks/1');
    expect(v.iterations.map((it: { iter: number }) => it.iter)).toEqual(Array.from({ length: 40 }, (_, i) => 30 + i));
    for (const it of v.iterations) {
      const s = it.ranks.find((c: { rank: number }) => c.rank === it.straggler);
      expect(s.collectiveWaitNs).toBe(Math.min(...it.ranks.map((c: { collectiveWaitNs: number }) => c.collectiveWaitNs)));
    }
    expect(r.stderr).toContain('straggler by arrival in 40');
    const csv = runCli(['ranks', rank0, rank1, '--format', 'csv']);
    expect(csv.stdout).toContain('Iter,Straggler,Basis,GPU busy min (ns)');
    expect(csv.stdout).toContain('Wait r1 (ns)');
  });

  it('summarize per rank, then merge the summaries: the same figures', () => {
    const out = mkdtempSync(join(tmpdir(), 'iterscope-merge-cli-'));
    for (const [r, f] of [rank0, rank1].entries()) expect(runCli(['summarize', f, '-o', join(out, `rank${r}.json`)]).status).toBe(0);
    const merged = runCli(['merge', out, '--format', 'json']);
    expect(merged.status, merged.stderr).toBe(0);
    const direct = JSON.parse(runCli(['ranks', rank0, rank1, '--format', 'json']).stdout);
    const m = JSON.parse(merged.stdout);
    expect(m.iterations.map((it: { straggler: number }) => it.straggler)).toEqual(direct.iterations.map((it: { straggler: number }) => it.straggler));
    expect(m.iterations.map((it: { totalCollectiveWaitNs: number }) => it.totalCollectiveWaitNs)).toEqual(direct.iterations.map((it: { totalCollectiveWaitNs: number }) => it.totalCollectiveWaitNs));
  });

  it('a bad file: one line naming it, exit 2 (ranks: in a worker; merge: a JSON without the schema tag)', () => {
    const out = mkdtempSync(join(tmpdir(), 'iterscope-ranks-bad-'));
    const bad = join(out, 'trace.rank1.sqlite');
    writeFileSync(bad, Buffer.alloc(4096, 1));
    const badJson = join(out, 'rank1.json');
    writeFileSync(badJson, '{"hello": 1}');
    for (const [args, file] of [
      [['ranks', rank0, bad], bad],
      [['merge', badJson], badJson],
    ] as const) {
      const r = runCli([...args, '--format', 'csv']);
      expect(r.status, r.stderr).toBe(2);
      expect(r.stdout).toBe('');
      const lines = r.stderr.trim().split('\n').filter((l) => !l.startsWith('iterscope: ranks ') && !l.startsWith('iterscope: one export'));
      expect(lines, r.stderr).toHaveLength(1);
      expect(lines[0].startsWith(`iterscope: ${file}: `), lines[0]).toBe(true);
    }
  });
});
