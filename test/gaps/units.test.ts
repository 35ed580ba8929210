import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { parseDurationNs } from '../../src/gaps/duration.js';
import { innermostSegments, layeredSegments, primaryCause, splitGapCauses } from '../../src/gaps/attributeCauses.js';
import { isBlockingSyncApi, nvtxCauseName, ThreadRanges } from '../../src/gaps/hostCauses.js';
import type { IntervalSet } from '../../src/math/intervals.js';

const set = (pairs: [number, number][]): IntervalSet => ({ starts: Float64Array.from(pairs, (p) => p[0]), ends: Float64Array.from(pairs, (p) => p[1]) });
const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

describe('parseDurationNs', () => {
  it('parses ns/us/ms/s with decimals and optional space', () => {
    expect(parseDurationNs('500ns')).toBe(500);
    expect(parseDurationNs('100us')).toBe(100_000);
    expect(parseDurationNs('100µs')).toBe(100_000);
    expect(parseDurationNs('1ms')).toBe(1_000_000);
    expect(parseDurationNs('2.5 ms')).toBe(2_500_000);
    expect(parseDurationNs('0.5s')).toBe(500_000_000);
    expect(parseDurationNs('1MS')).toBe(1_000_000);
    expect(parseDurationNs('.5us')).toBe(500);
    expect(parseDurationNs('0')).toBe(0);
    expect(parseDurationNs('0ns')).toBe(0);
  });
  it('refuses bare numbers, unknown units, negatives and junk with a UsageError', () => {
    for (const bad of ['100', '1.5', '-1ms', '1 m', '1h', 'ms', '', 'abc', '1ms2', '1e400s', 'NaNms']) {
      expect(() => parseDurationNs(bad), bad).toThrow(UsageError);
    }
    expect(() => parseDurationNs('100')).toThrow(/needs a unit/);
  });
});

describe('isBlockingSyncApi (by name, not syncType)', () => {
  it('recognises synchronize calls and synchronous memcpys', () => {
    for (const n of ['cudaStreamSynchronize_v3020', 'cudaDeviceSynchronize_v3020', 'cudaEventSynchronize', 'cuStreamSynchronize', 'cuCtxSynchronize', 'cuEventSynchronize', 'cudaMemcpy_v3020', 'cudaMemcpy2D', 'cuMemcpyDtoH_v2', 'cudaMemcpy_ptds', 'cudaThreadSynchronize']) {
      expect(isBlockingSyncApi(n), n).toBe(true);
    }
  });
  it('leaves async and non-blocking calls out', () => {
    for (const n of ['cudaMemcpyAsync_v3020', 'cuMemcpyHtoDAsync_v2', 'cudaMemcpyAsync_ptsz', 'cudaStreamQuery', 'cudaEventQuery_v3020', 'cudaLaunchKernel_v7000', 'cudaStreamWaitEvent', 'cudaMemsetAsync', 'cudaGraphLaunch_v10000']) {
      expect(isBlockingSyncApi(n), n).toBe(false);
    }
  });
});

describe('nvtxCauseName', () => {
  it('collapses per-iteration labels and keeps plain names', () => {
    expect(nvtxCauseName('[Executor] _forward_step 12: 0 ctx reqs, 0 ctx tokens, 16 gen reqs')).toBe('[Executor] _forward_step');
    expect(nvtxCauseName('[Executor] _forward_step: 1 ctx reqs, 2 gen reqs')).toBe('[Executor] _forward_step');
    expect(nvtxCauseName('_sample_async')).toBe('_sample_async');
    expect(nvtxCauseName('execute_context_1(512)_generation_15(15)')).toBe('execute_context');
    expect(nvtxCauseName('execute_new_2_cached_14')).toBe('execute_new');
    expect(nvtxCauseName('aten::view, op_id = 314290')).toBe('aten::view');
    expect(nvtxCauseName('aten::native_layer_norm, seq = 12, op_id = 7')).toBe('aten::native_layer_norm');
    expect(nvtxCauseName('FSDP::pre_forward (shared), op_id = 3')).toBe('FSDP::pre_forward (shared)');
    expect(nvtxCauseName('step2')).toBe('step2');
    expect(nvtxCauseName('step[DECODE bs=16]')).toBe('step[DECODE]');
    expect(nvtxCauseName('step[EXTEND bs=1 toks=768]')).toBe('step[EXTEND]');
    expect(nvtxCauseName('step[idle]')).toBe('step[idle]');
    expect(nvtxCauseName('scheduler.run_batch')).toBe('scheduler.run_batch');
    expect(nvtxCauseName(null)).toBe('(unnamed)');
    expect(nvtxCauseName('  ')).toBe('(unnamed)');
  });
});

describe('splitGapCauses', () => {
  it('gives each ns to the highest-priority cause covering it; parts add up to the gap', () => {
    // gap [100, 200)
    const r = splitGapCauses({
      startNs: 100,
      endNs: 200,
      gc: set([[90, 120]]), // 20
      gilWait: set([[110, 140]]), // 20 (110..120 already gc)
      sync: set([[130, 150]]), // 10 (130..140 gil)
      launchApiStartNs: 180, // [180, 200) = 20
      nvtx: { starts: [100, 150, 190], ends: [150, 190, 200], names: ['_schedule', '_sample_async', '_x'] }, // 150..180 = 30 to _sample_async
    });
    expect(r.causes).toEqual({ gc: 20, gil_wait: 20, sync: 10, launch_late: 20, 'nvtx:_sample_async': 30 });
    expect(sum(r.causes)).toBe(100);
    expect(r.cause).toBe('nvtx:_sample_async');
  });
  it('puts uncovered time in unattributed', () => {
    const r = splitGapCauses({ startNs: 0, endNs: 1000, sync: set([[0, 300]]) });
    expect(r.causes).toEqual({ sync: 300, unattributed: 700 });
    expect(r.cause).toBe('unattributed');
  });
  it('launch_late needs the call to start strictly inside the gap', () => {
    expect(splitGapCauses({ startNs: 0, endNs: 100, launchApiStartNs: 0 }).causes).toEqual({ unattributed: 100 });
    expect(splitGapCauses({ startNs: 0, endNs: 100, launchApiStartNs: -5 }).causes).toEqual({ unattributed: 100 });
    expect(splitGapCauses({ startNs: 0, endNs: 100, launchApiStartNs: 100 }).causes).toEqual({ unattributed: 100 });
    expect(splitGapCauses({ startNs: 0, endNs: 100, launchApiStartNs: 60 }).causes).toEqual({ launch_late: 40, unattributed: 60 });
  });
  it('ignores cause ranges outside the gap', () => {
    const r = splitGapCauses({ startNs: 50, endNs: 60, gc: set([[0, 50], [60, 70]]), gilWait: set([[0, 10]]) });
    expect(r.causes).toEqual({ unattributed: 10 });
  });
  it('breaks ties toward the higher-priority cause', () => {
    expect(primaryCause({ sync: 5, 'nvtx:a': 5 })).toBe('sync');
    expect(primaryCause({ 'nvtx:b': 5, 'nvtx:a': 5 })).toBe('nvtx:a');
  });
});

describe('innermostSegments / layeredSegments', () => {
  it('picks the innermost (latest-started) open range at each instant', () => {
    const ranges = [
      { start: 0, end: 1000, name: 'step' },
      { start: 100, end: 200, name: '_schedule' },
      { start: 300, end: 600, name: '_sample_async' },
      { start: 400, end: 450, name: 'inner' },
    ];
    expect(innermostSegments(ranges, 150, 500)).toEqual({
      starts: [150, 200, 300, 400, 450],
      ends: [200, 300, 400, 450, 500],
      names: ['_schedule', 'step', '_sample_async', 'inner', '_sample_async'],
    });
  });
  it('leaves instants with no open range uncovered, merges equal neighbours', () => {
    const ranges = [
      { start: 0, end: 10, name: 'a' },
      { start: 10, end: 20, name: 'a' },
      { start: 30, end: 40, name: 'b' },
    ];
    expect(innermostSegments(ranges, 5, 35)).toEqual({ starts: [5, 30], ends: [20, 35], names: ['a', 'b'] });
  });
  it('layers threads: later threads only fill what earlier ones left open', () => {
    const first = { starts: [0, 50], ends: [20, 60], names: ['x', 'y'] };
    const second = { starts: [10], ends: [70], names: ['z'] };
    expect(layeredSegments([first, second])).toEqual({ starts: [0, 20, 50, 60], ends: [20, 50, 60, 70], names: ['x', 'z', 'y', 'z'] });
  });
});

describe('ThreadRanges cursor', () => {
  it('returns the ranges overlapping each query, in start order, for increasing queries', () => {
    const tr = new ThreadRanges([0, 10, 30, 35, 100], [1000, 20, 40, 36, 110], [0, 1, 2, 3, 4]);
    const names = (a: number, b: number) => tr.overlapping(a, b).map((i) => tr.name[i]);
    expect(names(5, 12)).toEqual([0, 1]);
    expect(names(20, 31)).toEqual([0, 2]);
    expect(names(36, 200)).toEqual([0, 2, 4]);
    expect(names(105, 106)).toEqual([0, 4]);
    // going back in time restarts the cursor
    expect(names(5, 12)).toEqual([0, 1]);
  });
});
