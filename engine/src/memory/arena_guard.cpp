// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "memory/arena_guard.h"

#include "ops/op_registry.h"

namespace vitrt {
namespace {

// The sentinel byte at position i of a guard zone: position-dependent, so a shifted copy also shows.
inline uint8_t sentinel(uint64_t i) { return static_cast<uint8_t>(0xA5u ^ (i * 29u)); }

}  // namespace

void ArenaGuard::init(const Graph* graph, std::vector<Block> blocks, uint8_t* arena) {
  graph_ = graph;
  blocks_ = std::move(blocks);
  arena_ = arena;
  prints_.assign(blocks_.size(), 0);
  produced_at_.assign(blocks_.size(), -1);
  data_bytes_.assign(blocks_.size(), 0);
}

void ArenaGuard::bind(const std::vector<uint64_t>& data_bytes) {
  for (size_t i = 0; i < blocks_.size() && i < data_bytes.size(); ++i) data_bytes_[i] = data_bytes[i];
}

std::string ArenaGuard::step_name(int step) const {
  return describe_node(graph_->nodes[step], step);
}

void ArenaGuard::begin_run() {
  for (int& p : produced_at_) p = -1;
}

uint64_t ArenaGuard::fingerprint(int32_t t) const {
  const Block& b = blocks_[t];
  const uint8_t* p = arena_ + b.offset;
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (uint64_t i = 0; i < data_bytes_[t]; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

Status ArenaGuard::before_step(int step, const int32_t* src, int num_src, const int32_t* dst, int num_dst) {
  for (int i = 0; i < num_src; ++i) {
    const int32_t t = src[i];
    if (t < 0 || static_cast<size_t>(t) >= blocks_.size() || blocks_[t].root < 0 || produced_at_[t] < 0) continue;
    if (fingerprint(t) != prints_[t])
      return runtime_error("arena guard: tensor '" + blocks_[t].name + "', produced by " +
                           step_name(produced_at_[t]) + ", changed before " + step_name(step) +
                           " read it: another tensor's write landed in its bytes (overlapping placement or a "
                           "stray write)");
  }
  for (int o = 0; o < num_dst; ++o) {
    const int32_t t = dst[o];
    if (t < 0 || static_cast<size_t>(t) >= blocks_.size() || blocks_[t].root < 0) continue;
    const Block& b = blocks_[t];
    uint8_t* g = arena_ + b.offset + data_bytes_[t];
    for (uint64_t i = 0; b.offset + data_bytes_[t] + i < b.end; ++i) g[i] = sentinel(i);
  }
  return Status::Ok();
}

Status ArenaGuard::after_step(int step, const int32_t* dst, int num_dst) {
  for (int o = 0; o < num_dst; ++o) {
    const int32_t t = dst[o];
    if (t < 0 || static_cast<size_t>(t) >= blocks_.size() || blocks_[t].root < 0) continue;
    prints_[t] = fingerprint(t);
    produced_at_[t] = step;
  }
  for (size_t t = 0; t < blocks_.size(); ++t) {
    const Block& b = blocks_[t];
    // Each block once (through its root), while it is live and its guard is armed.
    if (b.root != static_cast<int32_t>(t) || produced_at_[t] < 0 || b.life.first > step || b.life.last < step)
      continue;
    // An in-place alias of this block may have been produced later with its own (equal) size: the guard
    // zone starts after the data either way.
    const uint8_t* g = arena_ + b.offset + data_bytes_[t];
    for (uint64_t i = 0; b.offset + data_bytes_[t] + i < b.end; ++i) {
      if (g[i] != sentinel(i))
        return runtime_error("arena guard: " + step_name(step) + " wrote past the end of tensor '" + b.name + "' (" +
                             std::to_string(data_bytes_[t]) + " bytes at arena offset " + std::to_string(b.offset) +
                             "): byte " + std::to_string(i) + " after its end was overwritten");
    }
  }
  return Status::Ok();
}

}  // namespace vitrt
