import type { Engine } from './types.js';

/** A remedy per engine; `unknown` is the engine-neutral advice. */
export type Remedy = Record<Engine, string>;

/**
 * Remedies, by finding id. TensorRT-LLM's knobs are from its PyTorch backend and LLM API
 * (`garbage_collection_gen0_threshold`, `cuda_graph_config`, `disable_overlap_scheduler`,
 * `num_postprocess_workers`); vLLM's from its engine arguments; SGLang's from its server arguments
 * (`--cuda-graph-max-bs`, `--chunked-prefill-size`, `--enable-mixed-chunk`, `--disable-overlap-schedule`) and endpoints.
 */
export const REMEDIES: Record<string, Remedy> = {
  'gc-pauses': {
    'tensorrt-llm':
      'Raise the LLM API option `garbage_collection_gen0_threshold` (fewer gen-0 collections in the executor loop) and call `gc.freeze()` after warm-up so the long-lived model objects leave the collected generations; the serving scripts can disable GC in the worker (`TRTLLM_WORKER_DISABLE_GC=1`).',
    vllm: 'Call `gc.freeze()` after start-up (model load and CUDA-graph capture) and raise `gc.set_threshold` gen-0; avoid creating many short-lived Python objects per step.',
    sglang: 'Call `POST /freeze_gc` after warm-up (SGLang freezes the long-lived objects in every scheduler) and keep per-step Python allocations low; the overlap scheduler (on unless `--disable-overlap-schedule`) hides part of a pause.',
    unknown: 'Call `gc.freeze()` after warm-up and raise the gen-0 threshold (`gc.set_threshold`), or disable GC in the serving loop and collect between requests.',
  },
  'gil-contention': {
    'tensorrt-llm':
      'Move the work of the thread holding the GIL off the executor process: post-process in separate processes (LLM API `num_postprocess_workers`), keep response/detokenization threads light, release the GIL in native calls; the overlap scheduler hides part of the wait.',
    vllm: 'Run the API server / detokenizer in another process (vLLM V1 engine-core process split) and keep Python threads in the engine process idle while steps run.',
    sglang: 'Keep the scheduler process free of Python threads that run while steps launch: tokenization and detokenization already run in their own processes; check what else holds the GIL in the `sglang::scheduler` process.',
    unknown: 'Move the thread that holds the GIL to another process, or make it release the GIL (native code, fewer Python callbacks) while the executor launches work.',
  },
  'launch-bound': {
    'tensorrt-llm':
      'Enable CUDA graphs (`cuda_graph_config` with `enable_padding: true` and `batch_sizes` covering the batches seen) and keep the overlap scheduler on (`disable_overlap_scheduler: false`); fuse the short kernels (torch.compile / `use_torch_compile`).',
    vllm: 'Do not run with `enforce_eager`; make `cudagraph_capture_sizes` cover the batch sizes seen; use the compiled (piecewise CUDA-graph) mode.',
    sglang: 'Keep CUDA graphs on (no `--disable-cuda-graph`) and make `--cuda-graph-max-bs` (or `--cuda-graph-bs`) cover the decode batch sizes seen (the log says `cuda graph: False` for the others); keep the overlap scheduler on; try `--enable-torch-compile` for small batches.',
    unknown: 'Capture the steady-state step in CUDA graphs and fuse short kernels (torch.compile); launch from one thread without Python work between launches.',
  },
  'host-sync': {
    'tensorrt-llm':
      'Remove host-blocking calls from the step (`.item()`, `.cpu()`, `.tolist()`, synchronous `cudaMemcpy`): copy into pinned buffers with `non_blocking=True` and wait on an event one iteration later; keep the overlap scheduler on so sampling results are read a step late.',
    vllm: 'Avoid `.item()`/`.cpu()` in the step; use async output processing / async scheduling so the host reads results one step late.',
    sglang: 'Keep the overlap scheduler on (do not pass `--disable-overlap-schedule`): it reads step N results while step N+1 runs; look for `.item()`/`.tolist()` in custom logits processors or samplers.',
    unknown: 'Replace synchronous copies and `*Synchronize` calls inside the step with async copies into pinned memory and event waits one step later.',
  },
  'late-launches': {
    'tensorrt-llm':
      'Overlap the host step with the GPU: keep the overlap scheduler on (`disable_overlap_scheduler: false`), and shorten the host ranges named in the evidence (`_prepare_inputs`, `_schedule`, `_update_requests`, `_sample_async`); CUDA graphs cut the launch part.',
    vllm: 'Enable async scheduling (`--async-scheduling`) so the next step is prepared while the GPU runs, and shorten the host ranges named in the evidence.',
    sglang: 'Keep the overlap scheduler on (no `--disable-overlap-schedule`) so the next batch is scheduled while the GPU runs; shorten the host ranges named in the evidence (`scheduler.get_next_batch_to_run`, `scheduler.process_batch_result`), e.g. with a cheaper schedule policy (`--schedule-policy fcfs`).',
    unknown: 'Prepare the next step while the GPU runs the current one (double-buffer inputs, launch ahead); shorten the host ranges named in the evidence.',
  },
  'memcpy-pageable': {
    'tensorrt-llm': 'Stage host inputs in pinned memory (`torch.empty(..., pin_memory=True)`) and copy with `non_blocking=True`; pageable copies are staged by the driver and serialize with the host.',
    vllm: 'Keep host input buffers pinned (vLLM pins them unless `pin_memory` is unavailable, e.g. under WSL) and copy with `non_blocking=True`.',
    sglang: 'Copy step inputs from pinned host buffers with `non_blocking=True`; pageable copies in the scheduler loop block it and break the overlap scheduler.',
    unknown: 'Copy from pinned host memory (`cudaHostAlloc` / `pin_memory=True`) with async copies; pageable copies go through a driver staging buffer and block the host.',
  },
  'memcpy-h2d': {
    'tensorrt-llm': 'Keep per-iteration inputs on the GPU between steps (only new tokens cross PCIe); avoid re-uploading tables (e.g. block tables, masks) every iteration.',
    vllm: 'Upload only the changed parts of the input batch (persistent batch) and keep block tables on the GPU.',
    sglang: 'Keep the batch state on the GPU between steps (SGLang does for decode); large uploads per step usually come from long prefills: bound them with `--chunked-prefill-size`.',
    unknown: 'Keep data on the GPU across iterations and upload only what changed.',
  },
  'allocations-in-loop': {
    'tensorrt-llm': 'Allocate once at warm-up: let the KV-cache and workspace managers preallocate (`kv_cache_config.free_gpu_memory_fraction`), and avoid new tensors of new shapes per step (CUDA-graph padding keeps shapes fixed).',
    vllm: 'Let the caching allocator serve the loop: warm up with the largest batch before serving, keep shapes fixed with CUDA-graph capture sizes.',
    sglang: 'Leave memory to the pools SGLang preallocates (`--mem-fraction-static`); keep shapes fixed with CUDA-graph batch sizes (`--cuda-graph-max-bs`) and bounded prefills (`--chunked-prefill-size`).',
    unknown: 'Preallocate at warm-up and reuse buffers; raw `cudaMalloc` in the loop synchronizes the device.',
  },
  'phase-outliers': {
    'tensorrt-llm': 'Look at the named iterations in Perfetto (`iterscope trace --iters`): shapes without a CUDA graph (eager fallback for an uncaptured batch size), first-time autotuning, or a changed batch mix; add their batch sizes to `cuda_graph_config.batch_sizes`.',
    vllm: 'Look at the named iterations: batch sizes outside `cudagraph_capture_sizes` run eager; first-time compilation of a new shape is slow.',
    sglang: 'Look at the named steps: decode batches above `--cuda-graph-max-bs` run eager (`cuda graph: False` in the log); long prefills stall decode unless `--chunked-prefill-size` bounds them, and `--enable-mixed-chunk` runs decode with the prefill chunks.',
    unknown: 'Look at the named iterations in Perfetto: eager fallbacks, first-time compilation or a different batch mix explain most outliers.',
  },
  'stragglers': {
    'tensorrt-llm': 'Balance the ranks: give the straggler rank the same host work (check its GC, GIL and host steps with `iterscope gaps` on its export), pin each rank to its NUMA node, and keep its iteration inputs identical (attention-DP balance).',
    vllm: 'Balance the ranks: check the straggler rank\'s host work (GC, scheduling), pin CPU affinity per rank, keep its inputs the same size.',
    sglang: 'Balance the ranks: check the straggler scheduler\'s host work (GC, scheduling) with `iterscope gaps` on its export; with DP attention, balance the requests across DP ranks.',
    unknown: 'Balance the ranks: profile the straggler rank\'s host side (GC, GIL, launches) and pin CPU/NUMA affinity per rank.',
  },
  'moe-routing': {
    'tensorrt-llm': 'Routing imbalance costs more than 10%: balance the experts (load-balancer / EPLB `moe_load_balancer`), or accept it when the real routing is the workload\'s.',
    vllm: 'Routing imbalance costs more than 10%: enable expert-parallel load balancing (EPLB) and check the router\'s capacity.',
    sglang: 'Routing imbalance costs more than 10%: enable expert-parallel load balancing (`--enable-eplb`) and check the expert distribution (`/start_expert_distribution_record`).',
    unknown: 'Routing imbalance costs more than 10%: balance the experts (load balancing / redundant experts).',
  },
  coverage: {
    'tensorrt-llm':
      'Profile with `nsys profile -t cuda,nvtx,python-gil --cuda-memory-usage=true -e TLLM_PROFILE_RECORD_GC=1,TLLM_LLMAPI_ENABLE_NVTX=1` (add `--gpu-metrics-devices=all` for SM activity) and pass the iteration log (`--iteration_log`).',
    vllm: 'Profile with `nsys profile -t cuda,nvtx,python-gil --cuda-memory-usage=true` (add `--gpu-metrics-devices=all`), record GC with `gc.callbacks` NVTX ranges named `Python GC`, and pass the vLLM log with iteration details.',
    sglang: 'Profile with `SGLANG_ENABLE_NVTX_SCHEDULER=1 nsys profile -t cuda,nvtx,osrt --trace-fork-before-exec=true --cuda-graph-trace=node --capture-range=cudaProfilerApi --capture-range-end=stop`, start it with `POST /start_profile` (`activities: ["CUDA_PROFILER"]`, `start_step`, `num_steps`), run the server with `--decode-log-interval 1` (and `SGLANG_LOG_FORWARD_ITERS=1`), and pass its log.',
    unknown: 'Profile with `nsys profile -t cuda,nvtx,python-gil --cuda-memory-usage=true --gpu-metrics-devices=all` and record GC as `Python GC` NVTX ranges.',
  },
};
