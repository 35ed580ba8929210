import { metadataEvent } from './events.js';

/**
 * Trace pids of the GPU processes: `GPU_PID_BASE + deviceId`. Above Linux's largest pid_max
 * (2^22), so they never collide with the OS pids used for the iteration processes.
 */
export const GPU_PID_BASE = 5_000_000;
/** Trace tids are allocated from here up, unique over the whole file: Perfetto keys threads by tid alone. */
export const TID_BASE = 6_000_000;

export const gpuPid = (deviceId: number): number => GPU_PID_BASE + deviceId;

/**
 * Processes and threads (tracks) of the trace. Each is announced with `M` events
 * (`process_name`/`process_sort_index`, `thread_name`/`thread_sort_index`) the first time it is
 * used, so tracks appear only when they hold something.
 */
export class TrackRegistry {
  private nextTid = TID_BASE + 1;
  private readonly processes = new Set<number>();
  private readonly threads = new Map<string, number>();

  constructor(private readonly emit: (json: string) => void) {}

  /** Declares a process (once). */
  process(pid: number, name: string, sortIndex: number): void {
    if (this.processes.has(pid)) return;
    this.processes.add(pid);
    this.emit(metadataEvent('process_name', pid, null, name));
    this.emit(metadataEvent('process_sort_index', pid, null, sortIndex));
  }

  /** The tid of the track `key` in `pid`, declared (with `name` and `sortIndex`) on first use. */
  thread(key: string, pid: number, name: string, sortIndex: number): number {
    let tid = this.threads.get(key);
    if (tid !== undefined) return tid;
    tid = this.nextTid++;
    this.threads.set(key, tid);
    this.emit(metadataEvent('thread_name', pid, tid, name));
    this.emit(metadataEvent('thread_sort_index', pid, tid, sortIndex));
    return tid;
  }

  get processCount(): number {
    return this.processes.size;
  }

  get trackCount(): number {
    return this.threads.size;
  }
}

/** Process of device `d`, named `GPU <d>`, sorted after the iteration processes. */
export function declareGpuProcess(tracks: TrackRegistry, deviceId: number): number {
  const pid = gpuPid(deviceId);
  tracks.process(pid, `GPU ${deviceId}`, 1000 + deviceId);
  return pid;
}

/** Lane `lane` of stream `s` on device `d`: `GPU d stream s`, overflow lanes `... (overlap k)`. */
export function streamTrack(tracks: TrackRegistry, deviceId: number, streamId: number | null, lane: number): number {
  const pid = declareGpuProcess(tracks, deviceId);
  const s = streamId ?? -1;
  const base = streamId === null ? `GPU ${deviceId} stream ?` : `GPU ${deviceId} stream ${streamId}`;
  return tracks.thread(`gpu:${deviceId}:${s}:${lane}`, pid, lane === 0 ? base : `${base} (overlap ${lane})`, 1 + (s + 1) * 100 + lane);
}

/** `GPU d idle gaps`, the first track of the device's process. */
export function gapTrack(tracks: TrackRegistry, deviceId: number): number {
  const pid = declareGpuProcess(tracks, deviceId);
  return tracks.thread(`gaps:${deviceId}`, pid, `GPU ${deviceId} idle gaps`, 0);
}

/** `GPU d layers` (`trace --layers`), after the idle gaps and before the streams; overflow lanes `... (overlap k)`. */
export function layerTrack(tracks: TrackRegistry, deviceId: number, lane: number): { pid: number; tid: number } {
  const pid = declareGpuProcess(tracks, deviceId);
  const base = `GPU ${deviceId} layers`;
  return { pid, tid: tracks.thread(`layers:${deviceId}:${lane}`, pid, lane === 0 ? base : `${base} (overlap ${lane})`, 1 + lane) };
}
