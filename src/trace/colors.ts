import { NVTX_CAUSE_PREFIX } from '../gaps/attributeCauses.js';
import type { Phase } from '../iterations/phase.js';

/**
 * `cname` colours: the reserved colour names of the Trace Event Format (catapult's
 * `color_scheme`; a viewer accepts only these). chrome://tracing and catapult-based viewers
 * honour them; Perfetto's JSON importer ignores `cname` and colours a slice by its name, so there
 * each cause (the gap slice's name) still gets one colour of its own.
 *
 * | gap cause      | cname                 | colour        |
 * | gc             | terrible              | dark red      |
 * | gil_wait       | detailed_memory_dump  | magenta       |
 * | sync           | thread_state_iowait   | orange        |
 * | launch_late    | yellow                | yellow        |
 * | nvtx:<range>   | thread_state_runnable | light blue    |
 * | unattributed   | generic_work          | grey          |
 */
export const CAUSE_COLORS: Readonly<Record<string, string>> = {
  gc: 'terrible',
  gil_wait: 'detailed_memory_dump',
  sync: 'thread_state_iowait',
  launch_late: 'yellow',
  nvtx: 'thread_state_runnable',
  unattributed: 'generic_work',
};

/** The `cname` of a gap whose primary cause is `cause` (`nvtx:<name>` → the nvtx colour). */
export function causeColor(cause: string): string {
  const kind = cause.startsWith(NVTX_CAUSE_PREFIX) ? 'nvtx' : cause;
  return CAUSE_COLORS[kind] ?? CAUSE_COLORS.unattributed;
}

/** Iteration slices by batch phase: context green, mixed blue, generation light green, speculative yellow, else grey. */
export const PHASE_COLORS: Readonly<Record<Phase, string>> = {
  context: 'rail_load',
  mixed: 'rail_response',
  generation: 'thread_state_running',
  speculative: 'rail_animation',
  empty: 'generic_work',
  unknown: 'generic_work',
};
