// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The scalar constants and element formulas of PerformerAttention's random features (core/ir/op_attrs.h,
// PerformerAttentionAttrs; docs/linear_attention.md, Performer), shared by the reference and x86 kernels so
// that both round them as lucidrains' float32 code does: Python computes d^-1/4, its square and m^-1/2 in
// double and torch applies them to float tensors as float.
#include <cmath>
#include <cstdint>

namespace vitrt {
namespace ref {

constexpr float kPerformerSoftmaxEps = 1e-4f;      // softmax_kernel's eps
constexpr float kPerformerGeneralizedEps = 1e-3f;  // generalized_kernel's kernel_epsilon

struct PerformerScalars {
  float dn;     // data_normalizer d^-1/4
  float dn_sq;  // data_normalizer ** 2
  float ratio;  // m^-1/2
};

inline PerformerScalars performer_scalars(int64_t d, int64_t m) {
  const double dn = std::pow(static_cast<double>(d), -0.25);
  return {static_cast<float>(dn), static_cast<float>(dn * dn),
          static_cast<float>(std::pow(static_cast<double>(m), -0.5))};
}

// g = (‖x‖² / 2)·dn², from ‖x‖² in float.
inline float performer_diag(float sum_sq, const PerformerScalars& s) {
  return (sum_sq / 2.0f) * s.dn_sq;
}

// The softmax kernel's feature ratio·(exp(u − g − max) + eps), in torch's order of operations.
inline float performer_softmax_feature(float u, float g, float max, const PerformerScalars& s) {
  return s.ratio * (std::exp((u - g) - max) + kPerformerSoftmaxEps);
}

// The generalized kernel's feature relu(u) + eps.
inline float performer_relu_feature(float u) {
  return (u < 0.0f ? 0.0f : u) + kPerformerGeneralizedEps;  // NaN stays NaN, as torch.relu
}

}  // namespace ref
}  // namespace vitrt
