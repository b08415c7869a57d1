// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// A test mode that proves at run time what the arena planner promises: no kernel writes outside its own
// output, and no two tensors that are live at the same time share bytes. Every activation block gets a guard
// zone after its data (planned in by the session), filled with a sentinel pattern when its tensor is produced
// and checked after every later step while the tensor is live; and every tensor's bytes are fingerprinted after
// its producer runs and re-checked before each step that reads it, so a write that lands inside another live
// tensor (an overlapping placement, or a stray pointer) is caught where it does harm, naming both steps.
// Everything is sized when the session is planned: checking allocates nothing.
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "ir/graph.h"
#include "memory/liveness.h"

namespace vitrt {

class ArenaGuard {
 public:
  static constexpr uint64_t kGuardBytes = 64;  // extra bytes planned after every block in this mode

  struct Block {
    uint64_t offset = 0;      // within the arena
    uint64_t end = 0;         // offset + the planned block size (data + over-read padding + guard)
    Lifetime life;            // steps during which the block belongs to this tensor
    int32_t root = -1;        // tensor whose block this is (itself, or the tensor it aliases in place)
    std::string name;
  };

  // blocks: one per tensor of `graph` (root < 0: not in the arena); steps are graph.nodes in order.
  void init(const Graph* graph, std::vector<Block> blocks, uint8_t* arena);
  // data_bytes: each tensor's bytes at the bound batch.
  void bind(const std::vector<uint64_t>& data_bytes);
  // Forgets what the previous run produced.
  void begin_run();

  // Before step `step` runs: verifies the fingerprints of the tensors it reads, then arms the guard zones of
  // the tensors it produces.
  Status before_step(int step, const int32_t* src, int num_src, const int32_t* dst, int num_dst);
  // After step `step` ran: records the fingerprints of its outputs, then checks the guard zone of every block
  // live at this step.
  Status after_step(int step, const int32_t* dst, int num_dst);

 private:
  uint64_t fingerprint(int32_t t) const;
  std::string step_name(int step) const;

  const Graph* graph_ = nullptr;
  std::vector<Block> blocks_;
  std::vector<uint64_t> data_bytes_;
  std::vector<uint64_t> prints_;
  std::vector<int> produced_at_;
  uint8_t* arena_ = nullptr;
};

}  // namespace vitrt
