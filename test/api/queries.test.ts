/**
 * The `iterscope/queries` entry (queries/index.ts): the names it exports, and the README's example
 * over it reproducing nsys's own kernel summary. Adding or removing a public name is a decision:
 * change the list here. Its types are pinned in publicTypes.test-d.ts.
 */
import { describe, expect, it } from 'vitest';
import * as queries from '../../queries/index.js';
import { withExport } from '../../src/index.js';
import { readCsvObjects } from '../helpers/csv.js';
import { exactInt } from '../helpers/nsysStats.js';
import { fixture } from '../helpers/fixtures.js';

const QUERIES_VALUES = [
  // schema constants
  'NvtxEventType', 'NVTX_RANGE_EVENT_TYPES', 'RuntimeEventClass',
  // running builders, ids
  'prepareQuery', 'iterateQuery', 'allRows', 'forEachRow', 'pidOf', 'tidOf', 'threadKeyOf',
  // GPU work
  'selectKernels', 'selectKernelDurations', 'loadKernelNames', 'selectKernelsNamed', 'selectLaunchesOfKernelsNamed', 'selectMemcpys', 'selectMemsets',
  'selectGraphTraces', 'selectGraphTraceCount', 'selectSynchronizations', 'selectGpuOps', 'selectGpuOpsOf', 'presentGpuOpSources', 'selectGpuOpProcessCount',
  'GpuOpKind', 'GPU_OP_KIND_NAMES', 'GPU_OP_SOURCES',
  // CUDA API
  'selectRuntimeCalls', 'selectApiCallRows', 'stripApiVersion', 'selectLaunchCalls', 'selectLaunchCallsPerThread', 'selectLastApiCallEnd', 'LAUNCH_NAME_PATTERNS',
  // NVTX
  'selectNvtxEvents', 'selectNvtxRangeRows', 'selectNvtxMarkCount', 'selectNvtxMaxTimestamp', 'selectNvtxRangeWithText', 'selectNvtxColumnRows', 'selectNvtxHostCauseColumnRows',
  'selectNvtxDomainCreates', 'selectNvtxRangeCountsByDomain', 'selectHostCauseRanges', 'selectNvtxRangesNamed',
  'selectProjectionRanges', 'selectProjectionCalls', 'selectProjectionOps', 'selectNvtxLabelParts', 'selectIrregularLaunchId',
  // threads, processes, GPUs, session, capture, strings
  'selectThreads', 'selectProcesses', 'selectGpus', 'selectSessionStart', 'selectSessionStartEpochNs', 'readSessionStartEpochNs', 'selectAnalysisDetails',
  'selectCaptureMetadata', 'selectRowIdBound', 'rowIdBound', 'selectActivitySpan', 'selectDeviceIds', 'selectApiCallerPids', 'selectKernelPids',
  'selectGraphNodeKernel', 'selectStrings', 'selectStringIdsOf', 'loadStrings', 'stringLookup',
  // GPU metrics
  'hasGpuMetricTables', 'selectGpuMetricNames', 'selectGpuMetricSamples', 'selectAnyGpuMetricSample', 'selectMetricGpus', 'selectGpuMetricTypeHighBits',
  'selectGpuMetricsOptions', 'selectCudaDeviceGpus', 'selectKernelDevicesByPid', 'gpuIdOfMetricsTypeId', 'GPU_METRICS_GPU_ID_MASK',
  // PyTorch profiler CPU ops, capture health
  'selectKinetoCpuOps', 'selectDiagnostics', 'selectProcessStreams', 'selectAnalysisFiles', 'selectActivityPerProcess', 'selectProfilerApiStart',
].sort();

describe('queries/index.ts (iterscope/queries)', () => {
  it('exports exactly the curated names (no writer, probe or row-check internals)', () => {
    expect(Object.keys(queries).sort()).toEqual(QUERIES_VALUES);
  });

  it("the README's example: selectKernels streamed with iterateQuery gives nsys's kernel count and time per name", () => {
    const file = fixture('pytorch-dense', 'trace.sqlite');
    const byName = new Map<string, { n: number; ns: number }>();
    withExport(file, (h) => {
      for (const k of queries.iterateQuery(h, queries.selectKernels(h))) {
        const s = byName.get(k.name ?? '') ?? { n: 0, ns: 0 };
        byName.set(k.name ?? '', { n: s.n + 1, ns: s.ns + (k.end - k.start) });
      }
    });
    const oracle = readCsvObjects(fixture('pytorch-dense', 'nsys-stats', 'cuda_gpu_kern_sum.csv')).rows;
    expect(byName.size).toBe(oracle.length);
    for (const row of oracle) expect(byName.get(row.Name), row.Name).toEqual({ n: exactInt(row.Instances), ns: exactInt(row['Total Time (ns)']) });
  });
});
