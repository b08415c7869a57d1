// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "runtime/row_tile.h"

#include <algorithm>
#include <atomic>
#include <numeric>

#include "common/checked_math.h"
#include "ir/shape_propagation.h"
#include "memory/liveness.h"
#include "runtime/batch_tile.h"

namespace vitrt {
namespace {

// Element count over the last dim of a rank >= 2 shape; -1 for other shapes.
int64_t rows_of(const Shape& s) {
  if (s.rank < 2 || s.dim(-1) <= 0) return -1;
  return s.numel() / s.dim(-1);
}

// A constant operand that Add or Mul broadcasts along the last dim only (every other dim 1, no more dims than
// the activation), so row r of the output needs row r of the activation alone.
bool last_dim_constant(const Shape& c, const Shape& act) {
  if (c.rank > act.rank) return false;
  for (int d = 0; d + 1 < c.rank; ++d)
    if (c[d] != 1) return false;
  return c.rank == 0 || c.dim(-1) == 1 || c.dim(-1) == act.dim(-1);
}

// The row count every activation of node `n` shares under `shapes` when the node computes row r of its output
// from row r of its activation inputs (and whole constants) alone; -1 when it does not, or the rows differ.
int64_t row_wise_rows(const Graph& g, const Node& n, const std::vector<Shape>& shapes) {
  auto constant = [&](size_t i) {
    return i < n.inputs.size() && n.inputs[i] != kAbsent && g.tensors[n.inputs[i]].is_constant;
  };
  auto absent = [&](size_t i) { return i >= n.inputs.size() || n.inputs[i] == kAbsent; };
  if (n.outputs.size() != 1 || n.inputs.empty() || n.inputs[0] == kAbsent) return -1;
  switch (n.type) {
    case OpType::kLayerNorm:  // gamma, beta
      if (!(absent(1) || constant(1)) || !(absent(2) || constant(2))) return -1;
      break;
    case OpType::kLinear:  // a constant weight and bias; the residual is an activation row-aligned with dst
      if (constant(0) || !constant(1) || !(absent(2) || constant(2)) || constant(3)) return -1;
      break;
    case OpType::kGelu:
    case OpType::kRelu:
    case OpType::kUnary:
      if (constant(0)) return -1;
      break;
    case OpType::kAdd:
    case OpType::kMul: {
      if (absent(1) || (constant(0) && constant(1))) return -1;
      const int32_t a = n.inputs[0], b = n.inputs[1];
      if (constant(0) || constant(1)) {
        const int32_t c = constant(0) ? a : b, x = constant(0) ? b : a;
        if (!last_dim_constant(shapes[c], shapes[x]) || shapes[x] != shapes[n.outputs[0]]) return -1;
      } else if (shapes[a] != shapes[b]) {
        return -1;  // a broadcast between activations mixes rows
      }
      break;
    }
    default:
      return -1;
  }
  int64_t rows = -1;
  for (const std::vector<int32_t>* tensors : {&n.inputs, &n.outputs})
    for (int32_t t : *tensors) {
      if (t == kAbsent || g.tensors[t].is_constant) continue;
      const int64_t r = rows_of(shapes[t]);
      if (r < 0 || (rows >= 0 && r != rows)) return -1;
      rows = r;
    }
  return rows;
}

// The tile over `range` (rows at the maximum batch: `rows`) when it pays: its inside tensors exceed
// min_inside_bytes and a block of them (within block_bytes) is fewer rows than the whole.
bool size_tile(const Graph& g, const std::vector<Shape>& max_shapes, const std::vector<Lifetime>& life,
               StepRange range, int64_t rows, const RowTileLimits& limits, uint64_t alignment,
               RowTile* tile) {
  if (range.last <= range.first) return false;  // one step: nothing stays in the cache between steps
  std::vector<int32_t> seen;
  uint64_t inside_row_bytes = 0, unit = 16;  // 16 rows: whole row tiles of the packed GEMM
  uint64_t weight_bytes = 0;
  for (int s = range.first; s <= range.last; ++s)
    for (const std::vector<int32_t>* tensors : {&g.nodes[s].inputs, &g.nodes[s].outputs})
      for (int32_t t : *tensors) {
        if (t == kAbsent) continue;
        if (g.tensors[t].is_constant) {
          weight_bytes += g.tensors[t].constant.size;  // mapped sizes: far below 2^63 together
          continue;
        }
        if (std::find(seen.begin(), seen.end(), t) != seen.end()) continue;
        seen.push_back(t);
        const uint64_t row_bytes = tensor_bytes(g.tensors[t], max_shapes[t]) / static_cast<uint64_t>(rows);
        // shapes passed inference: bounded far below 2^63
        if (lives_inside(life[t], range)) inside_row_bytes += row_bytes;
        // Block b's slice of a crossing tensor starts at b x block rows x row_bytes, an inside tensor's slot
        // for thread t at t x block rows x row_bytes: keep both aligned.
        unit = std::lcm(unit, alignment / std::gcd(row_bytes % alignment, alignment));
      }
  uint64_t inside_bytes = 0;
  if (weight_bytes > limits.max_weight_bytes) return false;
  if (inside_row_bytes == 0 || (checked_mul(inside_row_bytes, static_cast<uint64_t>(rows), &inside_bytes) &&
                                inside_bytes <= limits.min_inside_bytes))
    return false;
  uint64_t block = limits.block_bytes / inside_row_bytes;
  block = std::max(block - block % unit, unit);
  if (block >= static_cast<uint64_t>(rows)) return false;  // one block: the untiled run
  tile->steps = range;
  tile->block_rows = static_cast<int64_t>(block);
  return true;
}

}  // namespace

RowTileLimits row_tile_limits_from_env(RowTileLimits limits) {
  const RowTileLimits defaults;
  if (limits.min_inside_bytes != defaults.min_inside_bytes || limits.block_bytes != defaults.block_bytes ||
      limits.max_weight_bytes != defaults.max_weight_bytes)
    return limits;
  // One warning per variable, once per process.
  static std::atomic<bool> warned_tile{false}, warned_block{false};
  uint64_t kib = 0;
  if (kib_from_env("VITRT_ROW_TILE_KIB", 0, &warned_tile, &kib))
    limits.min_inside_bytes = kib == 0 ? UINT64_MAX : kib * 1024;
  if (kib_from_env("VITRT_ROW_BLOCK_KIB", 1, &warned_block, &kib)) limits.block_bytes = kib * 1024;
  return limits;
}

std::vector<RowTile> choose_row_tiles(const Graph& g, const std::vector<Shape>& max_shapes, int64_t max_batch,
                                      const RowTileLimits& limits, uint64_t alignment, StepRange exclude) {
  std::vector<RowTile> tiles;
  if (g.nodes.empty() || limits.min_inside_bytes == UINT64_MAX || max_shapes.size() != g.tensors.size())
    return tiles;
  // Row counts must agree at every batch the session may run: checked at 1 and at the maximum.
  std::vector<Shape> one(g.tensors.size());
  if (!propagate_shapes(g, 1, one.data()).ok()) return tiles;
  const std::vector<Lifetime> life = compute_lifetimes(g);
  alignment = std::max<uint64_t>(alignment, 1);
  const int num_steps = static_cast<int>(g.nodes.size());
  auto excluded = [&](int s) { return s >= exclude.first && s <= exclude.last; };
  for (int s = 0; s < num_steps;) {
    const int64_t rows = excluded(s) ? -1 : row_wise_rows(g, g.nodes[s], max_shapes);
    const int64_t rows_one = rows < 0 ? -1 : row_wise_rows(g, g.nodes[s], one);
    if (rows < 0 || rows_one < 0) {
      ++s;
      continue;
    }
    int e = s + 1;
    while (e < num_steps && !excluded(e) && row_wise_rows(g, g.nodes[e], max_shapes) == rows &&
           row_wise_rows(g, g.nodes[e], one) == rows_one)
      ++e;
    RowTile tile;
    if (max_batch >= 1 && size_tile(g, max_shapes, life, StepRange{s, e - 1}, rows, limits, alignment, &tile))
      tiles.push_back(tile);
    s = e;
  }
  return tiles;
}

Shape row_block_shape(const Shape& full, int64_t rows) {
  Shape s = full;
  for (int d = 0; d + 2 < s.rank; ++d) s[d] = 1;
  s[s.rank - 2] = rows;
  return s;
}

}  // namespace vitrt
