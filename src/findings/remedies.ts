import type { Engine } from '../iterations/source.js';

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
  'layer-outlier': {
    'tensorrt-llm': 'An MoE layer above the others is routing imbalance: compare with ENABLE_PERFECT_ROUTER=1 to separate routing from kernel speed, and spread hot experts (expert load balancer); a layer whose time is mostly collectives waits for a slower rank (see `ranks`); a dense layer above the others points at its kernels (shapes, a fallback).',
    vllm: 'An MoE layer above the others is routing imbalance: enable the expert-parallel load balancer (`--enable-eplb`) or replicate hot experts; a layer whose time is mostly collectives waits for a slower rank; a dense layer above the others points at its kernels.',
    sglang: 'An MoE layer above the others is routing imbalance: enable the expert-parallel load balancer (`--enable-eplb`) or redundant experts; a layer whose time is mostly collectives waits for a slower rank; a dense layer above the others points at its kernels.',
    unknown: "An MoE layer above the others is routing imbalance (tokens crowd a few experts); a layer whose time is mostly collectives waits for a slower rank; a dense layer above the others points at that layer's kernels.",
  },
  'outside-layers': {
    'tensorrt-llm': 'Look at the kernels outside the layers per step (`iterscope layers --steps`): sampling, the LM head and embedding; sampling on the GPU and a fused LM head shrink them.',
    vllm: 'Look at the kernels outside the layers per step (`iterscope layers --steps`): sampling, the LM head and embedding.',
    sglang: 'Look at the kernels outside the layers per step (`iterscope layers --steps`): sampling, the LM head and embedding.',
    unknown: 'Look at the kernels outside the layers per step (`iterscope layers --steps`): sampling, the LM head and embedding.',
  },
  'attention-kv-growth': {
    'tensorrt-llm': 'Long contexts make attention the larger part of decode: FP8 KV cache and an attention kernel for long sequences (XQA, multi-block mode) help.',
    vllm: 'Long contexts make attention the larger part of decode: FP8 KV cache (`--kv-cache-dtype fp8`) and FlashInfer/FlashAttention backends for long sequences help.',
    sglang: 'Long contexts make attention the larger part of decode: FP8 KV cache (`--kv-cache-dtype fp8_e5m2`) and the attention backend for long sequences help.',
    unknown: 'Long contexts make attention the larger part of decode: a lower-precision KV cache and long-sequence attention kernels help.',
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
};

/** The engines a health remedy is written for: the iteration sources' engines, `unknown` naming all three. */
export type RemedyEngine = Engine;

/** The engine a capture's command points at, when its markers do not say (a client: `vllm bench serve`). */
export function remedyEngine(engine: Engine, command: string | null): RemedyEngine {
  if (engine !== 'unknown') return engine;
  if (!command) return 'unknown';
  if (/trtllm|tensorrt[_-]llm/i.test(command)) return 'tensorrt-llm';
  if (/sglang/i.test(command)) return 'sglang';
  if (/\bvllm\b/i.test(command)) return 'vllm';
  return 'unknown';
}

/** nsys cannot attach to a Linux process it did not start: the session commands do what attaching would. */
const RUNNING_SERVER =
  'A server that must keep running between benchmarks: start it under `nsys launch -t cuda,nvtx --trace-fork-before-exec=true <server command>` and bracket each benchmark with `nsys start` / `nsys stop` (nsys cannot attach to a process it did not launch).';

/** A PyTorch profiler trace without GPU activity: the remedy is about the profiler, not about which process to profile. */
export const KINETO_WITHOUT_GPU_WORK =
  'Under nsys, CUPTI serves nsys and the PyTorch profiler records CPU ops only (TensorRT-LLM\'s TLLM_TORCH_PROFILE_TRACE recipe): analyse the nsys export of the same run with `--torch-trace <this trace>`. Alone, record with `activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]` in the process that runs the model.';

export type HealthRemedyId = 'no-gpu-work' | 'program-crashed' | 'events-lost' | 'serving-loop-missing' | 'warmup-in-window' | 'graph-level-trace' | 'capture-cut';

/**
 * Remedies of the health findings, by engine. The commands are the engines' documented ones:
 * TensorRT-LLM's perf-analysis recipe, vLLM's `--profiler-config` with the CUDA profiler,
 * SGLang's benchmark_and_profiling page (see ../shared/research/trtllm.md, sglang.md).
 */
export const HEALTH_REMEDIES: Record<HealthRemedyId, Record<RemedyEngine, string>> = {
  'no-gpu-work': {
    'tensorrt-llm': `Profile the process that runs the model, not the client: \`TLLM_PROFILE_START_STOP=100-150 nsys profile -t cuda,nvtx,python-gil -c cudaProfilerApi --cuda-graph-trace node --trace-fork-before-exec=true -e TLLM_PROFILE_RECORD_GC=1,TLLM_LLMAPI_ENABLE_NVTX=1 -o run trtllm-serve <model>\` (TensorRT-LLM's recipe; \`trtllm-bench ... throughput\` runs the engine in-process), and send the requests from outside nsys. ${RUNNING_SERVER}`,
    vllm: `Profile the server, not the client: \`nsys profile -t cuda,nvtx --trace-fork-before-exec=true --cuda-graph-trace node -c cudaProfilerApi -o run vllm serve <model> --profiler-config '{"profiler": "cuda", "delay_iterations": 40, "max_iterations": 40}'\` (vLLM forks its engine-core process, hence --trace-fork-before-exec=true), then run the client outside nsys (\`vllm bench serve --profile\`). ${RUNNING_SERVER}`,
    sglang: `Profile the server, not the client: \`nsys profile --trace-fork-before-exec=true --cuda-graph-trace=node -o sglang.out --delay 60 --duration 70 python3 -m sglang.launch_server --model-path <model>\` (SGLang's documented command; the scheduler runs in a forked process), and send the requests from outside nsys while the window runs. ${RUNNING_SERVER}`,
    unknown: `Profile the server process itself, not the benchmark client: put \`nsys profile -t cuda,nvtx --trace-fork-before-exec=true --cuda-graph-trace node\` in front of the command that loads the model (TensorRT-LLM: \`trtllm-serve\` or \`trtllm-bench\`, with \`-c cudaProfilerApi\` and TLLM_PROFILE_START_STOP; vLLM: \`vllm serve\` with \`-c cudaProfilerApi\` and \`--profiler-config '{"profiler": "cuda"}'\`; SGLang: \`python3 -m sglang.launch_server\` with \`--delay\`/\`--duration\`), and run the client outside nsys. ${RUNNING_SERVER}`,
  },
  'program-crashed': sameForAll(
    'Fix the error at the end of the program\'s stderr and profile again; a client needs its server up first: start the server (under nsys: see `no-gpu-work`) and run the client outside the capture.',
  ),
  'events-lost': {
    'tensorrt-llm': 'Capture fewer iterations so nsys\'s buffers hold them: `TLLM_PROFILE_START_STOP=A-B` with `-c cudaProfilerApi`; flush CUDA buffers during the run (`--cuda-flush-interval=100`); trace only what the analysis reads (`-t cuda,nvtx,python-gil --sample=none --cpuctxsw=none`).',
    vllm: 'Capture fewer steps so nsys\'s buffers hold them: `-c cudaProfilerApi` with a small `max_iterations` in `--profiler-config`; flush CUDA buffers during the run (`--cuda-flush-interval=100`); trace only what the analysis reads (`-t cuda,nvtx --sample=none --cpuctxsw=none`).',
    sglang: 'Capture fewer steps so nsys\'s buffers hold them: `--capture-range=cudaProfilerApi` with a small `num_steps` in `/start_profile`; flush CUDA buffers during the run (`--cuda-flush-interval=100`); trace only what the analysis reads (`-t cuda,nvtx --sample=none --cpuctxsw=none`).',
    unknown: 'Capture a shorter window so nsys\'s buffers hold it (`-c cudaProfilerApi`, or `--delay`/`--duration`); flush CUDA buffers during the run (`--cuda-flush-interval=100`); trace only what the analysis reads (`-t cuda,nvtx --sample=none --cpuctxsw=none`).',
  },
  'serving-loop-missing': {
    'tensorrt-llm': 'Put the serving loop in the window: `TLLM_PROFILE_START_STOP=A-B` with `nsys profile -c cudaProfilerApi` starts the capture at executor iteration A, after warm-up, while requests run (`trtllm-bench` sends them); a `--duration` that ends during model load or CUDA-graph capture records start-up only.',
    vllm: 'Put the serving loop in the window: `-c cudaProfilerApi` with `vllm serve --profiler-config \'{"profiler": "cuda", "delay_iterations": 40, "max_iterations": 40}\'` and requests sent meanwhile (`vllm bench serve --profile`); a `--duration` that ends during model load or CUDA-graph capture records start-up only.',
    sglang: 'Put the serving loop in the window: `--capture-range=cudaProfilerApi --capture-range-end=stop` and `POST /start_profile {"start_step": 40, "num_steps": 80, "activities": ["CUDA_PROFILER"]}` while requests run, or a `--delay` past start-up with a `--duration` that covers the benchmark.',
    unknown: 'Put the serving loop in the window: start the capture after start-up (`--delay`, or `-c cudaProfilerApi` with the engine\'s profiler hook) and send requests while it runs; a `--duration` that ends during model load or CUDA-graph capture records start-up only.',
  },
  'warmup-in-window': {
    'tensorrt-llm': 'Start the capture after warm-up: a later start in `TLLM_PROFILE_START_STOP` (with `-c cudaProfilerApi`).',
    vllm: 'Start the capture after warm-up: a larger `delay_iterations` in `--profiler-config`.',
    sglang: 'Start the capture after warm-up: a later `start_step` in `/start_profile`.',
    unknown: 'Start the capture after warm-up (`--delay`, or a later cudaProfilerStart).',
  },
  'graph-level-trace': sameForAll(
    'Profile with `--cuda-graph-trace node`: nsys then records every kernel inside each graph launch (some overhead per node; TensorRT-LLM\'s and SGLang\'s recipes use it). Meanwhile `iterscope kernels --graphs` lists the whole-graph launches.',
  ),
  'capture-cut': {
    'tensorrt-llm': 'End the capture on an iteration boundary: `TLLM_PROFILE_START_STOP=A-B` with `-c cudaProfilerApi` stops between iterations, where `--duration` stops anywhere.',
    vllm: 'End the capture on an iteration boundary: `-c cudaProfilerApi` with `max_iterations` in `--profiler-config` stops between steps, where `--duration` stops anywhere.',
    sglang: 'End the capture on an iteration boundary: `--capture-range=cudaProfilerApi --capture-range-end=stop` with `num_steps` in `/start_profile` stops between steps, where `--duration` stops anywhere.',
    unknown: 'End the capture on an iteration boundary (`-c cudaProfilerApi`, stopped between steps) rather than with `--duration`.',
  },
};

function sameForAll(text: string): Record<RemedyEngine, string> {
  return { 'tensorrt-llm': text, vllm: text, sglang: text, unknown: text };
}

export function healthRemedy(id: HealthRemedyId, engine: RemedyEngine): string {
  return HEALTH_REMEDIES[id][engine];
}
