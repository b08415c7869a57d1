// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Batch tiling of a network's high-resolution start (docs/architecture.md §6.1). At batch 8 MobileNetV3's
// first stages write 25 MB tensors (64×112² floats per image) that the next step reads back from DRAM; image
// by image the same steps touch 3 MB that stays in the L3 cache, and every image reuses the bytes of the
// first image's interior tensors. The session runs the chosen steps once per image (each kernel at batch 1
// on the image's slice of its boundary tensors) and the rest of the graph at the full batch.
//
// With more than one thread and reentrant kernels, the session also takes the same run without the size limits
// as its batch trunk (Session::choose_batch_trunk, docs/architecture.md §6.1): each thread runs its own images
// through it, the tile's steps image by image, in its own slot of the interior tensors.
#include <atomic>
#include <cstdint>
#include <vector>

#include "common/shape.h"
#include "ir/graph.h"
#include "memory/placement.h"

namespace vitrt {

struct BatchTileLimits {
  // A step joins the tile while some activation it reads or writes holds at least this many bytes per image
  // (below that, the whole batch of it fits in the cache anyway and the full batch amortises the weights).
  uint64_t min_image_bytes = 256 * 1024;
  // ... and its constants (weights) are at most this many bytes: each image re-reads them, from L2 while they
  // fit there. 1 MiB (was 64 KiB until 2026-11-28) takes ResNet-50's tile at batch 8 through layer2 (its
  // layer1 tensors stay in L3 image by image): 40% less arena, 2.5% faster at 2 threads (bench/README.md).
  uint64_t max_weight_bytes = 1024 * 1024;
};

// The largest VITRT_BATCH_TILE_KIB taken (16 GiB per image; more is a typo, not a cache size).
constexpr uint64_t kMaxBatchTileKib = uint64_t{1} << 24;

// VITRT_BATCH_TILE_KIB's value as KiB: plain decimal digits up to kMaxBatchTileKib, else false (a sign, a
// space, a suffix, hex or an exponent included).
bool parse_batch_tile_kib(const char* text, uint64_t* kib);

// Environment variable `name` as KiB into *kib (the batch and row tiles' variables): false when unset, or,
// with a one-time warning on stderr per `warned` flag naming the variable and its value, when
// parse_batch_tile_kib rejects it or it is under min_kib.
bool kib_from_env(const char* name, uint64_t min_kib, std::atomic<bool>* warned, uint64_t* kib);

// `limits` with min_image_bytes from VITRT_BATCH_TILE_KIB (0: no tile, min_image_bytes = UINT64_MAX) and
// max_weight_bytes from VITRT_BATCH_TILE_WEIGHT_KIB, each when its variable is set and `limits` are the
// defaults: a caller's explicit limits win. A value parse_batch_tile_kib rejects is ignored with a one-time
// warning on stderr.
BatchTileLimits batch_tile_limits_from_env(BatchTileLimits limits);

// The steps of `graph` (shapes at `max_batch`) to run image by image: the longest run from the first step of
// per-image ops (Conv2d, BatchNorm2d, Pool2d, SqueezeExcite, elementwise) whose activations all have the
// batch as dim 0, within `limits`, that writes no graph output, cut back until every boundary tensor's bytes
// per image are a multiple of `alignment` (the backend's: image b's slice starts at b × those bytes). Empty
// (last < first) when that run has fewer than two steps or max_batch is 1.
StepRange choose_batch_tile(const Graph& graph, const std::vector<Shape>& max_shapes, int64_t max_batch,
                            const BatchTileLimits& limits, uint64_t alignment);

}  // namespace vitrt
