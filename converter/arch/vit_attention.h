// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The attention inside a ViT/DeiT block (docs/models.md §5, "ViT with another attention"): timm's packed-qkv
// softmax attention, or one of the linear-attention family (docs/linear_attention.md) under the official
// module's key names at `blocks.{i}.attn`. One row per mechanism: how its keys are recognised and how its
// ops are emitted. `--attn NAME` forces a row; `auto` takes the row whose keys block 0 holds.
#include <string>
#include <vector>

#include "arch/arch.h"
#include "arch/graph_builder.h"

namespace vitrt::convert {

// What a Nyströmformer needs that its keys cannot tell (resolve_nystrom_options).
struct NystromChoice {
  int64_t landmarks = 0;  // m: the checkpoint args' num_landmarks, else --landmarks; 0 when neither says
  NystromInit init = NystromInit::kGlobal;  // the LRA code's "original" unless --nystrom-init per_head
};

// Where one block's attention sits and the sizes the ViT around it fixes.
struct VitAttentionSite {
  std::string prefix;  // e.g. "blocks.3.attn"
  int64_t dim = 0;     // C, the token width in and out
  int heads = 1;       // from the family's rule (C/64) or --heads
  int64_t tokens = 0;  // N at the built image size, class tokens included
  NystromChoice nystrom;
  int64_t class_tokens = 1;  // the class (and distillation) tokens before the patches; 0 with mean pooling
};

struct VitAttentionKind {
  const char* name;     // the --attn value
  const char* summary;  // one line for --help and errors
  // Whether the attention at `prefix` (block 0) holds this mechanism's keys.
  bool (*detect)(const GraphBuilder& b, const std::string& prefix);
  // Emits the attention of `site` on the normalised tokens x [B,N,C]; *out is [B,N,C]. Missing or misshapen
  // keys are recorded by the builder (weight()); a status is for what the builder cannot say.
  Status (*emit)(GraphBuilder& b, const VitAttentionSite& site, int32_t x, int32_t* out);
};

// Every mechanism the ViT builder knows, in detection order.
const std::vector<VitAttentionKind>& vit_attention_kinds();
// "softmax, linformer_fairseq, ..." for --help.
std::string known_vit_attentions();
// The mechanism for `requested` ("auto" detects from block 0's keys at `prefix`). Fails naming the keys found
// under the prefix when nothing matches, and the known names when `requested` is unknown.
Status choose_vit_attention(const GraphBuilder& b, const std::string& requested, const std::string& prefix,
                            const VitAttentionKind** out);

// The rows (one file per mechanism: arch/attn_<name>.cpp).
bool detect_softmax_attention(const GraphBuilder& b, const std::string& prefix);
Status emit_softmax_attention(GraphBuilder& b, const VitAttentionSite& site, int32_t x, int32_t* out);
bool detect_linformer_fairseq(const GraphBuilder& b, const std::string& prefix);
Status emit_linformer_fairseq(GraphBuilder& b, const VitAttentionSite& site, int32_t x, int32_t* out);
bool detect_linformer_lucidrains(const GraphBuilder& b, const std::string& prefix);
Status emit_linformer_lucidrains(GraphBuilder& b, const VitAttentionSite& site, int32_t x, int32_t* out);
bool detect_linformer_lra(const GraphBuilder& b, const std::string& prefix);
Status emit_linformer_lra(GraphBuilder& b, const VitAttentionSite& site, int32_t x, int32_t* out);
bool detect_external_attention(const GraphBuilder& b, const std::string& prefix);
Status emit_external_attention(GraphBuilder& b, const VitAttentionSite& site, int32_t x, int32_t* out);
bool detect_performer(const GraphBuilder& b, const std::string& prefix);
bool detect_never(const GraphBuilder& b, const std::string& prefix);  // rows chosen only by --attn
Status emit_performer_softmax(GraphBuilder& b, const VitAttentionSite& site, int32_t x, int32_t* out);
Status emit_performer_relu(GraphBuilder& b, const VitAttentionSite& site, int32_t x, int32_t* out);
Status emit_performer_global_max(GraphBuilder& b, const VitAttentionSite& site, int32_t x, int32_t* out);
bool detect_linear_transformer(const GraphBuilder& b, const std::string& prefix);
Status emit_linear_transformer(GraphBuilder& b, const VitAttentionSite& site, int32_t x, int32_t* out);
bool detect_fastformer(const GraphBuilder& b, const std::string& prefix);
Status emit_fastformer(GraphBuilder& b, const VitAttentionSite& site, int32_t x, int32_t* out);
bool detect_efficient_attention(const GraphBuilder& b, const std::string& prefix);
Status emit_efficient_attention(GraphBuilder& b, const VitAttentionSite& site, int32_t x, int32_t* out);
bool detect_nystrom(const GraphBuilder& b, const std::string& prefix);
Status emit_nystrom(GraphBuilder& b, const VitAttentionSite& site, int32_t x, int32_t* out);

// The Nyströmformer choices from the checkpoint args and the options (--landmarks, --nystrom-init): the args'
// num_landmarks (or landmarks) first, a --landmarks that contradicts them refused. invalid_argument for an
// option out of range, bad_input for args that are not a positive count.
Status resolve_nystrom_options(const Checkpoint& ckpt, const ConvertOptions& opt, NystromChoice* out);

}  // namespace vitrt::convert
