import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { fixture } from '../helpers/fixtures.js';

const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');

describe('-o never overwrites an input', () => {
  const dir = mkdtempSync(join(tmpdir(), 'iterscope-guard-'));
  const exp = join(dir, 'trace.sqlite');
  copyFileSync(fixture('cpp-legacy-windows', 'trace.2.sqlite'), exp);
  chmodSync(exp, 0o644);
  const log = join(dir, 'executor.log');
  copyFileSync(fixture('cpp-legacy-windows', 'executor.log'), log);
  chmodSync(log, 0o644);

  for (const args of [
    ['kernels', exp, '-o', exp],
    ['iterations', exp, '--log', log, '-o', log],
    ['iterations', exp, '--log', log, '-o', join(dir, '.', 'trace.sqlite')],
  ]) {
    it(args.join(' ').replace(dir, '<tmp>'), () => {
      const before = [sha(exp), sha(log)];
      const r = runCli(args);
      expect(r.status).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toContain('never writes to an input file');
      expect([sha(exp), sha(log)]).toEqual(before);
    });
  }
});
