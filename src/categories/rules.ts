import { IterscopeError, UsageError } from '../errors.js';
import { readOptionFile } from '../optionFile.js';
import { compileUserRegex } from '../userRegex.js';

/** A rules file is a short JSON table: above this it is not one. */
export const MAX_RULES_FILE_BYTES = 1024 * 1024;

/** One rule of the ordered kernel-category table: the first rule whose pattern matches wins. */
export interface CategoryRule {
  category: string;
  /** A JavaScript regular expression source, matched with `search` semantics (unanchored). */
  pattern: string;
  /** Regex flags, e.g. `i`. Default: case-sensitive, as in gputrc2graph. */
  flags?: string;
}

/**
 * The default table, adapted from the vLLM / TensorRT-LLM `gputrc2graph.py` tables, with their
 * traps fixed:
 * - a bare `gemm::` or `GemmUniversal` rule files dense CUTLASS GEMMs under MoE; here only grouped
 *   problem shapes, fused-MoE kernels and batched-expert GEMMs are `moe_gemm`;
 * - `splitKreduce` (cuBLASLt split-K epilogue) is GEMM work, not attention;
 * - attention comes before GEMM because cuDNN SDPA kernel names contain `wgmma`/`gemm`;
 * - communication comes first: fused all-reduce+norm kernels are communication.
 * vLLM's own kernels (csrc/): `paged_attention_v*`, `reshape_and_cache*` / `concat_and_cache_mla`
 * (the KV-cache write of attention), `cross_device_reduce_*` (custom all-reduce), `cutlass_scaled_mm`
 * and Marlin GEMMs, `cutlass_moe_mm` / Marlin MoE, `act_and_mul`, `rms_norm`, `rotary_embedding`,
 * and torch.compile's Triton kernels (`triton_poi_*` pointwise, `triton_red_*` / `triton_per_*`
 * reductions) after any rule their fused op names match.
 * Names checked against the kernels in ../shared/fixtures and TensorRT-LLM's kernel names.
 *
 * Real names from the field corpus (test/fixtures-field/README.md, issue 54), each pinned by a test
 * in test/categories/fieldNames.test.ts with its source:
 * - ROCm GEMMs are Tensile / hipBLASLt kernels named `Cijk_<A layout>_<B layout>_<types>_MT...`
 *   (and `Cijk_B_PostGSU*`, Tensile's split-U reduction, GEMM work like `splitKreduce`); nothing
 *   else starts with `Cijk_`. They were 59% and 85% of the kernel time of SGLang on MI300 in
 *   TraceLens' test data, all of it `other` before.
 * - Attention: SGLang's KV-cache write `store_kvcache` is attention's as vLLM's `reshape_and_cache`
 *   is; vLLM's Triton unified attention ends its split-KV (3-D) launches with `reduce_segments`,
 *   which TraceLens files under the attention op. (Composable Kernel's `FmhaBatchPrefill...` and
 *   TensorRT-LLM's `FmhaSm100Kernel_*` were already attention: `[^a-z]mha` matches `Fmha`.)
 * - MoE routing/combine: triton_kernels' routing (`_sum_bitmatrix_rows`, beside the
 *   `_combined_routing_*` already matched) and its combine `_finalize_matmul_*`, which scatters the
 *   expert outputs back and sums them (a `matmul` in name only); trtllm-gen's `finalizeKernel*`.
 * - Communication: PyTorch symmetric-memory collectives (`multimem_all_reduce_kernel`,
 *   `multimem_all_gather_kernel`, ...) spell `all_gather` / `reduce_scatter` with underscores.
 * - Reduce: rocPRIM's scans (`rocprim::...scan_impl`, what `aten::cumsum` runs on ROCm).
 */
export const DEFAULT_CATEGORY_RULES: readonly CategoryRule[] = [
  { category: 'cuda_graph', pattern: '^\\[CUDA graph' },
  { category: 'memcpy', pattern: '^\\[CUDA memcpy' },
  { category: 'memset', pattern: '^\\[CUDA memset' },
  { category: 'communication', pattern: 'nccl|AllReduce|allreduce|all_reduce|AllGather|allgather|ReduceScatter|reducescatter|cross_device_reduce|oneShotAllReduce|twoShotAllReduce|lamport|moeA2A|[Aa]ll[Tt]o[Aa]ll|SendRecv|all_gather|reduce_scatter' },
  { category: 'moe_gemm', pattern: 'GroupProblemShape|Fused_Moe_Kernel|fused_moe|[Mm]oe[A-Za-z_]*[Gg]emm|grouped_gemm|group_gemm|GroupedGemm|^bmm_|matmul_ogs_|deep_gemm::.*grouped|cutlass_moe_mm|moe_wna16|[Mm]arlin_?[Mm]oe' },
  { category: 'attention', pattern: 'sdpa|[Ff]lash|fmha|FMHA|[^a-z]mha|xqa|mmha|[Aa]ttention|_attn|attn_|paged_kv|PagedAttention|kernel_mha|PagedKV|reshape_and_cache|concat_and_cache|_mla_|FlashMLA|_fwd_kernel|store_kvcache|^reduce_segments' },
  { category: 'moe_routing', pattern: '[Mm]oe|MoE|[Ee]xpert|[Rr]outing|topk|TopK|topK|gatherTopK|bitonicSort|expandInputRows|PrefixSum|permute|[Pp]ermutation|_sum_bitmatrix|_finalize_matmul|(?:^|::)finalizeKernel' },
  { category: 'gemm', pattern: 'gemm|Gemm|GEMM|nvjet|cublas|cutlass|matmul|gemv|splitKreduce|xmma|wgmma|hgmma|scaled_mm|[Mm]arlin|^Cijk_' },
  { category: 'norm', pattern: '[Nn]orm(?!al)|RMSNorm|rms_norm|layer_norm|LayerNorm' },
  { category: 'activation', pattern: 'silu|SiLU|gelu|GELU|relu|ReLU|act_and_mul|[Aa]ctivation|swiglu|SwiGLU' },
  { category: 'rope', pattern: '[Rr]otary|[Rr]ope[^r]|RoPE|cos_kernel|sin_kernel' },
  { category: 'softmax', pattern: '[Ss]oft[Mm]ax|softmax' },
  { category: 'sampling', pattern: '[Ss]ampl|ArgMax|argmax|distribution_|curand|multinomial|greedy' },
  { category: 'quantize', pattern: '[Qq]uant|cvt_|fp8_|FP8' },
  { category: 'reduce', pattern: 'reduce|Reduce|reduction|^triton_(?:red|per)_|rocprim::' },
  { category: 'elementwise', pattern: 'elementwise|Elementwise|Functor|copy_kernel|gather|scatter|index_|CatArrayBatched|arange|fill|^triton_poi_' },
  { category: 'other', pattern: '.*' },
];

/** A compiled table: `classify` returns the index into `categories` of the first matching rule. */
export interface CategoryClassifier {
  rules: readonly CategoryRule[];
  /** Distinct category names in first-appearance order; `other` is always present. */
  categories: string[];
  classify(name: string): number;
}

export function compileCategoryRules(rules: readonly CategoryRule[], source = 'category rules'): CategoryClassifier {
  const categories: string[] = [];
  const compiled = rules.map((r, i) => {
    // Bounded work per name (no nested repeats, names cut at 4096 characters): see userRegex.ts.
    const re = compileUserRegex(r.pattern, r.flags ?? '', `${source}: rule ${i + 1} (${r.category})`);
    if (!categories.includes(r.category)) categories.push(r.category);
    return { re, index: categories.indexOf(r.category) };
  });
  if (!categories.includes('other')) categories.push('other');
  const other = categories.indexOf('other');
  const cache = new Map<string, number>();
  return {
    rules,
    categories,
    classify(name: string): number {
      let idx = cache.get(name);
      if (idx === undefined) {
        idx = other;
        for (const c of compiled) {
          if (c.re.test(name)) {
            idx = c.index;
            break;
          }
        }
        cache.set(name, idx);
      }
      return idx;
    },
  };
}

/** Validates the JSON of a `--categories` file: an ordered array of `{category, pattern[, flags]}`. */
export function parseCategoryRules(json: unknown, source: string): CategoryRule[] {
  if (!Array.isArray(json)) throw new UsageError(`${source}: expected a JSON array of {"category", "pattern"} objects`);
  return json.map((r, i) => {
    if (typeof r !== 'object' || r === null) throw new UsageError(`${source}: rule ${i + 1} is not an object`);
    const { category, pattern, flags } = r as Record<string, unknown>;
    if (typeof category !== 'string' || category === '') throw new UsageError(`${source}: rule ${i + 1} has no "category" string`);
    if (typeof pattern !== 'string') throw new UsageError(`${source}: rule ${i + 1} (${category}) has no "pattern" string`);
    if (flags !== undefined && (typeof flags !== 'string' || !/^[imsu]*$/.test(flags))) throw new UsageError(`${source}: rule ${i + 1} (${category}): "flags" may only hold i, m, s, u`);
    return flags === undefined ? { category, pattern } : { category, pattern, flags: flags as string };
  });
}

/** Reads and compiles a `--categories rules.json` file (replaces the default table). */
export function loadCategoryRules(path: string): CategoryClassifier {
  const text = readOptionFile(path, 'categories file', MAX_RULES_FILE_BYTES);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new IterscopeError('E_USAGE', `invalid JSON in categories file: ${(err as Error).message}`, path);
  }
  const rules = parseCategoryRules(json, path);
  return compileCategoryRules(rules, path);
}

export function defaultCategoryClassifier(): CategoryClassifier {
  return compileCategoryRules(DEFAULT_CATEGORY_RULES, 'default category rules');
}
