/** Kernel categories for vLLM: its own kernels by name, and no large "other" share on the vLLM fixtures. */
import { describe, expect, it } from 'vitest';
import { defaultCategoryClassifier } from '../../src/categories/rules.js';
import { withExport } from '../../src/export/openExport.js';
import { fixture } from '../helpers/fixtures.js';

const cls = defaultCategoryClassifier();
const cat = (name: string) => cls.categories[cls.classify(name)];

describe('vLLM kernel names (csrc/ and torch.compile)', () => {
  it('files attention, its KV-cache write and MLA under attention', () => {
    expect(cat('void vllm::paged_attention_v2_kernel<__nv_bfloat16, __nv_bfloat16, (int)128, (int)16, (int)128, (vllm::Fp8KVCacheDataType)0, (bool)0, (int)512>(...)')).toBe('attention');
    expect(cat('void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, __nv_bfloat16, (vllm::Fp8KVCacheDataType)0>(...)')).toBe('attention');
    expect(cat('void vllm::concat_and_cache_mla_kernel<__nv_bfloat16, __nv_bfloat16, (vllm::Fp8KVCacheDataType)0>(...)')).toBe('attention');
    expect(cat('void flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, cutlass::bfloat16_t>, false>(Flash_fwd_params)')).toBe('attention');
    expect(cat('void flashinfer::BatchDecodeWithPagedKVCacheKernel<...>(...)')).toBe('attention');
    expect(cat('_fwd_kernel')).toBe('attention');
  });
  it('files custom all-reduce under communication, scaled-mm and Marlin under gemm, MoE GEMMs under moe_gemm', () => {
    expect(cat('void vllm::cross_device_reduce_1stage<__nv_bfloat16, (int)2>(vllm::RankData *, vllm::RankSignals, vllm::Signal *, __nv_bfloat16 *, int, int)')).toBe('communication');
    expect(cat('void vllm::cutlass_scaled_mm_sm90_fp8<...>(...)')).toBe('gemm');
    expect(cat('void marlin::Marlin<(vllm::ScalarTypeId)4, (int)256, (int)1, (int)8, (int)8, (int)8, (bool)0>(...)')).toBe('gemm');
    expect(cat('fused_moe_kernel')).toBe('moe_gemm');
    expect(cat('void vllm::cutlass_moe_mm_sm90<...>(...)')).toBe('moe_gemm');
    expect(cat('void marlin_moe_wna16::Marlin<...>(...)')).toBe('moe_gemm');
    expect(cat('void vllm::moe::moe_align_block_size_kernel<int>(...)')).toBe('moe_routing');
  });
  it('files fused pointwise ops by the op they fuse, and the rest of torch.compile Triton kernels as elementwise / reduce', () => {
    expect(cat('void vllm::act_and_mul_kernel<c10::BFloat16, &vllm::silu_kernel<c10::BFloat16>, (bool)1>(...)')).toBe('activation');
    expect(cat('void vllm::fused_add_rms_norm_kernel<c10::BFloat16, (int)8>(...)')).toBe('norm');
    expect(cat('void vllm::rotary_embedding_kernel<c10::BFloat16, (bool)1>(...)')).toBe('rope');
    expect(cat('triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_0')).toBe('reduce');
    expect(cat('triton_poi_fused_cat_3')).toBe('elementwise');
    expect(cat('triton_poi_fused_mul_silu_1')).toBe('activation');
  });
});

describe.each(['vllm-dense', 'fieldguide-vllm'])('%s kernel time by category', (dir) => {
  it('leaves less than 1% of kernel time in other, and attention and gemm each hold a real share', () => {
    const rows = withExport(fixture(dir, 'trace.sqlite'), (h) =>
      h.sqlite.prepare('SELECT s.value AS name, sum(k.end - k.start) AS ns FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName GROUP BY 1').all() as { name: string; ns: number }[],
    );
    const total = rows.reduce((a, r) => a + r.ns, 0);
    const share = (c: string) => rows.filter((r) => cat(r.name) === c).reduce((a, r) => a + r.ns, 0) / total;
    expect(total).toBeGreaterThan(0);
    expect(share('other')).toBeLessThan(0.01);
    expect(share('attention')).toBeGreaterThan(0.05);
    expect(share('gemm')).toBeGreaterThan(0.2);
  });
});
