import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command, CommanderError } from 'commander';
import { registerTrace } from '../../src/cli/commands/trace.js';
import { InputError, UsageError } from '../../src/errors.js';
import { REPO_ROOT } from '../helpers/fixtures.js';

const SAMPLE = join(REPO_ROOT, 'sample-data', 'moe-loops-100-119.sqlite');
const SAMPLE_LOG = join(REPO_ROOT, 'sample-data', 'moe-iteration_log.txt');

function program(): Command {
  const p = new Command('iterscope').exitOverride();
  registerTrace(p);
  for (const c of p.commands) c.exitOverride().configureOutput({ writeErr: () => {} });
  return p;
}

async function run(args: string[]): Promise<void> {
  await program().parseAsync(['node', 'iterscope', 'trace', ...args]);
}

describe('iterscope trace (commander program with registerTrace)', () => {
  let dir: string;
  let stderr: ReturnType<typeof vi.spyOn>;
  const written: string[] = [];
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'iterscope-trace-cli-'));
    stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: unknown) => {
      written.push(String(chunk));
      return true;
    });
  });
  afterAll(() => {
    stderr.mockRestore();
    rmSync(dir, { recursive: true, force: true });
  });

  it('needs -o; bad --iters, --min-gap, --kernel-names fail before the export is read', async () => {
    await expect(run([SAMPLE])).rejects.toBeInstanceOf(CommanderError);
    const out = join(dir, 'never.json');
    for (const v of ['5-3', 'x', '1-2-3']) await expect(run(['/nonexistent.sqlite', '-o', out, '--iters', v]), v).rejects.toBeInstanceOf(UsageError);
    await expect(run(['/nonexistent.sqlite', '-o', out, '--min-gap', 'soon'])).rejects.toBeInstanceOf(UsageError);
    await expect(run(['/nonexistent.sqlite', '-o', out, '--kernel-names', 'mangled'])).rejects.toBeInstanceOf(UsageError);
    await expect(run(['/nonexistent.sqlite', '-o', out])).rejects.toBeInstanceOf(InputError);
    expect(existsSync(out)).toBe(false);
  });

  it('iterations outside the export: UsageError naming what is there, no file written', async () => {
    const out = join(dir, 'none.json');
    await expect(run([SAMPLE, '-o', out, '--iters', '300-301'])).rejects.toThrow(/no such iteration in the export \(found 100\.\.119\)/);
    expect(existsSync(out)).toBe(false);
  });

  it('writes the trace and says where to open it', async () => {
    const out = join(dir, 'trace.json');
    written.length = 0;
    await run([SAMPLE, '--log', SAMPLE_LOG, '-o', out, '--iters', '103', '--min-gap', '1ms']);
    const t = JSON.parse(readFileSync(out, 'utf8'));
    const its = t.traceEvents.filter((e: { cat?: string }) => e.cat === 'iteration');
    expect(its.map((e: { name: string }) => e.name)).toEqual(['iter 103: 1 ctx (768 tok), 15 gen']);
    expect(t.otherData).toMatchObject({ iterations: '103-103', minGapNs: 1_000_000, kernelNames: 'short' });
    for (const g of t.traceEvents.filter((e: { cat?: string }) => e.cat === 'gap')) expect(g.args.durationNs).toBeGreaterThanOrEqual(1_000_000);
    expect(written.join('')).toMatch(/wrote .*trace\.json \(.*, \d+ events, \d+ tracks\): open it in https:\/\/ui\.perfetto\.dev/);
  });

  it('--kernel-names demangled names kernels by their full signature', async () => {
    const short = join(dir, 'short.json');
    const full = join(dir, 'full.json');
    await run([SAMPLE, '-o', short, '--iters', '105']);
    await run([SAMPLE, '-o', full, '--iters', '105', '--kernel-names', 'demangled']);
    const names = (p: string) => new Set(JSON.parse(readFileSync(p, 'utf8')).traceEvents.filter((e: { cat?: string }) => e.cat === 'kernel').map((e: { name: string }) => e.name));
    expect(names(short).has('vectorized_gather_kernel')).toBe(true);
    expect([...names(full)].some((n) => String(n).startsWith('void at::native::vectorized_gather_kernel<'))).toBe(true);
  });
});
