// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "memory/placement.h"

#include <algorithm>
#include <cstdint>

#include "memory/arena_planner.h"

namespace vitrt {
namespace {

bool is_graph_io(const Graph& g, int32_t t) {
  return std::find(g.inputs.begin(), g.inputs.end(), t) != g.inputs.end() ||
         std::find(g.outputs.begin(), g.outputs.end(), t) != g.outputs.end();
}

// The in-place and view rules. An elementwise kernel may write over its first input when that input is an
// activation read by nobody else, of the same size, and neither tensor is a graph input or output (ggml
// gallocr's rule). A view (Reshape) writes nothing, so it shares its input's bytes even when others read the
// input too; a later in-place write into such a shared block is then allowed only at the block's last read
// (the life of the root). Fills alias_of and root, and extends each root's lifetime over its sharers.
void share_storage(const Graph& g, const std::vector<Shape>& shapes,
                   const std::vector<NodeMemoryTraits>& traits, const std::vector<StepRange>& tiles,
                   std::vector<Lifetime>* life, MemoryPlan* plan) {
  const std::vector<Lifetime> own_life = *life;
  std::vector<int> readers(g.tensors.size(), 0);
  for (const Node& n : g.nodes)
    for (int32_t i : n.inputs)
      if (i != kAbsent) readers[i]++;
  std::vector<int32_t>& root = plan->root;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    if (!traits[n].may_inplace) continue;
    const int32_t src = g.nodes[n].inputs[0], dst = g.nodes[n].outputs[0];
    if (src == kAbsent || g.tensors[src].is_constant || is_graph_io(g, src) || is_graph_io(g, dst)) continue;
    if (!traits[n].is_view && (readers[src] != 1 || (*life)[root[src]].last != static_cast<int>(n))) continue;
    if (tensor_bytes(g.tensors[src], shapes[src]) != tensor_bytes(g.tensors[dst], shapes[dst])) continue;
    const int step = static_cast<int>(n);
    if (std::any_of(tiles.begin(), tiles.end(), [&](const StepRange& tile) {
          return step >= tile.first && step <= tile.last &&
                 lives_inside(own_life[src], tile) != lives_inside(own_life[dst], tile);
        }))
      continue;
    root[dst] = root[src];
    plan->alias_of[dst] = src;
    Lifetime& r = (*life)[root[dst]];
    r.last = std::max(r.last, (*life)[dst].last);
  }
}

// Which arena tensor `i` lives in, its bytes and (outside the activation arena) its offset. Activations are
// left for the arena planner.
TensorPlacement place_outside_arena(const Graph& g, const std::vector<Shape>& shapes,
                                    const std::vector<Lifetime>& life, const PlacementOptions& options,
                                    size_t i) {
  const Tensor& t = g.tensors[i];
  TensorPlacement p;
  p.life = life[i];
  if (t.is_constant) {
    // In the mapped file, or made by a planner pass (folded constants, owned by the session's graph).
    const bool in_file =
        options.file && t.constant.data >= options.file && t.constant.data < options.file + options.file_size;
    p.arena = in_file ? ArenaKind::kWeights : ArenaKind::kPersistent;
    p.offset = in_file ? static_cast<uint64_t>(t.constant.data - options.file) : 0;
    p.bytes = t.constant.size;
    return p;
  }
  p.bytes = tensor_bytes(t, shapes[i]);
  if (life[i].first < 0 && life[i].last >= 0)
    p.arena = ArenaKind::kInput;  // bound to the caller's buffer at each run
  else if (life[i].last >= 0)
    p.arena = ArenaKind::kActivations;
  // else: never produced nor read, no memory
  return p;
}

}  // namespace

bool lives_inside(const Lifetime& life, StepRange range) {
  return life.first >= range.first && life.first <= range.last && life.last <= range.last;
}

uint64_t tensor_bytes(const Tensor& t, const Shape& shape) {
  // Shapes reaching a session passed shape inference, which bounds them by kMaxTensorElements, so the product
  // fits; an invalid shape reads as "larger than any limit" rather than as 0 bytes.
  int64_t n = 0;
  if (!checked_numel(shape, &n)) return UINT64_MAX / 2;
  return static_cast<uint64_t>(n) * dtype_size(t.dtype);
}

MemoryPlan plan_memory(const Graph& g, const std::vector<Shape>& shapes,
                       const std::vector<NodeMemoryTraits>& traits, const PlacementOptions& options) {
  const size_t nt = g.tensors.size();
  MemoryPlan plan;
  plan.alias_of.assign(nt, -1);
  plan.root.resize(nt);
  for (size_t i = 0; i < nt; ++i) plan.root[i] = static_cast<int32_t>(i);
  std::vector<Lifetime> life = compute_lifetimes(g);
  std::vector<StepRange> tiles;
  for (const StepRange& tile : options.row_tiles)
    if (tile.last >= tile.first) tiles.push_back(tile);
  // A row tile's inside tensors live through all of it: each thread has its own slot of every inside tensor
  // (slot t at t x one block's bytes), and a block reused by inside tensors of other row sizes would put one
  // thread's slot of the one over another thread's slot of the other.
  for (const StepRange& tile : tiles)
    for (size_t i = 0; i < nt; ++i)
      if (!g.tensors[i].is_constant && life[i].last >= 0 && lives_inside(life[i], tile))
        life[i] = {tile.first, tile.last};
  if (options.batch_tile.last >= options.batch_tile.first) tiles.push_back(options.batch_tile);
  const StepRange trunk = options.batch_trunk;
  const bool slotted = options.batch_trunk_slots > 1 && trunk.last >= trunk.first;
  if (slotted) tiles.push_back(trunk);
  const std::vector<Lifetime> own_life = life;  // before the tiles stretch boundary lifetimes
  for (const StepRange& tile : tiles) {
    // The tile's boundary activations (not constants, not the caller's input) live through all of it.
    for (size_t i = 0; i < nt; ++i) {
      Lifetime& l = life[i];
      if (g.tensors[i].is_constant || l.first < 0 || l.last < tile.first || l.first > tile.last ||
          lives_inside(l, tile))
        continue;
      l.first = std::min(l.first, tile.first);
      l.last = std::max(l.last, tile.last);
    }
  }
  if (options.allow_inplace && !options.preserve_intermediates)
    share_storage(g, shapes, traits, tiles, &life, &plan);

  plan.placements.resize(nt);
  // One block per activation that is its own root; with a batch trunk, its interior roots in their own plan
  // (slot_requests) and one more block, at index nt, for all the slots.
  std::vector<ArenaRequest> requests(nt + 1), slot_requests(slotted ? nt : 0);
  auto in_slot = [&](size_t i) { return slotted && lives_inside(own_life[i], trunk); };
  for (size_t i = 0; i < nt; ++i) {
    TensorPlacement& p = plan.placements[i];
    p = place_outside_arena(g, shapes, life, options, i);
    if (p.arena == ArenaKind::kPersistent) plan.persistent_bytes += p.bytes;
    if (p.arena != ArenaKind::kActivations) continue;
    const int32_t root = plan.root[i];
    if (root != static_cast<int32_t>(i)) {
      p.life.last = life[root].last;  // shares its root's block
      continue;
    }
    (in_slot(i) ? slot_requests[i] : requests[i]) = ArenaRequest{p.bytes, life[i]};
  }
  ArenaPlan slots;
  if (slotted) {
    slots = plan_arena(slot_requests, options.alignment, options.padding, options.preserve_intermediates);
    const uint64_t a = std::max<uint64_t>(options.alignment, 1);
    plan.trunk_slot_bytes = (slots.peak + a - 1) / a * a;
    requests[nt].size = plan.trunk_slot_bytes * static_cast<uint64_t>(options.batch_trunk_slots);
    requests[nt].life = {trunk.first, trunk.last};
  }
  const ArenaPlan arena =
      plan_arena(requests, options.alignment, options.padding, options.preserve_intermediates);
  for (size_t i = 0; i < nt; ++i) {
    if (plan.placements[i].arena != ArenaKind::kActivations) continue;
    const int32_t root = plan.root[i];
    plan.placements[i].offset = in_slot(static_cast<size_t>(root))
                                    ? arena.offsets[nt] + slots.offsets[static_cast<size_t>(root)]
                                    : arena.offsets[static_cast<size_t>(root)];
  }
  plan.activation_bytes = arena.peak;
  plan.activation_lower_bound = arena.lower_bound;

  // Weights the planned graph reads (after fusion, constants only the plain-op form used are not counted).
  std::vector<bool> read(nt, false);
  for (const Node& n : g.nodes)
    for (int32_t t : n.inputs)
      if (t != kAbsent) read[t] = true;
  for (size_t i = 0; i < nt; ++i)
    if (read[i] && plan.placements[i].arena == ArenaKind::kWeights)
      plan.weight_bytes += g.tensors[i].constant.size;
  return plan;
}

}  // namespace vitrt
