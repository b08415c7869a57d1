// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Row tiling of row-wise step chains (docs/architecture.md §6.2), the batch tile's sibling. A transformer
// block's LayerNorm -> fc1 (+GELU) -> fc2 (+residual) computes token row r of every output from token row r
// alone; at 12544 tokens its hidden activation (12544 x 768 floats, 38.5 MB) is past the L3 cache, so fc1
// writes it to DRAM and fc2 reads it back. The session runs such a chain block of rows by block of rows on
// row slices of the [rows, C]-flattened tensors: the tensors born and dying inside the chain get one block's
// bytes (they stay in L2/L3), the ones crossing its edge stay full and each block sees its slice of them.
#include <cstdint>
#include <vector>

#include "common/shape.h"
#include "ir/graph.h"
#include "memory/placement.h"

namespace vitrt {

struct RowTileLimits {
  // A chain is tiled only when its inside tensors (produced and last read inside it) hold more than this many
  // bytes at the planned row count: below that they stay in the cache anyway. 16 MiB, half this development
  // CPU's L3 (idle Zen 5, bench/README.md): 6 MiB chains (DeiT-Tiny at batch 8) ran 9% slower tiled, 16-24 MiB
  // ones 2% slower (3136 tokens) to 11% faster (ConvNeXt-T at batch 8), 64-96 MiB ones (12544 tokens) 8-10%
  // faster. Tiled chains also keep their crossing tensors live longer (more arena), so both token counts of
  // the scaling benchmark tile alike.
  uint64_t min_inside_bytes = 16ull << 20;
  // Rows per block: as many as keep one block of every inside tensor within this many bytes (rounded down to
  // a multiple of 16 rows and of what keeps every slice aligned; at least that multiple).
  uint64_t block_bytes = 768ull << 10;
  // ... and only when the chain's constants (weights) are at most this many bytes: every block re-reads them,
  // and past the cache they would come from DRAM once per block (ViT-B's MLP chain, 28 MB, was 7% slower
  // tiled at batch 8).
  uint64_t max_weight_bytes = 8ull << 20;
};

// A chain of row-wise steps run block of rows by block of rows.
struct RowTile {
  StepRange steps;
  int64_t block_rows = 0;
  // Blocks run at once, one per thread, each with its own slot of the inside tensors (the session sets it:
  // its thread count where every step's kernel is reentrant, else 1 and the kernels thread each block).
  int slots = 1;
};

// `limits` with min_inside_bytes from VITRT_ROW_TILE_KIB (0: no row tile) and block_bytes from
// VITRT_ROW_BLOCK_KIB when those are set and `limits` are the defaults: a caller's explicit limits win. A
// value parse_batch_tile_kib rejects (or a block of 0 KiB) is ignored with a one-time warning on stderr.
RowTileLimits row_tile_limits_from_env(RowTileLimits limits);

// The row tiles of `graph` (shapes at `max_batch`), in step order, none inside `exclude` (the batch tile).
// A tile is a maximal run of consecutive row-wise steps (LayerNorm; Linear with a constant weight and bias,
// its activation and residual epilogues included; Gelu, Relu, Unary; Add and Mul of two same-shaped
// activations or of an activation and a constant broadcast along the last dim only) whose activations all
// have rank >= 2 and the same row count (element count / last dim) at batch 1 and at max_batch; it is kept
// when it has two steps or more, its inside tensors exceed limits.min_inside_bytes, and a block is fewer rows
// than the whole. Block rows are a multiple of 16 and of what keeps every crossing tensor's row slice at a
// multiple of `alignment` bytes (block b's slice starts at b x block rows x row bytes; so do the inside
// tensors' per-thread slots).
std::vector<RowTile> choose_row_tiles(const Graph& graph, const std::vector<Shape>& max_shapes,
                                      int64_t max_batch, const RowTileLimits& limits, uint64_t alignment,
                                      StepRange exclude);

// The shape of row block [r0, r0 + rows) of a tensor of shape `full` (rank >= 2): leading dims 1, then rows,
// then the last dim (a [B, N, C] tensor's rows run across images: a block may hold the end of one image
// and the start of the next).
Shape row_block_shape(const Shape& full, int64_t rows);

}  // namespace vitrt
