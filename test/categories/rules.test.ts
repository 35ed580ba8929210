import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileCategoryRules, defaultCategoryClassifier, loadCategoryRules, parseCategoryRules } from '../../src/categories/rules.js';
import { IterscopeError } from '../../src/errors.js';
import { withExport } from '../../src/export/openExport.js';
import { fixture } from '../helpers/fixtures.js';

const cls = defaultCategoryClassifier();
const cat = (name: string) => cls.categories[cls.classify(name)];

describe('default kernel categories', () => {
  it('keeps dense CUTLASS GEMMs out of moe_gemm (the gputrc2graph `gemm::` trap)', () => {
    expect(cat('void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>(T1::Params)')).toBe('gemm');
    expect(cat('cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int, int>, cutlass::gemm::collective::CollectiveMma<...>>>')).toBe('gemm');
    expect(cat('cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cutlass::gemm::GroupProblemShape<cute::tuple<long, long, long>>, ...EpilogueMoeFusedFinalize>>')).toBe('moe_gemm');
    expect(cat('void fused_moe::run_global<fused_moe::Fused_Moe_Kernel_sm80<__nv_bfloat16>>(...)')).toBe('moe_gemm');
  });
  it('files the kernels seen in the fixtures where a performance engineer expects them', () => {
    expect(cat('nvjet_sm90_tst_128x16_64x11_4x1_v_bz_TNT')).toBe('gemm');
    expect(cat('void cublasLt::splitKreduce_kernel<(int)32, (int)16, int, float>')).toBe('gemm');
    expect(cat('cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128_4x1x1_cga1x1x1_kernel0_0')).toBe('attention');
    expect(cat('ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<(unsigned long)4096>)')).toBe('communication');
    expect(cat('void tensorrt_llm::kernels::ar_fusion::allreduce_fusion_kernel_oneshot_lamport<__nv_bfloat16>')).toBe('communication');
    expect(cat('void at::native::sbtopk::gatherTopK<float, unsigned int, (int)2, (bool)0>(...)')).toBe('moe_routing');
    expect(cat('void at::native::<unnamed>::vectorized_layer_norm_kernel<c10::BFloat16, float, (bool)1>(...)')).toBe('norm');
    expect(cat('void <unnamed>::softmax_warp_forward<float, float, float, (int)3>(...)')).toBe('softmax');
    expect(cat('void at::native::reduce_kernel<(int)512, (int)1, at::native::ReduceOp<c10::BFloat16, at::native::ArgMaxOps<float>>>')).toBe('sampling');
    expect(cat('[CUDA graph 7]')).toBe('cuda_graph');
    expect(cat('something_nobody_knows')).toBe('other');
  });
  it('classifies every kernel of pytorch-dense, and leaves less than 1% of kernel time in other', () => {
    const rows = withExport(fixture('pytorch-dense', 'trace.sqlite'), (h) =>
      h.sqlite.prepare('SELECT s.value AS name, sum(k.end - k.start) AS ns FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName GROUP BY 1').all() as { name: string; ns: number }[],
    );
    const total = rows.reduce((a, r) => a + r.ns, 0);
    const other = rows.filter((r) => cat(r.name) === 'other').reduce((a, r) => a + r.ns, 0);
    expect(other / total).toBeLessThan(0.01);
  });
});

describe('--categories rules.json', () => {
  const dir = mkdtempSync(join(tmpdir(), 'iterscope-cat-'));
  it('replaces the table, first match wins', () => {
    const p = join(dir, 'rules.json');
    writeFileSync(p, JSON.stringify([{ category: 'mine', pattern: 'nvjet' }, { category: 'rest', pattern: '.' }]));
    const c = loadCategoryRules(p);
    expect(c.categories).toEqual(['mine', 'rest', 'other']);
    expect(c.categories[c.classify('nvjet_x')]).toBe('mine');
    expect(c.categories[c.classify('gemm')]).toBe('rest');
  });
  it('rejects invalid JSON, non-arrays, missing fields and bad patterns with a usage error naming the file', () => {
    const bad = (text: string) => {
      const p = join(dir, `bad-${Math.random()}.json`);
      writeFileSync(p, text);
      try {
        loadCategoryRules(p);
      } catch (e) {
        expect(e).toBeInstanceOf(IterscopeError);
        expect((e as IterscopeError).code).toBe('E_USAGE');
        expect((e as Error).message).toContain(p);
        return (e as Error).message;
      }
      throw new Error('expected an error');
    };
    expect(bad('{not json')).toMatch(/invalid JSON/);
    expect(bad('{"category":"x"}')).toMatch(/JSON array/);
    expect(bad('[{"category":"x"}]')).toMatch(/pattern/);
    expect(bad('[{"category":"x","pattern":"(unclosed"}]')).toMatch(/invalid pattern/);
    expect(() => parseCategoryRules([{ category: 'x', pattern: 'a', flags: 'g' }], 'f')).toThrow(/flags/);
  });
  it('compiles rules without an `other` category by adding one', () => {
    expect(compileCategoryRules([{ category: 'a', pattern: '^a' }]).categories).toEqual(['a', 'other']);
  });
});
