// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Graphs built in a test, written to a model in memory, loaded and run through sessions.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "arch/graph_builder.h"
#include "loader/model_loader.h"
#include "model_writer.h"
#include "runtime/session.h"
#include "unit/test_graphs.h"

namespace vitrt {
namespace test {

// Adds `name` to the checkpoint: `shape` filled with pseudo_random(seed, scale).
inline void add_random(convert::Checkpoint* ck, const std::string& name, std::vector<int64_t> shape,
                       uint32_t seed, float scale = 0.4f) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  convert::CheckpointTensor& t = ck->tensors[name];
  t = convert::CheckpointTensor{};
  t.shape = std::move(shape);
  t.values = pseudo_random(static_cast<size_t>(n), seed, scale);
}

// The builder's graph, with the preprocessing of an h x w image (centre crop of a resize to the shorter
// side).
inline Graph finish_image_graph(convert::GraphBuilder& b, int64_t h, int64_t w) {
  Graph g;
  Status st = b.finish(&g);
  REQUIRE_MESSAGE(st.ok(), st.message());
  g.metadata.preprocess.crop_h = static_cast<int32_t>(h);
  g.metadata.preprocess.crop_w = static_cast<int32_t>(w);
  g.metadata.preprocess.resize_shorter = static_cast<int32_t>(std::min(h, w));
  return g;
}

// `g` as a model file in *storage, 64-byte aligned as loading from memory requires; its first byte, *size
// set.
inline const uint8_t* model_bytes(const Graph& g, std::vector<uint8_t>* storage, size_t* size) {
  std::vector<uint8_t> bytes;
  REQUIRE(write_model_memory(g, &bytes).ok());
  storage->assign(bytes.size() + 64, 0);
  uint8_t* aligned = storage->data() + (64 - reinterpret_cast<uintptr_t>(storage->data()) % 64) % 64;
  std::memcpy(aligned, bytes.data(), bytes.size());
  *size = bytes.size();
  return aligned;
}

inline std::shared_ptr<const Model> load(const Graph& g, std::vector<uint8_t>* storage) {
  size_t size = 0;
  const uint8_t* aligned = model_bytes(g, storage, &size);
  std::shared_ptr<const Model> m;
  Status st = load_model_from_memory(aligned, size, &m);
  REQUIRE_MESSAGE(st.ok(), st.message());
  return m;
}

inline std::unique_ptr<Session> session(std::shared_ptr<const Model> m, const std::string& backend,
                                        int64_t max_batch, const std::string& disabled = "",
                                        bool allow_inplace = true) {
  SessionOptions o;
  o.backend = backend;
  o.max_batch = max_batch;
  o.num_threads = 2;
  o.poison_activations = true;
  o.disabled_passes = disabled;
  o.allow_inplace = allow_inplace;
  std::unique_ptr<Session> s;
  Status st = Session::create(std::move(m), o, &s);
  REQUIRE_MESSAGE(st.ok(), st.message());
  return s;
}

// Runs `a` and `b` on the same random input (scale 1.5) at every batch 1..max_batch: each of a's outputs must
// be finite and within rel_tol × max|b| of b's. For a pass's graph against the same model with the pass
// disabled.
inline void check_same_outputs(Session& a, Session& b, int64_t max_batch, uint32_t seed, double rel_tol) {
  const std::vector<float> x =
      pseudo_random(static_cast<size_t>(a.input_shape(max_batch).numel()), seed, 1.5f);
  for (int64_t batch = 1; batch <= max_batch; ++batch) {
    CAPTURE(batch);
    const size_t n = static_cast<size_t>(a.output_shape(batch).numel());
    std::vector<float> ya(n, NAN), yb(n, NAN);
    REQUIRE(a.run(x.data(), batch, ya.data(), n).ok());
    REQUIRE(b.run(x.data(), batch, yb.data(), n).ok());
    double worst = 0, scale = 0;
    for (size_t i = 0; i < n; ++i) {
      REQUIRE(std::isfinite(ya[i]));
      worst = std::max(worst, std::abs(double(ya[i]) - yb[i]));
      scale = std::max(scale, std::abs(double(yb[i])));
    }
    CHECK(worst <= rel_tol * scale);
  }
}

inline int count(const Graph& g, OpType t) {
  int c = 0;
  for (const Node& n : g.nodes) c += n.type == t;
  return c;
}

}  // namespace test
}  // namespace vitrt
