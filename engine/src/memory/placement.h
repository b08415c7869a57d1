// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Where every tensor of a planned graph lives (docs/architecture.md §6): weights stay in the mapped file,
// constants folded at plan time in the session, the input in the caller's buffer, and every other tensor in
// one activation arena. Before the arena is laid out, the in-place and view rules decide which tensors take
// an earlier tensor's bytes instead of a block of their own; the arena planner (memory/arena_planner.h) then
// places the remaining blocks by lifetime. Pure: no allocation of the arena itself, no backend.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/shape.h"
#include "ir/graph.h"
#include "memory/liveness.h"

namespace vitrt {

// kPersistent: constants made at plan time (folded by a planner pass), owned by the session.
enum class ArenaKind : int8_t { kNone = 0, kWeights, kActivations, kInput, kPersistent };

struct TensorPlacement {
  ArenaKind arena = ArenaKind::kNone;
  uint64_t offset = 0;  // within its arena (weights: within the mapped file)
  uint64_t bytes = 0;   // at the maximum batch
  Lifetime life;        // of the tensor's bytes: an aliased block lives until its last sharer's last read
};

// What a node's kernel allows for the memory of its first output (the backend's KernelInfo).
struct NodeMemoryTraits {
  bool may_inplace = false;  // dst[0] may be written over src[0] (elementwise kernels)
  bool is_view = false;  // dst[0] is src[0]'s bytes unchanged (Reshape): it may share them with other readers
};

// Steps [first, last] that the session runs image by image (runtime/batch_tile.h) or block of rows by block
// of rows (runtime/row_tile.h); none when last < first.
struct StepRange {
  int first = 0;
  int last = -1;
};

// Whether an activation with lifetime `life` is produced and last read inside `range`: an interior tensor of
// a batch tile, whose first image's bytes every image reuses. Any other activation that `range` touches is a
// boundary tensor: image b reads or writes its own slice b.
bool lives_inside(const Lifetime& life, StepRange range);

struct PlacementOptions {
  bool allow_inplace = true;            // apply the in-place and view rules
  bool preserve_intermediates = false;  // no sharing at all: every activation keeps its own bytes
  uint64_t alignment = 64;              // of every activation block
  uint64_t padding = 0;                 // bytes planned after every activation block (over-read, guard zone)
  // Constants whose bytes lie in [file, file + file_size) are weights, placed at their position in the file;
  // other constants are persistent (made by a planner pass).
  const uint8_t* file = nullptr;
  size_t file_size = 0;
  // A batch tile: its boundary tensors live through the whole range (image b + 1 runs the range's first
  // steps after image b wrote its slice of them), and no in-place write joins a boundary and an interior
  // tensor (they sit at different slices).
  StepRange batch_tile;
  // A batch trunk (runtime/batch_tile.h): steps whose images `batch_trunk_slots` threads run side by side,
  // thread t on its own images and its own slot of every trunk-interior tensor. Those tensors (produced and
  // last read inside the trunk; the caller passes their shapes at one slot's images) are planned apart, with
  // their own lifetimes, into a slot block that is repeated once per thread and lives through the trunk; the
  // trunk's boundary tensors follow the batch tile's two rules. None unless batch_trunk_slots > 1.
  StepRange batch_trunk;
  int batch_trunk_slots = 1;
  // Row tiles (runtime/row_tile.h), the same two rules for each: block k + 1 runs the chain's first steps
  // after block k wrote its rows of a later crossing tensor, and crossing tensors are seen at the block's row
  // slice, inside ones at slice 0. The caller passes the inside tensors' shapes at one block's rows per
  // thread; they live through the whole tile (each thread's slots of them must not overlap another's).
  std::vector<StepRange> row_tiles;
};

struct MemoryPlan {
  std::vector<TensorPlacement> placements;  // per tensor
  // The tensor whose bytes a tensor takes over (an in-place write or a view), -1 when it has its own.
  std::vector<int32_t> alias_of;
  // The tensor owning the arena block a tensor lives in: itself, or the start of its alias chain.
  std::vector<int32_t> root;
  uint64_t activation_bytes = 0;        // the activation arena's size (the plan's peak)
  uint64_t activation_lower_bound = 0;  // the most bytes live at any one step
  uint64_t persistent_bytes = 0;        // constants made at plan time
  // With a batch trunk: the bytes of one thread's slot (a multiple of the alignment); slot t of a
  // trunk-interior tensor is at its placement's offset + t x this.
  uint64_t trunk_slot_bytes = 0;
  uint64_t weight_bytes = 0;  // constants in the file that the graph reads
};

// Bytes of `t` with shape `shape`; a shape whose element count overflows reads as larger than any limit.
uint64_t tensor_bytes(const Tensor& t, const Shape& shape);

// The placement of every tensor of `graph`. `shapes`: each tensor's shape at the maximum batch; `traits`: one
// per node, in graph order.
MemoryPlan plan_memory(const Graph& graph, const std::vector<Shape>& shapes,
                       const std::vector<NodeMemoryTraits>& traits, const PlacementOptions& options);

}  // namespace vitrt
