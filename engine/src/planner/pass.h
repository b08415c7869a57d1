// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// A graph rewrite pass (ORT GraphTransformer; pnnx pass_level5). Each pass lives in passes/<name>.cpp,
// reports whether it changed the graph, and can be switched off by name (`--disable-pass NAME`, or
// VITRT_DISABLE_PASSES=a,b in the environment) for debugging.
#include <memory>
#include <string>

#include "backends/backend.h"
#include "ir/graph.h"

namespace vitrt {

struct PassContext {
  const Backend* backend = nullptr;  // fuse only into ops this backend implements
};

class Pass {
 public:
  virtual ~Pass() = default;
  virtual const char* name() const = 0;
  virtual const char* description() const = 0;
  // Rewrites `graph` in place; sets *modified when anything changed. The graph must stay valid.
  virtual Status run(Graph& graph, const PassContext& ctx, bool* modified) = 0;
};

std::unique_ptr<Pass> create_fuse_attention_pass();
std::unique_ptr<Pass> create_fuse_external_attention_pass();
std::unique_ptr<Pass> create_fuse_performer_attention_pass();
std::unique_ptr<Pass> create_fuse_nystrom_attention_pass();
std::unique_ptr<Pass> create_fuse_linear_transformer_pass();
std::unique_ptr<Pass> create_canonicalize_pass();
std::unique_ptr<Pass> create_fold_constants_pass();
std::unique_ptr<Pass> create_channels_last_conv_pass();
std::unique_ptr<Pass> create_channels_last_stem_pass();
std::unique_ptr<Pass> create_fuse_squeeze_excite_pass();
std::unique_ptr<Pass> create_fuse_selective_kernel_pass();
std::unique_ptr<Pass> create_fuse_fastformer_pass();
std::unique_ptr<Pass> create_fuse_efficient_attention_pass();
std::unique_ptr<Pass> create_fuse_epilogue_pass();
std::unique_ptr<Pass> create_fuse_conv_mlp_pass();
std::unique_ptr<Pass> create_eliminate_dead_code_pass();

}  // namespace vitrt
