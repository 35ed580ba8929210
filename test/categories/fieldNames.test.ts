/**
 * Kernel names seen in real LLM-serving profiles (issue 54), each with the category the default
 * table files it under and where the name was read. The TraceLens files are copied in
 * test/fixtures-field/ (provenance, commit and sha256 in its README).
 */
import { describe, expect, it } from 'vitest';
import { defaultCategoryClassifier } from '../../src/categories/rules.js';

const cls = defaultCategoryClassifier();
const cat = (name: string) => cls.categories[cls.classify(name)];

// AMD-AGI/TraceLens tests/traces/inference/<run>/perf_csvs/ops_unique_args.csv (MIT), copied as
// test/fixtures-field/tracelens-kernels/<run>.ops_unique_args.csv.
const SGLANG_DECODE = 'TraceLens sglang_decode (SGLang, Qwen3, MI300)';
const SGLANG_PREFILL = 'TraceLens sglang_prefilldecode (SGLang, Qwen3, MI300)';
const VLLM_DECODE = 'TraceLens vllm_decode_full (vLLM, gpt-oss, MI300)';
// https://github.com/SemiAnalysisAI/InferenceX/issues/863: a kernel table of a B200 profile.
const INFERENCEX_B200 = 'SemiAnalysisAI/InferenceX issue 863 (B200)';

describe('ROCm kernel names (Tensile/hipBLASLt, Composable Kernel, aiter, rocPRIM)', () => {
  it.each([
    [SGLANG_DECODE, 'Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x32x64_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_DTLA0_DTLB0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA8_GRVWB8_GSUAMBSK_GLS0_ISA942_IU1_K1_LDSTI0_LBSPPA512_LBSPPB256_LBSPPM0_LPA16_LPB16_LPM0_LRVW8_LWPMn1_MIAV0_MIWT4_2_MO40_NTn1_NTA0_NTB0_NTC0_NTD4_NTM0_NEPBS16_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO0_SRVW0_SSO0_SVW4_SK0_SKFTR0_SKXCCM0_TLDS1_ULSGRO0_USL1_UIOFGRO0_USFGROn1_VSn1_VWA4_VWB2_WSGRA0_WSGRB0_WS64_WG64_4_1'],
    // test/fixtures-field/kineto/tracelens-rocm-gemm_01.trimmed.json: Tensile's split-U (GSU) reduction.
    ['TraceLens gemm_01 (hipBLASLt, MI300)', 'Cijk_B_PostGSU2'],
  ])('%s: its Tensile GEMM is gemm', (_source, name) => {
    expect(cat(name)).toBe('gemm');
  });
  it('files SGLang KV-cache writes and vLLM unified attention (both parts) under attention', () => {
    expect(cat('void (anonymous namespace)::store_kvcache<2048l, 4, false, long>((anonymous namespace)::StoreKVCacheParams)')).toBe('attention'); // SGLANG_DECODE
    expect(cat('kernel_unified_attention_3d')).toBe('attention'); // VLLM_DECODE
    expect(cat('reduce_segments')).toBe('attention'); // VLLM_DECODE: the 3-D launch's split-KV reduction
    // SGLANG_PREFILL: Composable Kernel's paged prefill attention (`[^a-z]mha` matches its `Fmha`).
    expect(cat('_ZN7ck_tile6kentryILi2ENS_38FmhaBatchPrefillWithPagedKVCacheKernelINS_40BlockFmhaBatchPrefillPipelineQRKSVSAsyncINS_36BlockFmhaBatchPrefillPipelineProblemIDF16bDF16bDF16bffDF16bhfDF16bfDF16bNS_13TileFmhaShapeINS_8sequenceIJLi128ELi128ELi32ELi128ELi32ELi128EEEENS5_IJLi4ELi1ELi1EEEENS5_IJLi32ELi32ELi16EEEES7_S8_Lb1EEELb1ENS_17ComposedAttentionILj0ELb1EEENS_30SimplifiedGenericAttentionMaskILb1EEELb0ELi1ENS_26TileFmhaBatchPrefillTraitsILb1ELb1ELb1ELb1ELb0ELNS_22BlockAttentionBiasEnumE0ELb0ELb0ELb0ELNS_28BlockAttentionQuantScaleEnumE0ELin1ELb0ELb0ELi1ELNS_37BlockAttentionKVCacheMemoryLayoutEnumE1ELNS_36BlockAttentionKVCacheLookupTableEnumE1ELNS_33BlockAttentionKVCacheLoadModeEnumE0EEEEENS_53BlockFmhaBatchPrefillPipelineQRKSVSAsyncDefaultPolicyEEENS_17Default2DEpilogueINS_24Default2DEpilogueProblemIfDF16bLb1ELb1ELb1EEEvEEEEJNSS_21FmhaFwdGroupModeKargsEEEEvDpT1_')).toBe('attention');
    expect(cat('void paged_attention_ll4mi_reduce_kernel<__hip_bfloat16, __hip_bfloat16, 128, 128, 256, 3, false>(__hip_bfloat16*, float const*, float const*, __hip_bfloat16 const*, int const*, int const*, int, int, float const*)')).toBe('attention'); // SGLANG_DECODE
  });
  it('files aiter / ck_tile norms and the rocPRIM scan of aten::cumsum', () => {
    expect(cat('_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi256ELi16ELb1ELb0ELb1ELi1EEEvPT0_PT_PfS4_S4_S4_diiiiiiib')).toBe('norm'); // SGLANG_DECODE
    expect(cat('_ZN7ck_tile6kentryILi1ENS_12Rmsnorm2dFwdINS_27Rmsnorm2dFwdPipelineOnePassINS_27Rmsnorm2dFwdPipelineProblemIDF16bDF16bfDF16bDF16bDF16bffNS_19Generic2dBlockShapeINS_8sequenceIJLi1ELi3072EEEENS5_IJLi1ELi128EEEENS5_IJLi1ELi8EEEEEENS_18Rmsnorm2dFwdTraitsILb1ELb0ELb0ELb0ELNS_21Rmsnorm2dFusedAddEnumE0ELNS_23Rmsnorm2dFusedQuantEnumE0ELNS_22Rmsnorm2dSensitiveEnumE0EEEEENS_33Rmsnorm2dFwdPipelineDefaultPolicyEEENS_17Default2DEpilogueINS_24Default2DEpilogueProblemIfDF16bLb0ELb1ELb0EEEvEEEEJNSM_5KargsEEEEvDpT1_')).toBe('norm'); // VLLM_DECODE
    expect(cat('void rocprim::ROCPRIM_400200_NS::detail::trampoline_kernel<rocprim::ROCPRIM_400200_NS::detail::wrapped_scan_config<rocprim::ROCPRIM_400200_NS::default_config, long>, (rocprim::ROCPRIM_400200_NS::detail::target_arch)942, rocprim::ROCPRIM_400200_NS::detail::scan_impl<(rocprim::ROCPRIM_400200_NS::detail::lookback_scan_determinism)0, false, false, rocprim::ROCPRIM_400200_NS::default_config, long const*, long*, long, std::plus<long>, long>(void*, unsigned long&, long const*, long*, long, unsigned long, std::plus<long>, ihipStream_t*, bool)::{lambda(auto:1, auto:2)#1}::operator()<std::integral_constant<bool, false>, std::integral_constant<bool, true> >(std::integral_constant<bool, false>, std::integral_constant<bool, true>) const::{lambda(auto:1)#2}, rocprim::ROCPRIM_400200_NS::detail::default_config_selector>(rocprim::ROCPRIM_400200_NS::detail::scan_impl<(rocprim::ROCPRIM_400200_NS::detail::lookback_scan_determinism)0, false, false, rocprim::ROCPRIM_400200_NS::default_config, long const*, long*, long, std::plus<long>, long>(void*, unsigned long&, long const*, long*, long, unsigned long, std::plus<long>, ihipStream_t*, bool)::{lambda(auto:1, auto:2)#1}::operator()<std::integral_constant<bool, false>, std::integral_constant<bool, true> >(std::integral_constant<bool, false>, std::integral_constant<bool, true>) const::{lambda(auto:1)#2})')).toBe('reduce'); // SGLANG_DECODE
  });
});

describe('MoE kernels of triton_kernels (vLLM gpt-oss) and trtllm-gen', () => {
  it('keeps the expert GEMMs in moe_gemm and their routing and combine in moe_routing', () => {
    expect(cat('_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1_swiglu')).toBe('moe_gemm'); // VLLM_DECODE
    expect(cat('_sum_bitmatrix_rows')).toBe('moe_routing'); // VLLM_DECODE
    expect(cat('_combined_routing_compute')).toBe('moe_routing'); // VLLM_DECODE
    expect(cat('_topk_forward')).toBe('moe_routing'); // VLLM_DECODE
    // VLLM_DECODE: scatters the expert outputs back and sums them; `matmul` made it gemm before.
    expect(cat('_finalize_matmul_scatter_bf16')).toBe('moe_routing');
    expect(cat('finalizeKernelVecLoad')).toBe('moe_routing'); // INFERENCEX_B200: "MoE finalize"
  });
});

describe(`NVIDIA names of Hopper/Blackwell serving (${INFERENCEX_B200} unless said)`, () => {
  it.each([
    ['bmm_E2m1_E2m1E2m1_Fp32', 'moe_gemm'],
    ['bmm_Bfloat16_E2m1E2m1_Fp32', 'moe_gemm'],
    ['nvjet_tst_64x32_64x16_2x1_2cta', 'gemm'],
    ['DeviceGemmFp4GemmSm100', 'gemm'],
    ['cvt_fp16_to_fp4', 'quantize'],
    // NVIDIA/TensorRT-LLM PR 5164, cpp/tensorrt_llm/kernels/trtllmGenKernels/fmha/cubin/kernelMetaInfo.h (the cubin's name less `_cubin`).
    ['FmhaSm100Kernel_QBfloat16KvBfloat16AccFp32OBfloat16HQk192HV128LayoutSeparateQkvMaskDenseVarSeqLenTileSizeQ128TileSizeKv128StaticContext', 'attention'],
    // Issue 54's list; PyTorch torch/csrc/distributed/c10d/symm_mem/CUDASymmetricMemoryOps.cu defines both (vLLM's symm-mem all-reduce, vllm PR 20759).
    ['multimem_all_reduce_kernel', 'communication'],
    ['multimem_all_gather_kernel', 'communication'],
  ])('%s is %s', (name, category) => {
    expect(cat(name)).toBe(category);
  });
});

describe('what the new patterns must not take', () => {
  it('leaves the fixtures\' look-alikes where they were', () => {
    // external/nsys2025.5.1_assignment_cuda.sqlite: a solver kernel, not a MoE finalize.
    expect(cat('_Z16finalize_epsilonPKfiPiS1_')).toBe('other');
    expect(cat('finalize_epsilon(const float *, int, int *, int *)')).toBe('other');
    // A reduce_kernel stays where its op puts it: argmax is sampling, not attention's reduce_segments.
    expect(cat('void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long, 4, 4> >(at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long, 4, 4>)')).toBe('sampling');
  });
});
