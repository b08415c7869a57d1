// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Typed options of each op, decoded from the model file's option union. Options are semantic (what the op
// computes), never implementation choices: kernels decide how.
#include <cstdint>
#include <variant>
#include <vector>

namespace vitrt {

// An activation applied to an op's result (an epilogue). Values match `Activation` in the schema.
enum class Activation : int8_t { kNone = 0, kRelu = 1, kGeluErf = 2, kGeluTanh = 3 };

struct Conv2dAttrs {  // src [B,Cin,H,W], weight [Cout,Cin/groups,kh,kw], bias [Cout]? -> [B,Cout,Ho,Wo]
  int32_t stride_h = 1, stride_w = 1;
  int32_t pad_h = 0, pad_w = 0;  // symmetric zero padding
  int32_t dilation_h = 1, dilation_w = 1;
  int32_t groups = 1;
  Activation activation = Activation::kNone;
};

struct BatchNorm2dAttrs {  // src [B,C,H,W], gamma, beta, running_mean, running_var (all [C])
  float eps = 1e-5f;
};

struct LinearAttrs {  // src [..., K], weight [N,K] (PyTorch layout), bias [N]? -> [..., N]
  Activation activation = Activation::kNone;
};

struct LayerNormAttrs {  // over the last axis; gamma, beta [C] optional
  float eps = 1e-5f;
};

enum class GeluApproximation : int8_t { kErf = 0, kTanh = 1 };
struct GeluAttrs {
  GeluApproximation approximation = GeluApproximation::kErf;
};

struct ConcatAttrs {  // inputs broadcast (numpy rules) on every axis but `axis`
  int32_t axis = 0;
};

struct SliceAttrs {  // keeps [start, end) of `axis`; negative values count from the end
  int32_t axis = 0;
  int64_t start = 0, end = 0;
};

struct ReshapeAttrs {  // 0 copies the source dim at that position, -1 is inferred (at most one)
  std::vector<int64_t> shape;
};

struct TransposeAttrs {
  std::vector<int32_t> perm;
};

struct ReduceMeanAttrs {
  std::vector<int32_t> axes;
  bool keepdims = false;
};

struct SoftmaxAttrs {
  int32_t axis = -1;
};

// How the projected Q, K and V reach a SoftmaxAttention op. Values match `AttentionInputs` in the schema.
enum class AttentionInputs : int8_t {
  kSeparate = 0,   // inputs q [B,Nq,C], k [B,Nk,C], v [B,Nk,C]
  kQkvPacked = 1,  // input qkv [B,N,3C]: columns [0,C) Q, [C,2C) K, [2C,3C) V (timm ViT)
  kQKvPacked = 2,  // inputs q [B,Nq,C], kv [B,Nk,2C]: columns [0,C) K, [C,2C) V (PVT)
};

struct SoftmaxAttentionAttrs {  // softmax(q·kᵀ·scale)·v per head, heads split head-major (c = head·d + j)
  int32_t num_heads = 1;
  float scale = 1.0f;
  AttentionInputs inputs = AttentionInputs::kSeparate;
};

struct AdaptiveAvgPool2dAttrs {  // src [B,C,H,W] -> [B,C,out_h,out_w], PyTorch's adaptive bin edges
  int32_t out_h = 1, out_w = 1;
};

struct NoAttrs {};

using OpAttrs = std::variant<NoAttrs, Conv2dAttrs, BatchNorm2dAttrs, LinearAttrs, LayerNormAttrs, GeluAttrs,
                             ConcatAttrs, SliceAttrs, ReshapeAttrs, TransposeAttrs, ReduceMeanAttrs, SoftmaxAttrs,
                             SoftmaxAttentionAttrs, AdaptiveAvgPool2dAttrs>;

}  // namespace vitrt
