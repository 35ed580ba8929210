import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { detectInput } from '../../src/export/detectInput.js';
import { fixture } from '../helpers/fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'iterscope-detect-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, content: string | Buffer) => {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
};

describe('detectInput: by content, not by name', () => {
  it('an nsys export, whatever its extension', () => {
    expect(detectInput(fixture('pytorch-torch-trace', 'trace.sqlite'))).toBe('nsys-export');
  });
  it('a Kineto trace: a JSON object (BOM and whitespace allowed), an array of objects, or gzip under any name', () => {
    expect(detectInput(fixture('pytorch-torch-only', 'trace.json'))).toBe('kineto-trace');
    expect(detectInput(file('bom.txt', '\ufeff \n {"traceEvents": []}'))).toBe('kineto-trace');
    expect(detectInput(file('array.json', '[ {"ph": "X"}]'))).toBe('kineto-trace');
    expect(detectInput(file('trace.bin', gzipSync('{"traceEvents": []}')))).toBe('kineto-trace');
  });
  it('an .nsys-rep that is not SQLite is a report; logs, text and missing paths go to the export opener (its messages)', () => {
    expect(detectInput(file('run.nsys-rep', 'binary report'))).toBe('nsys-report');
    expect(detectInput(fixture('pytorch-torch-only', 'executor.log'))).toBe('nsys-export');
    expect(detectInput(file('notes.txt', 'kernel,time\n'))).toBe('nsys-export');
    expect(detectInput(join(dir, 'missing.json'))).toBe('nsys-export');
    expect(detectInput(dir)).toBe('nsys-export');
  });
});
