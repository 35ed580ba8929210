/** parseIterationLogFile: unusable paths throw E_LOG; odd bytes in a usable file only cost lines. */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import { MAX_LINE_CHARS, parseIterationLogFile } from '../../src/logs/index.js';

const dir = mkdtempSync(join(tmpdir(), 'iterscope-logs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TEXT_LINE = (k: number): string =>
  `[11/20/2026-23:07:42] [TRT-LLM] [I] iter = ${k}, global_rank = 0, rank = 0, num_scheduled_requests = 4, host_step_time = 3.5ms, prev_device_step_time = N/A, timestamp = 2026-11-20 23:07:42, states = {'num_ctx_requests': 4, 'num_ctx_tokens': 1984, 'num_generation_tokens': 0}`;

function write(name: string, content: string | Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('did not throw');
}

describe('parseIterationLogFile', () => {
  it('throws InputError E_LOG for a missing file and for a directory', () => {
    const missing = thrown(() => parseIterationLogFile(join(dir, 'nope.log')));
    expect(missing).toBeInstanceOf(InputError);
    expect(missing).toMatchObject({ code: 'E_LOG', file: join(dir, 'nope.log') });
    mkdirSync(join(dir, 'sub'));
    expect(thrown(() => parseIterationLogFile(join(dir, 'sub')))).toMatchObject({ code: 'E_LOG', message: expect.stringContaining('directory') });
  });

  it('returns zero records, not an error, for an empty or recordless file', () => {
    const empty = parseIterationLogFile(write('empty.log', ''));
    expect([empty.records.length, empty.linesRead, empty.skippedLines]).toEqual([0, 0, 0]);
    const noise = parseIterationLogFile(write('noise.log', 'hello\nworld\n'));
    expect([noise.records.length, noise.linesRead, noise.skippedLines]).toEqual([0, 2, 2]);
  });

  it('skips lines with invalid UTF-8 or NUL bytes and keeps the rest', () => {
    const bytes = Buffer.concat([
      Buffer.from(`${TEXT_LINE(1)}\n`),
      Buffer.from([0xff, 0xfe, 0x00, 0x41, 0xc3, 0x28, 0x0a]), // invalid UTF-8
      Buffer.from('PK\u0003\u0004\u0000\u0000 iter = 9, global_rank = 0\n'), // valid UTF-8, but NULs
      Buffer.from(`${TEXT_LINE(2)}\r\n`),
    ]);
    const log = parseIterationLogFile(write('binary.log', bytes));
    expect(log.records.map((r) => [r.iter, r.line])).toEqual([
      [0, 1],
      [1, 4],
    ]);
    expect(log.skippedSamples).toEqual([
      { line: 2, reason: 'binary data or invalid UTF-8' },
      { line: 3, reason: 'binary data or invalid UTF-8' },
    ]);
    expect(log.linesRead).toBe(4);
  });

  it('skips an over-long line without decoding it', () => {
    const long = Buffer.alloc(MAX_LINE_CHARS + 10, 0x7b); // '{{{{...'
    const path = write('long.log', Buffer.concat([Buffer.from(`${TEXT_LINE(1)}\n`), long, Buffer.from(`\n${TEXT_LINE(2)}`)]));
    const log = parseIterationLogFile(path);
    expect(log.records.map((r) => r.iter)).toEqual([0, 1]);
    expect(log.skippedSamples).toEqual([{ line: 2, reason: expect.stringContaining('longer than') }]);
    expect(log.linesRead).toBe(3);
  });

  it('reads a pretty-printed JSON array file (saved /metrics response), BOM included', () => {
    const body = JSON.stringify(
      [
        { iter: 154, iterLatencyMS: 7.00688362121582, kvCacheStats: { usedNumBlocks: 3, freeNumBlocks: 101253, maxNumBlocks: 101256 }, numActiveRequests: 1 },
        { iter: 155, iterLatencyMS: 6.5, numActiveRequests: 1 },
      ],
      null,
      4,
    );
    const log = parseIterationLogFile(write('metrics.json', `\uFEFF${body}`));
    expect(log.formats).toEqual({ 'iteration-stats-json': 2 });
    expect(log.records.map((r) => [r.iter, r.line, r.kvBlocksFree, r.latencyMs])).toEqual([
      [154, 2, 101253, 7.00688362121582],
      [155, 12, null, 6.5],
    ]);
    expect(body.split('\n').slice(10, 13)).toEqual(['    },', '    {', '        "iter": 155,']);
  });

  it('reads a log whose first line starts with `[` line by line', () => {
    const log = parseIterationLogFile(write('bracket.log', `[TensorRT-LLM][INFO] starting\n${TEXT_LINE(3)}\n`));
    expect(log.records.map((r) => r.iter)).toEqual([2]);
    expect(log.skippedLines).toBe(1);
  });
});
