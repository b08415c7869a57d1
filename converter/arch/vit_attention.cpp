// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The table of ViT attention mechanisms and the choice among them (arch/vit_attention.h).
#include "arch/vit_attention.h"

namespace vitrt::convert {

const std::vector<VitAttentionKind>& vit_attention_kinds() {
  static const std::vector<VitAttentionKind> kinds = {
      {"softmax", "timm/DeiT packed qkv softmax attention (attn.qkv, attn.proj)", detect_softmax_attention,
       emit_softmax_attention},
      {"linformer_fairseq",
       "Linformer, fairseq MultiheadLinearAttention (q_proj/k_proj/v_proj/out_proj, compress_k[/compress_v])",
       detect_linformer_fairseq, emit_linformer_fairseq},
      {"linformer_lucidrains",
       "Linformer, lucidrains LinformerSelfAttention (to_q/to_k[/to_v], proj_k[/proj_v], to_out)",
       detect_linformer_lucidrains, emit_linformer_lucidrains},
      {"linformer_lra",
       "Linformer, mlpen LRA Attention wrapper (W_q/W_k/W_v, ff) around LinformerAttention (attn.E [h,k,L], "
       "one E shared by K and V in every layer)",
       detect_linformer_lra, emit_linformer_lra},
      {"external", "External Attention, EAMLP's multi-head Attention (trans_dims, linear_0, linear_1, proj)",
       detect_external_attention, emit_external_attention},
      {"performer",
       "Performer, lucidrains Attention (to_q/to_k/to_v, fast_attention.projection_matrix, to_out): softmax "
       "kernel, key max per (b,h)",
       detect_performer, emit_performer_softmax},
      {"performer_relu", "Performer with generalized_attention (ReLU kernel); same keys, chosen by --attn",
       detect_never, emit_performer_relu},
      {"performer_global_max",
       "Performer with older versions' key max over the whole batch (couples the images); same keys, chosen "
       "by "
       "--attn",
       detect_never, emit_performer_global_max},
      {"linear_transformer",
       "Linear Transformer, idiap AttentionLayer + LinearAttention (query_projection/key_projection/"
       "value_projection, out_projection): elu+1 features, normalised, eps 1e-6",
       detect_linear_transformer, emit_linear_transformer},
      {"fastformer",
       "Fastformer, the official FastAttention (self.query/key/query_att/key_att/transform, output.dense, "
       "output.LayerNorm eps 1e-12)",
       detect_fastformer, emit_fastformer},
      {"efficient",
       "Efficient Attention, the official EfficientAttention on the patch grid (attn.keys/queries/values/"
       "reprojection 1x1 convs, residual inside); a ViT without class token",
       detect_efficient_attention, emit_efficient_attention},
      {"nystrom",
       "Nystromformer, the official LRA Attention wrapper (W_q/W_k/W_v, optional attn.conv [h,1,ks,1], ff): "
       "Q and K / d^(1/4), 6 iterations; landmarks from the checkpoint args or --landmarks",
       detect_nystrom, emit_nystrom},
  };
  return kinds;
}

std::string known_vit_attentions() {
  std::string names;
  for (const auto& k : vit_attention_kinds()) names += (names.empty() ? "" : ", ") + std::string(k.name);
  return names;
}

Status choose_vit_attention(const GraphBuilder& b, const std::string& requested, const std::string& prefix,
                            const VitAttentionKind** out) {
  const auto& kinds = vit_attention_kinds();
  if (requested != "auto") {
    for (const auto& k : kinds)
      if (requested == k.name) {
        *out = &k;
        return Status::Ok();
      }
    return invalid_argument("--attn: unknown attention '" + requested + "' (known: auto, " +
                            known_vit_attentions() + ")");
  }
  for (const auto& k : kinds)
    if (k.detect(b, prefix)) {
      *out = &k;
      return Status::Ok();
    }
  std::string found;
  for (const auto& key : b.keys_under(prefix + ".", 12)) found += (found.empty() ? "" : ", ") + key;
  return unsupported("ViT: the attention at '" + prefix +
                     "' is none the converter knows (keys: " + (found.empty() ? std::string("none") : found) +
                     "); known layouts: " + known_vit_attentions() +
                     " (docs/models.md, \"ViT with another attention\")");
}

}  // namespace vitrt::convert
