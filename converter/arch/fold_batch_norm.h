// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Folding an eval-mode BatchNorm2d into the convolution before it (docs/models.md §1):
//   w'[o] = w[o] · γ[o] / sqrt(var[o] + eps)
//   b'[o] = (b[o] − mean[o]) · γ[o] / sqrt(var[o] + eps) + β[o]
// computed in double and rounded to float once.
#include <string>
#include <vector>

#include "arch/graph_builder.h"

namespace vitrt::convert {

// w: [Cout, ...] (`per_channel` = w.size() / Cout values per output channel); bias may be empty (no conv
// bias). gamma, beta, mean, var: [Cout]. Writes w_out (same layout as w) and b_out [Cout].
void fold_batch_norm(const std::vector<float>& w, const std::vector<float>& bias,
                     const std::vector<float>& gamma, const std::vector<float>& beta,
                     const std::vector<float>& mean, const std::vector<float>& var, double eps,
                     std::vector<float>* w_out, std::vector<float>* b_out);

// A Conv2d whose BatchNorm2d is folded in: reads `conv`.weight (shape `w_shape`), `conv`.bias when
// `conv_bias`, and `bn`.{weight,bias,running_mean,running_var} ([Cout]) from the checkpoint, marks them used
// (and `bn`.num_batches_tracked ignored), and returns the folded weight and bias constants. Missing or
// misshapen keys are reported through the builder (which then fails in finish()).
void conv_bn_weights(GraphBuilder& b, const Checkpoint& ckpt, const std::string& conv, const std::string& bn,
                     const std::vector<int64_t>& w_shape, bool conv_bias, double eps, int32_t* weight,
                     int32_t* bias);

}  // namespace vitrt::convert
