// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Building blocks shared by the architectures: token/image layout changes, LayerNorm, Linear.
#include <string>

#include "arch/graph_builder.h"

namespace vitrt::convert {

// [B,C,H,W] -> [B,H*W,C]  (x.flatten(2).transpose(1,2))
int32_t image_to_tokens(GraphBuilder& b, int32_t x, const std::string& name);
// [B,H*W,C] -> [B,C,H,W]  (x.transpose(1,2).reshape(B,C,H,W))
int32_t tokens_to_image(GraphBuilder& b, int32_t x, int64_t h, int64_t w, const std::string& name);
// LayerNorm over the last axis with `prefix`.weight / `prefix`.bias of width c.
int32_t layer_norm(GraphBuilder& b, int32_t x, const std::string& prefix, int64_t c, float eps);
// Linear with `prefix`.weight [out,in] and `prefix`.bias [out] (bias optional when `bias` is false).
int32_t linear(GraphBuilder& b, int32_t x, const std::string& prefix, int64_t in, int64_t out, bool bias = true,
               Activation act = Activation::kNone);
int32_t gelu(GraphBuilder& b, int32_t x, GeluApproximation approx, const std::string& name);

}  // namespace vitrt::convert
