import type { GapRow } from '../gaps/analyzeGaps.js';
import { causeColor } from './colors.js';
import { completeEvent } from './events.js';
import { gapTrack, gpuPid, type TrackRegistry } from './tracks.js';

/** The gap's facts for the details panel (ns, causes, the ops around it, the late launch call). */
export function gapArgs(g: GapRow): Record<string, unknown> {
  const args: Record<string, unknown> = {
    durationNs: g.durationNs,
    causes: g.causes,
    pid: g.pid,
    iter: g.iter,
    phase: g.phase,
  };
  if (g.before) args.before = `${g.before.name} (stream ${g.before.streamId ?? '?'})`;
  if (g.after) args.after = `${g.after.name} (stream ${g.after.streamId ?? '?'})`;
  if (g.launchCall) args.launchCall = { name: g.launchCall.name, tid: g.launchCall.tid, startNs: g.launchCall.startNs };
  if (g.smActivePct != null) args.smActivePct = g.smActivePct;
  return args;
}

/**
 * Reported gaps (analyzeGaps: duration >= its minGap) as slices on `GPU d idle gaps`, named by
 * primary cause and coloured by it (colors.ts). A device's gaps are holes between its busy
 * intervals, so they never overlap one another.
 */
export function writeGaps(gaps: readonly GapRow[], tracks: TrackRegistry, emit: (json: string) => void): number {
  for (const g of gaps) {
    const tid = gapTrack(tracks, g.deviceId);
    emit(
      completeEvent({
        pid: gpuPid(g.deviceId),
        tid,
        startNs: g.startNs,
        endNs: g.endNs,
        name: g.cause,
        cat: 'gap',
        cname: causeColor(g.cause),
        args: gapArgs(g),
      }),
    );
  }
  return gaps.length;
}
