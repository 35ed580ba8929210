import type { CpuOpColumns } from '../kineto/hostSide.js';
import { completeEvent } from './events.js';
import type { TrackRegistry } from './tracks.js';

/**
 * The PyTorch profiler's aten ops (a converted Kineto trace's `KINETO_CPU_OPS`, the timeline's
 * `atenOps`) as a host track per thread, `aten ops (thread T)`, in the process's own trace
 * process (the one its iterations are on). Ops nest by time on their thread, so Perfetto stacks
 * them as the profiler recorded them. Returns the number of slices (0 without aten ops).
 */
export function writeHostOps(ops: CpuOpColumns | null, tracks: TrackRegistry, emit: (json: string) => void, window?: { startNs: number; endNs: number }): number {
  if (!ops) return 0;
  let n = 0;
  for (let i = 0; i < ops.count; i++) {
    const start = ops.start[i];
    const end = ops.end[i];
    if (window && (end <= window.startNs || start >= window.endNs)) continue;
    const pid = ops.pid[i];
    const tid = ops.tid[i];
    const nameId = ops.nameId[i];
    tracks.process(pid, `Iterations (pid ${pid})`, 0);
    const track = tracks.thread(`aten:${pid}:${tid}`, pid, `aten ops (thread ${tid})`, 100);
    emit(completeEvent({ pid, tid: track, startNs: start, endNs: end, name: ops.names.get(nameId) ?? `#${nameId}`, cat: 'aten', args: { selfNs: ops.selfNs[i] } }));
    n++;
  }
  return n;
}
