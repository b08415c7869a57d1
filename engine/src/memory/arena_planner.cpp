// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "memory/arena_planner.h"

#include <algorithm>
#include <map>

namespace vitrt {
namespace {

uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
bool overlaps(const Lifetime& a, const Lifetime& b) { return a.first <= b.last && b.first <= a.last; }

}  // namespace

ArenaPlan plan_arena(const std::vector<ArenaRequest>& req, uint64_t alignment, uint64_t padding, bool no_overlap) {
  ArenaPlan plan;
  plan.offsets.assign(req.size(), 0);
  // Lower bound: bytes live at each step (sizes as placed, i.e. aligned and padded).
  std::map<int, int64_t> delta;
  for (const auto& r : req) {
    if (r.size == 0) continue;
    const uint64_t sz = align_up(r.size + padding, alignment);
    delta[r.life.first] += static_cast<int64_t>(sz);
    delta[r.life.last + 1] -= static_cast<int64_t>(sz);
  }
  int64_t live = 0;
  for (const auto& d : delta) {
    live += d.second;
    plan.lower_bound = std::max<uint64_t>(plan.lower_bound, static_cast<uint64_t>(live));
  }

  std::vector<size_t> order;
  for (size_t i = 0; i < req.size(); ++i)
    if (req[i].size) order.push_back(i);
  if (no_overlap) {
    uint64_t cursor = 0;
    for (size_t i : order) {
      plan.offsets[i] = cursor;
      cursor += align_up(req[i].size + padding, alignment);
    }
    plan.peak = cursor;
    return plan;
  }
  // Largest first; ties by earlier first use, for determinism.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (req[a].size != req[b].size) return req[a].size > req[b].size;
    return req[a].life.first < req[b].life.first;
  });
  std::vector<size_t> placed;
  for (size_t i : order) {
    const uint64_t need = align_up(req[i].size + padding, alignment);
    // Intervals taken by already placed blocks that are live at the same time, sorted by offset.
    std::vector<std::pair<uint64_t, uint64_t>> busy;
    for (size_t j : placed)
      if (overlaps(req[i].life, req[j].life))
        busy.emplace_back(plan.offsets[j], plan.offsets[j] + align_up(req[j].size + padding, alignment));
    std::sort(busy.begin(), busy.end());
    // Best fit: the smallest gap that holds the block; else after the last busy block.
    uint64_t best = UINT64_MAX, best_gap = UINT64_MAX, cursor = 0;
    for (const auto& b : busy) {
      if (b.first > cursor) {
        const uint64_t gap = b.first - cursor;
        if (gap >= need && gap < best_gap) {
          best = cursor;
          best_gap = gap;
        }
      }
      cursor = std::max(cursor, b.second);
    }
    if (best == UINT64_MAX) best = cursor;
    plan.offsets[i] = best;
    plan.peak = std::max(plan.peak, best + need);
    placed.push_back(i);
  }
  return plan;
}

}  // namespace vitrt
