// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// SOFT's Newton–Raphson (Newton–Schulz) Moore–Penrose pseudo-inverses (docs/models.md §3.5), as standalone
// float32 functions on row-major m×m matrices, reusable by every backend that runs LinearAttention.
//
// Both run exactly the iteration the models were trained with: V ← 2V − (V·P)·V, a fixed number of times from
// a fixed start. Neither is a true inverse: with 20 iterations and an ill-conditioned K2 (cond ≳ 1e4) the
// iteration has not converged, and the model's weights were fitted to that partially converged result.
// Products accumulate in float, as PyTorch's float32 matmuls do; nothing allocates.
#include <cstdint>

namespace vitrt {
namespace ref {

// Scratch floats the functions below need for matrices of side m.
inline int64_t newton_workspace_floats(int64_t m) {
  return 3 * m * m;
}

// Current SOFT (`SOFT/kernel/inverse.py::newton_inv`), one matrix:
//   α = 0.9·2 / (max_i Σ_j K[i][j])²   (row sums of the un-regularised K)
//   P = K + regularizer·I ; V = α·P ; `iterations` × V = 2V − (V·P)·V.
// k: [m,m]; inv: [m,m] (must not alias k); work: newton_workspace_floats(m).
void newton_inverse_scaled(const float* k, int64_t m, int32_t iterations, float regularizer, float* inv,
                           float* work);

// Legacy SOFT / SOFT-Norm (`SoftmaxFreeNormAttentionKernel.newton_inv`), a batch of `count` matrices that
// share ONE step size:
//   α = 2 / (max over all matrices and rows of the row sum)² ; V = α·K
//   while max over all matrices of ‖I − K·V‖₁ (max column abs sum) > 1.01 and fewer than 10 tries: α ·= 0.5
//   then `iterations` × V = 2V − (V·K)·V per matrix (no regulariser).
// Because α is global, a matrix's result depends on the other matrices of the batch (as in PyTorch).
// k: [count,m,m]; inv: [count,m,m] (must not alias k); work: newton_workspace_floats(m).
void newton_inverse_legacy(const float* k, int64_t count, int64_t m, int32_t iterations, float* inv,
                           float* work);

// The Newton–Schulz step loop shared by both: `iterations` × V = 2V − (V·P)·V on v in place.
// work: 2·m·m floats.
void newton_iterate(const float* p, int64_t m, int32_t iterations, float* v, float* work);

}  // namespace ref
}  // namespace vitrt
