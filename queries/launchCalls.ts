import { sql } from 'kysely';
import type { ExportHandle } from './handle.js';

/**
 * Kernel-launching CUDA API calls by name (`cudaLaunchKernel`, `cuLaunchKernelEx`,
 * `cudaLaunchKernelExC`, `cudaLaunchCooperativeKernel`, `cudaGraphLaunch`, `cuGraphLaunch`; nsys's
 * `_vNNNN` suffix or not), and their HIP counterparts in ROCm traces (`hipLaunchKernel`,
 * `hipExtLaunchKernel`, `hipExtModuleLaunchKernel`, `hipModuleLaunchKernel`,
 * `hipHccModuleLaunchKernel`, `hip*LaunchCooperativeKernel`, `hipGraphLaunch`: the launches
 * kineto's RoctracerLogger matches, `matchKernelCbId`). LIKE patterns, bound, never built from input.
 */
export const LAUNCH_NAME_PATTERNS = ['cu%LaunchKernel%', 'cu%LaunchCooperativeKernel%', 'cu%GraphLaunch%', 'hip%LaunchKernel%', 'hip%LaunchCooperativeKernel%', 'hip%GraphLaunch%'] as const;

/** The whole-graph launches among them. */
const GRAPH_LAUNCH_PATTERNS = ['cu%GraphLaunch%', 'hip%GraphLaunch%'] as const;

/** Launch calls per thread, most first: the executor thread is the one that launched the most. */
export function selectLaunchCallsPerThread(handle: ExportHandle) {
  return handle.db
    .selectFrom('CUPTI_ACTIVITY_KIND_RUNTIME as r')
    .innerJoin('StringIds as s', 's.id', 'r.nameId')
    .select([sql<number>`(r.globalTid >> 24) & 16777215`.as('pid'), sql<number>`r.globalTid & 16777215`.as('tid'), sql<number>`count(*)`.as('calls')])
    .where((eb) => eb.or(LAUNCH_NAME_PATTERNS.map((p) => eb('s.value', 'like', p))))
    .groupBy('r.globalTid')
    .orderBy('calls', 'desc');
}

/** Latest end of any CUDA API call (ns from session start); null without calls. */
export function selectLastApiCallEnd(handle: ExportHandle) {
  return handle.db.selectFrom('CUPTI_ACTIVITY_KIND_RUNTIME').select(sql<number | null>`max("end")`.as('endNs'));
}

/**
 * Kernel-launch and graph-launch calls in time order, with their name so the caller can tell
 * them apart (`cudaGraphLaunch` / `cuGraphLaunch` / `hipGraphLaunch` launch a whole graph).
 */
export function selectLaunchCalls(handle: ExportHandle) {
  return handle.db
    .selectFrom('CUPTI_ACTIVITY_KIND_RUNTIME as r')
    .innerJoin('StringIds as s', 's.id', 'r.nameId')
    .select([
      'r.start',
      'r.end',
      sql<number>`(r.globalTid >> 24) & 16777215`.as('pid'),
      sql<number>`r.globalTid & 16777215`.as('tid'),
      'r.correlationId',
      sql<number>`(s.value LIKE ${GRAPH_LAUNCH_PATTERNS[0]} OR s.value LIKE ${GRAPH_LAUNCH_PATTERNS[1]})`.as('isGraph'),
    ])
    .where((eb) => eb.or(LAUNCH_NAME_PATTERNS.map((p) => eb('s.value', 'like', p))))
    .orderBy('r.start');
}
