// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Graphs built in a test, written to a model in memory, loaded and run through sessions.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "loader/model_loader.h"
#include "model_writer.h"
#include "runtime/session.h"

namespace vitrt {
namespace test {

inline std::vector<float> random_values(size_t n, uint32_t seed, float scale) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 1;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = scale * (static_cast<float>(s >> 8) / 16777216.0f * 2.0f - 1.0f);
  }
  return v;
}

inline std::shared_ptr<const Model> load(const Graph& g, std::vector<uint8_t>* storage) {
  std::vector<uint8_t> bytes;
  REQUIRE(write_model_memory(g, &bytes).ok());
  storage->assign(bytes.size() + 64, 0);
  uint8_t* aligned = storage->data() + (64 - reinterpret_cast<uintptr_t>(storage->data()) % 64) % 64;
  std::memcpy(aligned, bytes.data(), bytes.size());
  std::shared_ptr<const Model> m;
  Status st = load_model_from_memory(aligned, bytes.size(), &m);
  REQUIRE_MESSAGE(st.ok(), st.message());
  return m;
}

inline std::unique_ptr<Session> session(std::shared_ptr<const Model> m, const std::string& backend,
                                        int64_t max_batch, const std::string& disabled = "") {
  SessionOptions o;
  o.backend = backend;
  o.max_batch = max_batch;
  o.num_threads = 2;
  o.poison_activations = true;
  o.disabled_passes = disabled;
  std::unique_ptr<Session> s;
  Status st = Session::create(std::move(m), o, &s);
  REQUIRE_MESSAGE(st.ok(), st.message());
  return s;
}

inline int count(const Graph& g, OpType t) {
  int c = 0;
  for (const Node& n : g.nodes) c += n.type == t;
  return c;
}

}  // namespace test
}  // namespace vitrt
