// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Offsets inside one arena for blocks with known sizes and lifetimes: greedy by size, each block placed at the
// lowest aligned offset that does not overlap a block whose lifetime intersects its own (TFLite's
// ArenaPlanner / ggml gallocr best fit). The plan is computed once; the arena is allocated once.
#include <cstdint>
#include <vector>

#include "memory/liveness.h"

namespace vitrt {

struct ArenaRequest {
  uint64_t size = 0;  // bytes (0: not placed)
  Lifetime life;
};

struct ArenaPlan {
  std::vector<uint64_t> offsets;  // per request
  uint64_t peak = 0;              // arena bytes needed
  uint64_t lower_bound = 0;       // max over steps of the bytes live at that step
};

// `no_overlap` gives every block its own bytes (debug mode: every intermediate survives the run).
ArenaPlan plan_arena(const std::vector<ArenaRequest>& requests, uint64_t alignment, uint64_t padding,
                     bool no_overlap);

}  // namespace vitrt
