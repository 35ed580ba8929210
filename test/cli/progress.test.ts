import { describe, expect, it } from 'vitest';
import { progress } from '../../src/progress.js';

function fakeStream(isTTY: boolean, columns = 100) {
  const writes: string[] = [];
  return { writes, stream: { isTTY, columns, write: (s: string) => writes.push(s) } as unknown as NodeJS.WriteStream };
}

describe('progress (stderr bar, terminals only)', () => {
  it('draws nothing when the stream is not a terminal', () => {
    const f = fakeStream(false);
    const p = progress('x', 3, { stream: f.stream });
    p.tick();
    p.tick();
    p.done();
    expect(p.enabled).toBe(false);
    expect(f.writes).toEqual([]);
  });

  it('on a terminal: one carriage-return line, capped to the width, cleared at the end', () => {
    const f = fakeStream(true);
    const p = progress('iterscope: analysing', 4, { stream: f.stream, enabled: true, intervalMs: 0, unit: 'exports' });
    p.tick(1, 'a.sqlite');
    p.update(4, 'b.sqlite');
    p.done();
    expect(f.writes[0]).toMatch(/^\r.*\[######\.+\] 1\/4 exports a\.sqlite\x1b\[K$/);
    expect(f.writes[1]).toContain('[########################] 4/4');
    expect(f.writes.at(-1)).toBe('\r\x1b[K');
  });

  it('never wraps: the line is cut to the terminal width', () => {
    const f = fakeStream(true, 40);
    const p = progress('iterscope: analysing', 2, { stream: f.stream, enabled: true, intervalMs: 0 });
    p.tick(1, '/a/very/long/path/to/some/export/trace.rank0.sqlite');
    expect(f.writes[0].replace('\x1b[K', '').length).toBeLessThanOrEqual(40);
  });
});
