import { numberedSpans, type NumberedSpan } from '../layers/spanPasses.js';
import type { StepLayers } from '../layers/types.js';
import { completeEvent } from './events.js';
import { Lanes } from './lanes.js';
import { layerTrack, type TrackRegistry } from './tracks.js';

export interface LayerTrackStats {
  /** Layer slices (one per pass of a layer in a step on a device: a step of k prefills one after the other has k per layer) and outside-layer slices. */
  layerSlices: number;
  outsideSlices: number;
  overflowSlices: number;
  devices: number;
}

/** Alternate colours for even and odd layers (chrome://tracing; Perfetto colours by name), grey outside. */
const LAYER_COLORS = ['rail_load', 'rail_idle'];
const OUTSIDE_COLOR = 'generic_work';

/** What the details panel shows for a span: the step, the layer, its ns by module kind, where the split came from. */
function spanArgs(step: StepLayers, span: NumberedSpan): Record<string, unknown> {
  const args: Record<string, unknown> = { iter: step.iter, pid: step.pid, phase: step.phase, layer: span.layer, source: step.source };
  const figures = span.layer === null ? undefined : step.layers.find((f) => f.layer === span.layer);
  Object.assign(args, { kernelNs: span.kernelNs, kernelCount: span.kernelCount, kindNs: span.kindNs });
  // The layer's figures over the whole step (all its passes, all devices), as `layers` prints them.
  if (figures) Object.assign(args, { pass: span.pass, passes: figures.passes, stepLayerNs: figures.kernelNs, stepShare: figures.share });
  if (step.fit) args.fit = { period: step.fit.period, layers: step.fit.layers, runs: step.fit.runs, fitShare: step.fit.fitShare };
  return args;
}

/**
 * `trace --layers`: a track `GPU d layers` per device, one slice per step and decoder layer (`L3`,
 * first kernel start to last kernel end of that layer in that step on the device; a layer run k
 * times in a step, a prefill of k requests one after the other, has a slice per pass) and one per
 * run of kernels outside any layer (`outside layers`: embedding, final norm, LM head, sampling).
 * Kernels of a layer on several streams can make slices overlap: those go to `(overlap k)` tracks,
 * times unchanged.
 */
export function writeLayers(steps: readonly StepLayers[], tracks: TrackRegistry, emit: (json: string) => void): LayerTrackStats {
  const stats: LayerTrackStats = { layerSlices: 0, outsideSlices: 0, overflowSlices: 0, devices: 0 };
  const byDevice = new Map<number, { step: StepLayers; span: NumberedSpan }[]>();
  for (const step of steps) {
    for (const span of numberedSpans(step)) {
      const list = byDevice.get(span.deviceId);
      if (list) list.push({ step, span });
      else byDevice.set(span.deviceId, [{ step, span }]);
    }
  }
  stats.devices = byDevice.size;
  for (const [deviceId, list] of [...byDevice].sort((x, y) => x[0] - y[0])) {
    list.sort((x, y) => x.span.startNs - y.span.startNs || y.span.endNs - x.span.endNs);
    const lanes = new Lanes();
    for (const { step, span } of list) {
      const lane = lanes.assign(span.startNs, span.endNs);
      if (lane > 0) stats.overflowSlices++;
      const { pid, tid } = layerTrack(tracks, deviceId, lane);
      const outside = span.layer === null;
      if (outside) stats.outsideSlices++;
      else stats.layerSlices++;
      emit(
        completeEvent({
          pid,
          tid,
          startNs: span.startNs,
          endNs: span.endNs,
          name: outside ? 'outside layers' : `L${span.layer}`,
          cat: 'layer',
          cname: outside ? OUTSIDE_COLOR : LAYER_COLORS[span.layer! % 2],
          args: spanArgs(step, span),
        }),
      );
    }
  }
  return stats;
}
