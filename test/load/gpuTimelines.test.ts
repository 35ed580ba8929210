/**
 * The busy union and device timelines (`gpuTimelines`) are built from the GPU ops once and let go
 * on their own after their last reader (the gaps), not only with the GPU ops: on the 10x bench export
 * they hold 107 MB while the kernel summary makes its buffers.
 */
import { describe, expect, it } from 'vitest';
import { withExport } from '../../src/export/openExport.js';
import { LoadedExport } from '../../src/load/loadedExport.js';
import { fixture } from '../helpers/fixtures.js';

describe('external nsys 2026.2 mfu, 2 GPUs: gpuTimelines let go apart from the GPU ops', () => {
  it('after release the GPU ops stay, and the timelines built again are the same', () => {
    withExport(fixture('external', 'nsys2026.2_mfu_2gpu_before_nsysai.sqlite'), (h) => {
      const loaded = new LoadedExport(h);
      expect(loaded.isLoaded('gpuTimelines')).toBe(false);
      const first = loaded.deviceTimelines();
      const union = loaded.busyUnion();
      expect(first.map((t) => t.deviceId)).toEqual([0, 1]);
      expect(loaded.isLoaded('gpuTimelines')).toBe(true);
      const ops = loaded.gpuOps();
      loaded.release('gpuTimelines');
      expect(loaded.isLoaded('gpuTimelines')).toBe(false);
      expect(loaded.isLoaded('gpuOps')).toBe(true);
      expect(loaded.gpuOps()).toBe(ops);
      const again = loaded.deviceTimelines();
      expect(again).not.toBe(first);
      expect(again).toEqual(first);
      expect(loaded.busyUnion()).toEqual(union);
      // Busy time per device is a union: never more than the device's span.
      for (const t of again) expect(t.busyNs).toBeLessThanOrEqual(t.spanEndNs - t.spanStartNs);
    });
  });
});
