import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { registerGaps } from '../../src/cli/commands/gaps.js';
import { UsageError } from '../../src/errors.js';
import { fixture } from '../helpers/fixtures.js';

const DENSE = fixture('pytorch-dense', 'trace.sqlite');

function program(): Command {
  const p = new Command('iterscope').exitOverride();
  registerGaps(p);
  for (const c of p.commands) c.exitOverride();
  return p;
}

async function run(args: string[]): Promise<void> {
  await program().parseAsync(['node', 'iterscope', 'gaps', ...args]);
}

describe('iterscope gaps (commander program with registerGaps)', () => {
  let dir: string;
  let stderr: ReturnType<typeof vi.spyOn>;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'iterscope-gaps-'));
    stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  });
  afterAll(() => {
    stderr.mockRestore();
    rmSync(dir, { recursive: true, force: true });
  });

  it('malformed --min-gap, --top, --device are UsageErrors before the export is read', async () => {
    for (const v of ['100', 'fast', '-1ms', '5h', '']) await expect(run([DENSE, '--min-gap', v]), v).rejects.toBeInstanceOf(UsageError);
    await expect(run([DENSE, '--top', 'x'])).rejects.toBeInstanceOf(UsageError);
    await expect(run([DENSE, '--device', '-1'])).rejects.toThrow();
    await expect(run(['/nonexistent.sqlite', '--min-gap', 'nope'])).rejects.toBeInstanceOf(UsageError);
    await expect(run([DENSE, '--format', 'xml'])).rejects.toBeInstanceOf(UsageError);
  });

  it('writes the analysis as camelCase JSON with every gap', async () => {
    const out = join(dir, 'gaps.json');
    await run([DENSE, '--min-gap', '1ms', '--top', '3', '-o', out]);
    const a = JSON.parse(readFileSync(out, 'utf8'));
    expect(a.minGapNs).toBe(1_000_000);
    expect(a.gaps.length).toBeGreaterThan(3);
    for (const g of a.gaps) {
      expect(Object.keys(g)).toEqual(expect.arrayContaining(['deviceId', 'startNs', 'endNs', 'durationNs', 'iter', 'cause', 'causes']));
      expect(Object.values(g.causes as Record<string, number>).reduce((x, y) => x + y, 0)).toBe(g.durationNs);
      expect(g.durationNs).toBeGreaterThanOrEqual(1_000_000);
    }
    expect(a.devices[0]).toEqual(expect.objectContaining({ deviceId: 0, busyNs: expect.any(Number), idleByCauseNs: expect.any(Object) }));
    expect(Array.isArray(a.phases)).toBe(true);
  });

  it('CSV: the top-N table, per-device causes and per-phase causes, with --log for phases', async () => {
    const out = join(dir, 'gaps.csv');
    await run([DENSE, '--top', '5', '--log', fixture('pytorch-dense', 'iteration_log.txt'), '-o', out]);
    const text = readFileSync(out, 'utf8');
    const sections = text.split(/\n(?=# )/);
    expect(sections[0]).toMatch(/^# Top 5 of \d+ GPU idle gaps >= 100\.00 us\nDevice,Start \(ns\),Duration \(ns\),Iter,Phase,Cause,Causes/);
    expect(sections[0].trim().split('\n').length).toBe(2 + 5);
    expect(text).toContain('# GPU idle time by cause per device');
    expect(text).toContain('# GPU idle time by cause per iteration phase');
    expect(text).toMatch(/\ngeneration,\d+,gc,\d+,/);
    // notes go to stderr, not into the CSV
    expect(text).not.toContain('iterscope:');
    expect(stderr.mock.calls.some((c: unknown[]) => String(c[0]).includes('gaps >= 100.00 us'))).toBe(true);
  });

  it('--device N with no work on it prints empty tables and a note', async () => {
    const out = join(dir, 'none.json');
    await run([DENSE, '--device', '3', '-o', out]);
    const a = JSON.parse(readFileSync(out, 'utf8'));
    expect(a.gaps).toEqual([]);
    expect(a.notes.join('\n')).toMatch(/no GPU work on device 3/);
  });
});
