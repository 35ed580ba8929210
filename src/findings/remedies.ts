import type { Engine } from './types.js';

/** A remedy per engine; `unknown` is the engine-neutral advice. */
export type Remedy = Record<Engine, string>;

/**
 * Remedies, by finding id. TensorRT-LLM's knobs are from its PyTorch backend and LLM API
 * (`garbage_collection_gen0_threshold`, `cuda_graph_config`, `disable_overlap_scheduler`,
 * `num_postprocess_workers`); vLLM's from its engine arguments.
 */
export const REMEDIES: Record<string, Remedy> = {
  'gc-pauses': {
    'tensorrt-llm':
      'Raise the LLM API option `garbage_collection_gen0_threshold` (fewer gen-0 collections in the executor loop) and call `gc.freeze()` after warm-up so the long-lived model objects leave the collected generations; the serving scripts can disable GC in the worker (`TRTLLM_WORKER_DISABLE_GC=1`).',
    vllm: 'Call `gc.freeze()` after start-up (model load and CUDA-graph capture) and raise `gc.set_threshold` gen-0; avoid creating many short-lived Python objects per step.',
    unknown: 'Call `gc.freeze()` after warm-up and raise the gen-0 threshold (`gc.set_threshold`), or disable GC in the serving loop and collect between requests.',
  },
  'gil-contention': {
    'tensorrt-llm':
      'Move the work of the thread holding the GIL off the executor process: post-process in separate processes (LLM API `num_postprocess_workers`), keep response/detokenization threads light, release the GIL in native calls; the overlap scheduler hides part of the wait.',
    vllm: 'Run the API server / detokenizer in another process (vLLM V1 engine-core process split) and keep Python threads in the engine process idle while steps run.',
    unknown: 'Move the thread that holds the GIL to another process, or make it release the GIL (native code, fewer Python callbacks) while the executor launches work.',
  },
  'launch-bound': {
    'tensorrt-llm':
      'Enable CUDA graphs (`cuda_graph_config` with `enable_padding: true` and `batch_sizes` covering the batches seen) and keep the overlap scheduler on (`disable_overlap_scheduler: false`); fuse the short kernels (torch.compile / `use_torch_compile`).',
    vllm: 'Do not run with `enforce_eager`; make `cudagraph_capture_sizes` cover the batch sizes seen; use the compiled (piecewise CUDA-graph) mode.',
    unknown: 'Capture the steady-state step in CUDA graphs and fuse short kernels (torch.compile); launch from one thread without Python work between launches.',
  },
  'host-sync': {
    'tensorrt-llm':
      'Remove host-blocking calls from the step (`.item()`, `.cpu()`, `.tolist()`, synchronous `cudaMemcpy`): copy into pinned buffers with `non_blocking=True` and wait on an event one iteration later; keep the overlap scheduler on so sampling results are read a step late.',
    vllm: 'Avoid `.item()`/`.cpu()` in the step; use async output processing / async scheduling so the host reads results one step late.',
    unknown: 'Replace synchronous copies and `*Synchronize` calls inside the step with async copies into pinned memory and event waits one step later.',
  },
  'late-launches': {
    'tensorrt-llm':
      'Overlap the host step with the GPU: keep the overlap scheduler on (`disable_overlap_scheduler: false`), and shorten the host ranges named in the evidence (`_prepare_inputs`, `_schedule`, `_update_requests`, `_sample_async`); CUDA graphs cut the launch part.',
    vllm: 'Enable async scheduling (`--async-scheduling`) so the next step is prepared while the GPU runs, and shorten the host ranges named in the evidence.',
    unknown: 'Prepare the next step while the GPU runs the current one (double-buffer inputs, launch ahead); shorten the host ranges named in the evidence.',
  },
  'memcpy-pageable': {
    'tensorrt-llm': 'Stage host inputs in pinned memory (`torch.empty(..., pin_memory=True)`) and copy with `non_blocking=True`; pageable copies are staged by the driver and serialize with the host.',
    vllm: 'Keep host input buffers pinned (vLLM pins them unless `pin_memory` is unavailable, e.g. under WSL) and copy with `non_blocking=True`.',
    unknown: 'Copy from pinned host memory (`cudaHostAlloc` / `pin_memory=True`) with async copies; pageable copies go through a driver staging buffer and block the host.',
  },
  'memcpy-h2d': {
    'tensorrt-llm': 'Keep per-iteration inputs on the GPU between steps (only new tokens cross PCIe); avoid re-uploading tables (e.g. block tables, masks) every iteration.',
    vllm: 'Upload only the changed parts of the input batch (persistent batch) and keep block tables on the GPU.',
    unknown: 'Keep data on the GPU across iterations and upload only what changed.',
  },
  'allocations-in-loop': {
    'tensorrt-llm': 'Allocate once at warm-up: let the KV-cache and workspace managers preallocate (`kv_cache_config.free_gpu_memory_fraction`), and avoid new tensors of new shapes per step (CUDA-graph padding keeps shapes fixed).',
    vllm: 'Let the caching allocator serve the loop: warm up with the largest batch before serving, keep shapes fixed with CUDA-graph capture sizes.',
    unknown: 'Preallocate at warm-up and reuse buffers; raw `cudaMalloc` in the loop synchronizes the device.',
  },
  'phase-outliers': {
    'tensorrt-llm': 'Look at the named iterations in Perfetto (`iterscope trace --iters`): shapes without a CUDA graph (eager fallback for an uncaptured batch size), first-time autotuning, or a changed batch mix; add their batch sizes to `cuda_graph_config.batch_sizes`.',
    vllm: 'Look at the named iterations: batch sizes outside `cudagraph_capture_sizes` run eager; first-time compilation of a new shape is slow.',
    unknown: 'Look at the named iterations in Perfetto: eager fallbacks, first-time compilation or a different batch mix explain most outliers.',
  },
  'stragglers': {
    'tensorrt-llm': 'Balance the ranks: give the straggler rank the same host work (check its GC, GIL and host steps with `iterscope gaps` on its export), pin each rank to its NUMA node, and keep its iteration inputs identical (attention-DP balance).',
    vllm: 'Balance the ranks: check the straggler rank\'s host work (GC, scheduling), pin CPU affinity per rank, keep its inputs the same size.',
    unknown: 'Balance the ranks: profile the straggler rank\'s host side (GC, GIL, launches) and pin CPU/NUMA affinity per rank.',
  },
  'moe-routing': {
    'tensorrt-llm': 'Routing imbalance costs more than 10%: balance the experts (load-balancer / EPLB `moe_load_balancer`), or accept it when the real routing is the workload\'s.',
    vllm: 'Routing imbalance costs more than 10%: enable expert-parallel load balancing (EPLB) and check the router\'s capacity.',
    unknown: 'Routing imbalance costs more than 10%: balance the experts (load balancing / redundant experts).',
  },
  coverage: {
    'tensorrt-llm':
      'Profile with `nsys profile -t cuda,nvtx,python-gil --cuda-memory-usage=true -e TLLM_PROFILE_RECORD_GC=1,TLLM_LLMAPI_ENABLE_NVTX=1` (add `--gpu-metrics-devices=all` for SM activity) and pass the iteration log (`--iteration_log`).',
    vllm: 'Profile with `nsys profile -t cuda,nvtx,python-gil --cuda-memory-usage=true` (add `--gpu-metrics-devices=all`), record GC with `gc.callbacks` NVTX ranges named `Python GC`, and pass the vLLM log with iteration details.',
    unknown: 'Profile with `nsys profile -t cuda,nvtx,python-gil --cuda-memory-usage=true --gpu-metrics-devices=all` and record GC as `Python GC` NVTX ranges.',
  },
};
