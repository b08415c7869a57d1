// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Arena planning: blocks with intersecting lifetimes never share bytes; the peak stays near the lower bound.
#include <doctest/doctest.h>

#include <random>

#include "memory/arena_planner.h"
#include "memory/liveness.h"
#include "test_graphs.h"

using namespace vitrt;

TEST_CASE("arena: no two simultaneously live blocks overlap, on random problems") {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 1 + rng() % 60, steps = 1 + rng() % 40;
    std::vector<ArenaRequest> req(n);
    for (auto& r : req) {
      r.size = rng() % 3 == 0 ? 0 : 1 + rng() % 100000;
      r.life.first = static_cast<int>(rng() % steps) - 1;
      r.life.last = r.life.first + static_cast<int>(rng() % 10);
    }
    const bool no_overlap = trial % 10 == 0;
    const ArenaPlan p = plan_arena(req, 64, 64, no_overlap);
    CHECK(p.peak >= p.lower_bound);
    for (int i = 0; i < n; ++i) {
      if (!req[i].size) continue;
      CHECK(p.offsets[i] % 64 == 0);
      CHECK(p.offsets[i] + req[i].size + 64 <= p.peak);
      for (int j = i + 1; j < n; ++j) {
        if (!req[j].size) continue;
        const bool live_together = no_overlap || (req[i].life.first <= req[j].life.last && req[j].life.first <= req[i].life.last);
        if (!live_together) continue;
        const bool disjoint = p.offsets[i] + req[i].size + 64 <= p.offsets[j] || p.offsets[j] + req[j].size + 64 <= p.offsets[i];
        CHECK_MESSAGE(disjoint, "blocks " << i << " and " << j << " overlap in trial " << trial);
      }
    }
  }
}

TEST_CASE("arena: a chain of equal blocks needs two slots") {
  std::vector<ArenaRequest> req(10);
  for (int i = 0; i < 10; ++i) req[i] = {1000, {i, i + 1}};
  const ArenaPlan p = plan_arena(req, 64, 0, false);
  CHECK(p.peak == 2 * 1024);
  CHECK(p.lower_bound == 2 * 1024);
}

TEST_CASE("liveness: a tensor read by several ops lives until its last reader; outputs live to the end") {
  const Graph g = test::tiny_classifier();
  const auto life = compute_lifetimes(g);
  // "cat" (the tokens with the class token) feeds LayerNorm (step 4) and the residual Add (step 8).
  int32_t cat = -1;
  for (size_t i = 0; i < g.tensors.size(); ++i)
    if (g.tensors[i].name == "cat") cat = static_cast<int32_t>(i);
  REQUIRE(cat >= 0);
  CHECK(life[cat].first == 3);
  CHECK(life[cat].last == 8);
  CHECK(life[g.outputs[0]].last == static_cast<int>(g.nodes.size()));
  CHECK(life[g.inputs[0]].first == -1);
}
