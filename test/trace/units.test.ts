import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { completeEvent, counterEvent, metadataEvent, usText } from '../../src/trace/events.js';
import { Lanes } from '../../src/trace/lanes.js';
import { CAUSE_COLORS, PHASE_COLORS, causeColor } from '../../src/trace/colors.js';
import { batchComposition } from '../../src/trace/iterationSlices.js';
import { parseItersOption } from '../../src/trace/itersOption.js';
import { TraceFileWriter } from '../../src/trace/writer.js';
import { TrackRegistry } from '../../src/trace/tracks.js';
import { formatBytes } from '../../src/trace/format.js';
import { UsageError } from '../../src/errors.js';

/** The reserved colour names of catapult's color_scheme (the only `cname` values viewers accept). */
const RESERVED_COLORS = new Set([
  'thread_state_uninterruptible', 'thread_state_iowait', 'thread_state_running', 'thread_state_runnable', 'thread_state_sleeping',
  'thread_state_unknown', 'background_memory_dump', 'light_memory_dump', 'detailed_memory_dump', 'vsync_highlight_color',
  'generic_work', 'good', 'bad', 'terrible', 'black', 'grey', 'white', 'yellow', 'olive', 'rail_response', 'rail_animation',
  'rail_idle', 'rail_load', 'startup', 'heap_dump_stack_frame', 'heap_dump_object_type', 'heap_dump_child_node_arrow',
  'cq_build_running', 'cq_build_passed', 'cq_build_failed', 'cq_build_abandoned', 'cq_build_attempt_runnig',
  'cq_build_attempt_passed', 'cq_build_attempt_failed',
]);

describe('usText: ns to microsecond JSON text', () => {
  it('is the exact decimal of ns / 1000 for any non-negative integer ns', () => {
    for (const [n, text] of [
      [0, '0'],
      [1, '0.001'],
      [10, '0.010'],
      [999, '0.999'],
      [1000, '1'],
      [1001, '1.001'],
      [20031780, '20031.780'],
      [20031783, '20031.783'],
      [9_007_199_254_740_991, '9007199254740.991'],
    ] as const) {
      expect(usText(n)).toBe(text);
    }
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (n) => {
        const t = usText(n);
        expect(t).toMatch(/^\d+(\.\d{3})?$/);
        expect(BigInt(t.replace('.', '')) * (t.includes('.') ? 1n : 1000n)).toBe(BigInt(n));
      }),
    );
  });
  it('falls back to the float for negative or fractional input', () => {
    expect(usText(-1500)).toBe('-1.5');
    expect(usText(1500.5)).toBe('1.5005');
  });
});

describe('event text', () => {
  it('escapes any name and round-trips through JSON.parse', () => {
    const names = ['plain', 'with "quotes" and \\backslash\\', 'new\nline\ttab', 'ctrl \u0001 \u001f', 'ls \u2028 ps \u2029', 'lone \ud800 surrogate', 'ünïcødé 名前 🚀', '</script>'];
    for (const name of names) {
      const e = JSON.parse(completeEvent({ pid: 1, tid: 2, startNs: 1500, endNs: 4000, name, cat: 'c"at', cname: 'good', args: { k: name } }));
      expect(e).toEqual({ ph: 'X', pid: 1, tid: 2, ts: 1.5, dur: 2.5, name, cat: 'c"at', cname: 'good', args: { k: name } });
    }
    // Lone surrogates are written as \uXXXX escapes: the file stays valid UTF-8.
    expect(completeEvent({ pid: 1, tid: 1, startNs: 0, endNs: 1, name: 'a\ud800b', cat: 'k' })).toContain('"a\\ud800b"');
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (name) => {
        const text = completeEvent({ pid: 1, tid: 1, startNs: 0, endNs: 1, name, cat: 'k' });
        expect(JSON.parse(text).name).toBe(name);
      }),
    );
  });
  it('metadata and counter events', () => {
    expect(JSON.parse(metadataEvent('thread_name', 5, 6, 'GPU 0 stream "7"'))).toEqual({ ph: 'M', name: 'thread_name', pid: 5, tid: 6, args: { name: 'GPU 0 stream "7"' } });
    expect(JSON.parse(metadataEvent('process_sort_index', 5, null, 3))).toEqual({ ph: 'M', name: 'process_sort_index', pid: 5, args: { sort_index: 3 } });
    expect(JSON.parse(counterEvent(1, 2, 1234567, 'context tokens', { value: 768 }))).toEqual({ ph: 'C', pid: 1, tid: 2, ts: 1234.567, name: 'context tokens', args: { value: 768 } });
  });
});

describe('Lanes (overflow tracks for overlapping slices)', () => {
  it('keeps sequential and touching slices on lane 0', () => {
    const l = new Lanes();
    expect([l.assign(0, 10), l.assign(10, 20), l.assign(25, 25), l.assign(25, 30)]).toEqual([0, 0, 0, 0]);
    expect(l.count).toBe(1);
  });
  it('moves a slice that starts before the previous one ends to the first lane where it fits', () => {
    const l = new Lanes();
    expect(l.assign(0, 100)).toBe(0);
    expect(l.assign(68, 200)).toBe(1); // 32 ns of jitter
    expect(l.assign(90, 95)).toBe(2); // inside both: a new lane, never nested
    expect(l.assign(100, 150)).toBe(0);
    expect(l.assign(150, 160)).toBe(0);
    expect(l.assign(200, 210)).toBe(0);
    expect(l.count).toBe(3);
  });
  it('every lane is strictly sequential whatever the input (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(1000), fc.nat(50)), { maxLength: 200 }), (raw) => {
        const iv = raw.map(([s, d]) => [s, s + d] as const).sort((a, b) => a[0] - b[0]);
        const l = new Lanes();
        const lastEnd: number[] = [];
        for (const [s, e] of iv) {
          const k = l.assign(s, e);
          expect(k).toBeLessThanOrEqual(lastEnd.length);
          if (k < lastEnd.length) expect(s).toBeGreaterThanOrEqual(lastEnd[k]);
          for (let j = 0; j < k; j++) expect(s).toBeLessThan(lastEnd[j]); // first fit
          lastEnd[k] = e;
        }
      }),
    );
  });
  it('refuses slices out of start order', () => {
    const l = new Lanes();
    l.assign(10, 20);
    expect(() => l.assign(5, 6)).toThrow(/out of start order/);
  });
});

describe('colours, names, options', () => {
  it('every cause and phase maps to a reserved trace-viewer colour', () => {
    for (const c of [...Object.values(CAUSE_COLORS), ...Object.values(PHASE_COLORS)]) expect(RESERVED_COLORS.has(c), c).toBe(true);
    expect(causeColor('gc')).toBe('terrible');
    expect(causeColor('gil_wait')).toBe('detailed_memory_dump');
    expect(causeColor('sync')).toBe('thread_state_iowait');
    expect(causeColor('launch_late')).toBe('yellow');
    expect(causeColor('nvtx:_sample_async')).toBe('thread_state_runnable');
    expect(causeColor('unattributed')).toBe('generic_work');
    expect(causeColor('something new')).toBe('generic_work');
  });
  it('batch composition', () => {
    expect(batchComposition({ contextRequests: 1, contextTokens: 768, generationRequests: 15 })).toBe('1 ctx (768 tok), 15 gen');
    expect(batchComposition({ contextRequests: 0, contextTokens: 0, generationRequests: 16 })).toBe('0 ctx, 16 gen');
    expect(batchComposition({ contextRequests: 2, contextTokens: null, generationRequests: 3 })).toBe('2 ctx, 3 gen');
    expect(batchComposition({ contextRequests: null, contextTokens: null, generationRequests: 4 })).toBe('4 gen');
    expect(batchComposition({ contextRequests: null, contextTokens: null, generationRequests: null })).toBeNull();
  });
  it('--iters A-B', () => {
    expect(parseItersOption('105-107')).toEqual({ first: 105, last: 107 });
    expect(parseItersOption(' 3 - 5 ')).toEqual({ first: 3, last: 5 });
    expect(parseItersOption('7')).toEqual({ first: 7, last: 7 });
    for (const bad of ['5-3', 'a-b', '-1', '1-2-3', '', '1,2']) expect(() => parseItersOption(bad), bad).toThrow(UsageError);
  });
  it('formatBytes', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(3553518)).toBe('3.4 MiB');
  });
});

describe('TraceFileWriter', () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'iterscope-writer-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('streams: chunks reach the file before close, and the result is one JSON object', () => {
    const path = join(dir, 'big.json');
    const w = new TraceFileWriter(path);
    const tracks = new TrackRegistry((j) => w.event(j));
    tracks.process(1, 'p', 0);
    const tid = tracks.thread('t', 1, 't', 0);
    expect(tracks.thread('t', 1, 'other name', 5)).toBe(tid); // declared once
    for (let i = 0; i < 30_000; i++) w.event(completeEvent({ pid: 1, tid, startNs: i * 1000, endNs: i * 1000 + 500, name: `kernel_${i}`, cat: 'kernel' }));
    // Flushed while writing, to a temporary file beside the target (renamed over it by close).
    const partial = readdirSync(dir).filter((f) => f.startsWith('.big.json.'));
    expect(partial).toHaveLength(1);
    expect(statSync(join(dir, partial[0])).size).toBeGreaterThan(1_000_000);
    expect(existsSync(path)).toBe(false);
    w.close({ generator: 'test' });
    const t = JSON.parse(readFileSync(path, 'utf8'));
    expect(Object.keys(t)).toEqual(['traceEvents', 'otherData']);
    expect(t.otherData).toEqual({ generator: 'test' });
    expect(t.traceEvents).toHaveLength(30_004);
    expect(w.events).toBe(30_004);
    expect(statSync(path).size).toBe(w.bytes);
    expect(readdirSync(dir).filter((f) => f.startsWith('.big.json.'))).toEqual([]);
    expect(readFileSync(path, 'utf8').endsWith('{"generator":"test"}}\n')).toBe(true);
  });
  it('multi-byte names and an event larger than the buffer are written whole, in order', () => {
    const path = join(dir, 'wide.json');
    const w = new TraceFileWriter(path);
    // 3-byte (CJK) and 4-byte (surrogate pair) UTF-8 names around a chunk boundary, and one
    // event whose text alone exceeds the ~1 MB buffer (a demangled template signature can be huge).
    const names = [...Array.from({ length: 40_000 }, (_, i) => `${"核".repeat((i * 7919) % 500)}_${i}_🚀`), `kernel<${'ä'.repeat(700_000)}>`, 'after'];
    names.forEach((name, i) => w.event(completeEvent({ pid: 1, tid: 2, startNs: i, endNs: i + 1, name, cat: 'kernel' })));
    w.close();
    const t = JSON.parse(readFileSync(path, 'utf8')) as { traceEvents: { name: string }[] };
    expect(t.traceEvents.map((e) => e.name)).toEqual(names);
    expect(statSync(path).size).toBe(w.bytes);
  });
  it('an empty trace is valid JSON; abort removes the partial file', () => {
    const p1 = join(dir, 'empty.json');
    const w1 = new TraceFileWriter(p1);
    w1.close();
    expect(JSON.parse(readFileSync(p1, 'utf8'))).toEqual({ traceEvents: [], otherData: {} });
    const p2 = join(dir, 'partial.json');
    const w2 = new TraceFileWriter(p2);
    w2.event('{"ph":"M","name":"process_name","pid":1,"args":{"name":"x"}}');
    w2.abort();
    expect(existsSync(p2)).toBe(false);
  });
});
