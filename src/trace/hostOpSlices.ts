import type { ExportHandle } from '../../queries/handle.js';
import { kinetoCpuOpNameIds, selectKinetoCpuOps } from '../../queries/kinetoCpuOps.js';
import { forEachRow } from '../../queries/run.js';
import { loadStrings } from '../../queries/strings.js';
import { completeEvent } from './events.js';
import type { TrackRegistry } from './tracks.js';

/**
 * The PyTorch profiler's aten ops (a converted Kineto trace's `KINETO_CPU_OPS`) as a host track
 * per thread, `aten ops (thread T)`, in the process's own trace process (the one its iterations
 * are on). Ops nest by time on their thread, so Perfetto stacks them as the profiler recorded
 * them. Returns the number of slices (0 when the input has no aten ops).
 */
export function writeHostOps(handle: ExportHandle, tracks: TrackRegistry, emit: (json: string) => void, window?: { startNs: number; endNs: number }): number {
  if (!handle.hasTable('KINETO_CPU_OPS')) return 0;
  // Names first: no other query may run on the connection while the scan below is open.
  const names = loadStrings(handle, kinetoCpuOpNameIds(handle));
  let n = 0;
  forEachRow(handle, selectKinetoCpuOps(handle), (_rowid: number, pid: number, tid: number, start: number, end: number, selfNs: number | null, nameId: number) => {
    if (window && (end <= window.startNs || start >= window.endNs)) return;
    tracks.process(pid, `Iterations (pid ${pid})`, 0);
    const track = tracks.thread(`aten:${pid}:${tid}`, pid, `aten ops (thread ${tid})`, 100);
    emit(completeEvent({ pid, tid: track, startNs: start, endNs: end, name: names.get(nameId) ?? `#${nameId}`, cat: 'aten', args: { selfNs } }));
    n++;
  });
  return n;
}
