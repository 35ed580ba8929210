/**
 * The streaming scanner: the same events whatever the chunking, top-level fields kept exactly
 * (baseTimeNanoseconds beyond 2^53), and a typed error for truncated or non-Kineto JSON.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { KinetoJsonScanner, TraceScanError } from '../../src/kineto/trace/jsonEventScanner.js';
import { readKinetoTrace, type KinetoEvent } from '../../src/kineto/trace/readKineto.js';
import { microsToNs } from '../../src/kineto/trace/kinetoEvents.js';
import { KinetoTraceError } from '../../src/errors.js';

const DOC = `{
  "schemaVersion": 1,
  "deviceProperties": [ { "id": 0, "name": "GPU \\"zero\\" {[", "numSms": 132 } ],
  "baseTimeNanoseconds": 1790857026000000001,
  "traceEvents": [
  { "ph": "X", "cat": "cpu_op", "name": "aten::mm}]\\\\", "pid": 1, "tid": 2, "ts": 4557702244787.773, "dur": 4.467, "args": { "Input Dims": [[16], []] } },
  {"ph":"X","cat":"kernel","name":"k<1>(x)","pid":0,"tid":7,"ts":4557702244790.001,"dur":0.768,"args":{"correlation":8,"grid":[1,2,3]}},
  { "name": "thread_name", "ph": "M", "pid": 1, "tid": 2, "args": { "name": "thread 2 (python3)" } }
  ],
  "traceName": "x.json"
}`;

function scan(chunks: string[]) {
  const events: unknown[] = [];
  const top = new Map<string, string>();
  const s = new KinetoJsonScanner({ event: (t) => events.push(t), topLevel: (k, t) => top.set(k, t) }, new Set(['schemaVersion', 'deviceProperties', 'baseTimeNanoseconds']));
  for (const c of chunks) s.write(c);
  s.end();
  return { events, top };
}

describe('KinetoJsonScanner', () => {
  const whole = scan([DOC]);

  it('hands out each event and the kept top-level values', () => {
    expect(whole.events.map((e) => (e as KinetoEvent).name)).toEqual(['aten::mm}]\\', 'k<1>(x)', 'thread_name']);
    expect(whole.top.get('baseTimeNanoseconds')).toBe('1790857026000000001');
    expect(JSON.parse(whole.top.get('deviceProperties')!)[0].name).toBe('GPU "zero" {[');
    expect(whole.top.has('traceName')).toBe(false);
  });

  it('gives the same result for every split of the text into two chunks, and one char at a time', () => {
    for (let cut = 0; cut <= DOC.length; cut++) {
      const r = scan([DOC.slice(0, cut), DOC.slice(cut)]);
      expect(r.events, `cut at ${cut}`).toEqual(whole.events);
      expect([...r.top], `cut at ${cut}`).toEqual([...whole.top]);
    }
    expect(scan([...DOC]).events).toEqual(whole.events);
  });

  it.each([
    ['a truncated file', DOC.slice(0, DOC.indexOf('"kernel"')), /truncated: the file ends inside traceEvents after 1 events/],
    ['a file cut after the array', DOC.slice(0, DOC.lastIndexOf('"traceName"')), /truncated/],
    ['a JSON array', '[{"ph":"X"}]', /not a JSON object/],
    ['an object without traceEvents', '{"a": [1, 2], "b": {"c": 3}}', /without a "traceEvents" array/],
    ['traceEvents that is not an array', '{"traceEvents": {"a": 1}}', /not an array/],
    ['an array element that is not an object', '{"traceEvents": [1, 2]}', /non-object element/],
    ['an empty document', '   ', /empty JSON document/],
  ])('rejects %s', (_name, text, message) => {
    expect(() => scan([text])).toThrow(TraceScanError);
    expect(() => scan([text])).toThrow(message);
  });
});

/**
 * Text that looks like the boundary between two events (`},` then `{`) inside a name or inside a
 * nested array: the fast path cuts there, the parse of the cut run fails, and an earlier boundary
 * (or the slow path) is taken, so the events are exactly JSON.parse's. Names hold `"` and braces in
 * real traces: kineto's output_json.cpp escapes them (`escapeQuotesForJSON`: "dynamo-generated
 * co_filenames like {"device": "cpu"} surfaced with with_stack=True", pytorch/pytorch#146900).
 */
describe('KinetoJsonScanner on boundary-like text inside strings and nested arrays', () => {
  const event = (i: number) => `
  {
    "ph": "X", "cat": "python_function", "name": "f({\\"device\\": \\"cpu\\"},\\n  {\\"x\\": ${i}})},   {", "pid": 1, "tid": 2,
    "ts": ${1000 + i}.125, "dur": 1.5,
    "args": {
      "Python id": ${i}, "Input Dims": [{"a": [1]},
  {"b": 2}], "Concrete Inputs": ["},", "{"]
    }
  }`;
  const doc = `{"schemaVersion": 1, "traceEvents": [${Array.from({ length: 300 }, (_, i) => event(i)).join(',')}
  ], "traceName": "t.json"}`;
  const expected = (JSON.parse(doc) as { traceEvents: unknown[] }).traceEvents;

  it.each([1, 97, 4096, 65536, doc.length])('gives JSON.parse events in chunks of %i chars', (size) => {
    const chunks: string[] = [];
    for (let i = 0; i < doc.length; i += size) chunks.push(doc.slice(i, i + size));
    expect(scan(chunks).events).toEqual(expected);
  });
});

/**
 * The selective way (a sink with `wants`): in Kineto's layout (each element on its own lines), the
 * elements the sink rejects go unparsed; every wanted element is handed out, in order, whatever the
 * chunking; all elements are counted.
 */
describe('KinetoJsonScanner with a selecting sink', () => {
  const events = Array.from({ length: 400 }, (_, i) =>
    i % 3 === 0
      ? { ph: 'X', cat: 'kernel', name: `k${i}<{lambda()#3}::operator()}, {x}>`, pid: 0, tid: 7, ts: 1000 + i, dur: 1.5, args: { correlation: i, grid: [1, 2, 3] } }
      : { ph: 'X', cat: 'cpu_op', name: `op${i} }, {`, pid: 1, tid: 2, ts: 1000 + i, dur: 2, args: { 'Input Dims': [[16], []] } },
  );
  // libkineto's layout: `"traceEvents": [` newline, elements separated by `},` newline and two spaces.
  const doc = `{\n  "schemaVersion": 1,\n  "traceEvents": [\n  ${events.map((e) => JSON.stringify(e, null, 1).replace(/\n/g, '\n    ')).join(',\n  ')}\n  ],\n  "traceName": "t.json"\n}`;
  const isKernel = (e: unknown) => (e as KinetoEvent).cat === 'kernel';

  function selectScan(chunks: string[]) {
    const out: unknown[] = [];
    const s = new KinetoJsonScanner({ event: (e) => out.push(e), topLevel: () => {}, wants: (text) => text.includes('"kernel"') }, new Set());
    for (const c of chunks) s.write(c);
    s.end();
    return { out, count: s.eventCount, unparsed: s.unparsedCount };
  }

  it.each([1 << 20, 4096, 333, 64])('hands out every kernel, in order, in chunks of %i chars, and counts every element', (size) => {
    const chunks: string[] = [];
    for (let i = 0; i < doc.length; i += size) chunks.push(doc.slice(i, i + size));
    const r = selectScan(chunks);
    expect(r.out.filter(isKernel)).toEqual(events.filter(isKernel));
    expect(r.count).toBe(events.length);
    // What was handed out is the file's events in order (unwanted ones only where the buffer's tail was read the slow way).
    let k = 0;
    for (const e of r.out) {
      while (k < events.length && JSON.stringify(events[k]) !== JSON.stringify(e)) k++;
      expect(k, 'handed out in file order').toBeLessThan(events.length);
    }
    expect(r.out.length + r.unparsed).toBe(events.length);
  });

  it('leaves the rejected elements unparsed in one buffer', () => {
    const r = selectScan([doc]);
    expect(r.unparsed).toBe(events.filter((e) => !isKernel(e)).length - (isKernel(events[events.length - 1]) ? 0 : 1));
  });
});

describe('microsToNs', () => {
  it('reads the written digits exactly where ts * 1000 in doubles would not', () => {
    expect(microsToNs(4557702244787.773)).toEqual({ whole: 4557702244787, fracNs: 773 });
    expect(microsToNs(0.768)).toEqual({ whole: 0, fracNs: 768 });
    expect(microsToNs(12)).toEqual({ whole: 12, fracNs: 0 });
    expect(microsToNs(1.9999)).toEqual({ whole: 2, fracNs: 0 });
  });
});

describe('readKinetoTrace', () => {
  const dir = mkdtempSync(join(tmpdir(), 'iterscope-kineto-scan-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('streams a gzip file (detected by its magic bytes, whatever its name) like the plain one', async () => {
    const plain = join(dir, 'trace.json');
    const gz = join(dir, 'trace.bin');
    writeFileSync(plain, DOC);
    writeFileSync(gz, gzipSync(DOC));
    const names = async (p: string) => {
      const out: string[] = [];
      const r = await readKinetoTrace(p, (e) => out.push(e.name ?? ''));
      return { out, base: r.header.baseTimeNs, dev: r.header.deviceProperties.length };
    };
    const a = await names(plain);
    expect(a).toEqual({ out: ['aten::mm}]\\', 'k<1>(x)', 'thread_name'], base: 1790857026000000001n, dev: 1 });
    expect(await names(gz)).toEqual(a);
  });

  it('reports a truncated gzip file as a KinetoTraceError naming the file', async () => {
    const cut = join(dir, 'cut.json.gz');
    const z = gzipSync(DOC);
    writeFileSync(cut, z.subarray(0, z.length - 30));
    const err = await readKinetoTrace(cut, () => {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KinetoTraceError);
    expect((err as Error).message.startsWith(`${cut}: `)).toBe(true);
  });
});
