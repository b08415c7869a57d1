// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "runtime/batch_tile.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "ir/shape_propagation.h"
#include "memory/liveness.h"

namespace vitrt {
namespace {

// Ops whose kernels compute image n of every output from image n of every activation input alone.
bool per_image_op(OpType type) {
  switch (type) {
    case OpType::kConv2d:
    case OpType::kBatchNorm2d:
    case OpType::kPool2d:
    case OpType::kSqueezeExcite:
    case OpType::kRelu:
    case OpType::kUnary:
    case OpType::kAdd:
    case OpType::kMul:
      return true;
    default:
      return false;
  }
}

// `one` (batch 1) and `full` (batch n > 1) differ in dim 0 only, which is the batch.
bool batch_major(const Shape& one, const Shape& full, int64_t n) {
  if (one.rank < 1 || one.rank != full.rank || one[0] != 1 || full[0] != n) return false;
  for (int d = 1; d < one.rank; ++d)
    if (one[d] != full[d]) return false;
  return true;
}

// Image b's slice of a boundary tensor (one not living inside `tile`) starts at b × its bytes per image
// (Session::run_batch_tile): every slice keeps the backend's alignment (backends/backend.h) only when those
// bytes are a multiple of it. Interior tensors sit at slice 0.
bool boundary_slices_aligned(const Graph& g, const std::vector<Shape>& one, const std::vector<Lifetime>& life,
                             StepRange tile, uint64_t alignment) {
  for (int s = tile.first; s <= tile.last; ++s)
    for (const std::vector<int32_t>* tensors : {&g.nodes[s].inputs, &g.nodes[s].outputs})
      for (int32_t t : *tensors) {
        if (t == kAbsent || g.tensors[t].is_constant || lives_inside(life[t], tile)) continue;
        if (tensor_bytes(g.tensors[t], one[t]) % alignment != 0) return false;
      }
  return true;
}

}  // namespace

bool parse_batch_tile_kib(const char* text, uint64_t* kib) {
  if (!text || !*text) return false;
  uint64_t value = 0;
  for (const char* c = text; *c; ++c) {
    if (*c < '0' || *c > '9') return false;
    value = value * 10 + static_cast<uint64_t>(*c - '0');
    if (value > kMaxBatchTileKib) return false;  // checked per digit: no wrap-around
  }
  *kib = value;
  return true;
}

bool kib_from_env(const char* name, uint64_t min_kib, std::atomic<bool>* warned, uint64_t* kib) {
  const char* env = std::getenv(name);
  if (!env) return false;
  if (parse_batch_tile_kib(env, kib) && *kib >= min_kib) return true;
  if (!warned->exchange(true))
    std::fprintf(stderr, "vitrt: %s='%s' ignored (expected KiB as decimal digits, %llu..%llu)\n", name, env,
                 static_cast<unsigned long long>(min_kib), static_cast<unsigned long long>(kMaxBatchTileKib));
  return false;
}

BatchTileLimits batch_tile_limits_from_env(BatchTileLimits limits) {
  const BatchTileLimits defaults;
  if (limits.min_image_bytes != defaults.min_image_bytes ||
      limits.max_weight_bytes != defaults.max_weight_bytes)
    return limits;
  static std::atomic<bool> warned_min{false}, warned_weight{false};
  uint64_t kib = 0;
  if (kib_from_env("VITRT_BATCH_TILE_WEIGHT_KIB", 0, &warned_weight, &kib))
    limits.max_weight_bytes = kib * 1024;
  if (kib_from_env("VITRT_BATCH_TILE_KIB", 0, &warned_min, &kib))
    limits.min_image_bytes = kib == 0 ? UINT64_MAX : kib * 1024;
  return limits;
}

StepRange choose_batch_tile(const Graph& g, const std::vector<Shape>& max_shapes, int64_t max_batch,
                            const BatchTileLimits& limits, uint64_t alignment) {
  StepRange none;
  if (max_batch < 2 || g.nodes.empty() || limits.min_image_bytes == UINT64_MAX ||
      max_shapes.size() != g.tensors.size())
    return none;
  std::vector<Shape> one(g.tensors.size());
  if (!propagate_shapes(g, 1, one.data()).ok()) return none;
  std::vector<bool> graph_output(g.tensors.size(), false);
  for (int32_t t : g.outputs) graph_output[t] = true;
  int end = 0;
  for (const Node& n : g.nodes) {
    if (!per_image_op(n.type)) break;
    uint64_t weight_bytes = 0, largest_image_bytes = 0;
    bool ok = true;
    auto visit = [&](int32_t t) {
      if (t == kAbsent) return;
      const Tensor& tensor = g.tensors[t];
      if (tensor.is_constant) {
        weight_bytes += tensor.constant.size;
        return;
      }
      if (graph_output[t] || !batch_major(one[t], max_shapes[t], max_batch)) {
        ok = false;
        return;
      }
      largest_image_bytes = std::max(largest_image_bytes, tensor_bytes(tensor, one[t]));
    };
    for (int32_t t : n.inputs) visit(t);
    for (int32_t t : n.outputs) visit(t);
    if (!ok || weight_bytes > limits.max_weight_bytes || largest_image_bytes < limits.min_image_bytes) break;
    ++end;
  }
  // The longest prefix of that run (two steps at least) whose boundary slices are aligned; which tensors are
  // boundary depends on where the tile ends.
  const std::vector<Lifetime> life = compute_lifetimes(g);
  StepRange tile;
  tile.first = 0;
  for (tile.last = end - 1; tile.last >= 1; --tile.last)
    if (boundary_slices_aligned(g, one, life, tile, std::max<uint64_t>(alignment, 1))) return tile;
  return none;
}

}  // namespace vitrt
