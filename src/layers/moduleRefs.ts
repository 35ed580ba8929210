import type { ModuleKind, ModuleRef } from './types.js';

/**
 * The module path of a layerwise marker's text, or null. The form, as vLLM writes it
 * (vllm/utils/nvtx_pytorch_hooks.py `construct_marker_dict_and_push`, read at vllm-project/vllm
 * f0183d3edde5946ea4058591f55462c2472af7b5) and SGLang copies it (its PytHooks, registered with
 * `module_prefix="model"`): `nvtx.range_push("{}".format(marker_dict))` where marker_dict's first
 * key is `Module`, e.g. `{'Module': 'model.layers.0.self_attn', 'TrainableParams': {...},
 * 'Inputs': [[7, 4096]], 'StaticParams': {...}}`. vLLM also pushes and pops an output marker of
 * the same module right after each forward (no launch inside it), and names a torch.compile'd
 * model `Torch Compiled Module (input):<Class>`.
 */
export function modulePathOf(text: string): string | null {
  // The PyTorch profiler's module span (`with_stack`): `nn.Module: <Class>_<instance>`.
  if (text.startsWith('nn.Module: ')) return text.slice('nn.Module: '.length) || null;
  const m = /^\{'Module': '([^']*)'/.exec(text) ?? /^\{'Module': "([^"]*)"/.exec(text);
  return m ? m[1] : null;
}

/** A decoder layer's index in a module path: `model.layers.17.mlp` -> 17 (also `h.N`, `blocks.N`). */
const LAYER_INDEX = /(?:^|\.)(?:layers|layer|h|blocks|decoder_layers)\.(\d+)(?=\.|$)/;
/**
 * A decoder layer's index in a PyTorch-profiler module name: `<Class>_<instance>` of a layer or
 * block class (`Qwen3DecoderLayer_17`): the profiler numbers each class's instances in creation
 * order, which is layer order for a model's layer list. Other classes (`Attention_3`) take the
 * layer of the layer span around them.
 */
const TORCH_LAYER_INDEX = /^\w*(?:Layer|Block)_(\d+)$/;

/** Kinds by the name of one path component, first match wins (tested from the leaf up). */
const KIND_RULES: readonly [RegExp, ModuleKind][] = [
  [/experts?|moe|router|shared_expert|gate$/i, 'moe'],
  [/attn|attention/i, 'attention'],
  [/mlp|feed_?forward|ffn/i, 'mlp'],
  [/norm/i, 'norm'],
  [/embed|wte|tok_embeddings/i, 'embedding'],
  [/lm_head|logits/i, 'lmHead'],
  [/sampler/i, 'sampler'],
  [/all_?reduce|all_?gather|comm/i, 'communication'],
];

/** What a module path says: its layer index and kind (from the innermost component that names one). */
export function moduleRefOf(path: string): ModuleRef {
  const m = LAYER_INDEX.exec(path) ?? TORCH_LAYER_INDEX.exec(path);
  const layer = m ? Number(m[1]) : null;
  const parts = path.split('.');
  for (let i = parts.length - 1; i >= 0; i--) {
    // The layer container itself (`layers.3`) names no kind: its own kernels take their category's.
    if (/^\d+$/.test(parts[i])) break;
    for (const [re, kind] of KIND_RULES) if (re.test(parts[i])) return { path, layer, kind };
  }
  return { path, layer, kind: 'other' };
}

/**
 * A kernel's kind from its category, where no module names one (no markers, or a kernel of the
 * layer itself, not of a submodule): only categories that say which module ran them.
 */
export function moduleKindOfCategory(category: string): ModuleKind {
  if (category === 'attention') return 'attention';
  if (category === 'communication') return 'communication';
  if (category === 'moe_gemm' || category === 'moe_routing') return 'moe';
  if (category === 'norm') return 'norm';
  if (category === 'sampling') return 'sampler';
  return 'other';
}
