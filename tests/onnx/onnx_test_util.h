// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Shared by the ONNX tests: the fixture folder, graphs written to a model in memory and loaded back through
// the loader (as vitrt-convert's verify step does), and sessions on them.
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "loader/model_loader.h"
#include "model_writer.h"
#include "runtime/session.h"

namespace vitrt::test {

inline std::string env_or(const char* name, const char* def) {
  const char* v = std::getenv(name);
  return v ? v : def;
}

inline std::string onnx_fixture_dir() {
  return env_or("VITRT_FIXTURE_DIR", "fixtures") + "/onnx_cases";
}

// The graph as the loader sees it after writing (the storage keeps the bytes alive and 64-byte aligned).
inline std::shared_ptr<const Model> load_graph(const Graph& g, std::vector<uint8_t>* storage) {
  std::vector<uint8_t> bytes;
  Status st = write_model_memory(g, &bytes);
  REQUIRE_MESSAGE(st.ok(), st.message());
  storage->assign(bytes.size() + 64, 0);
  uint8_t* aligned = storage->data() + (64 - reinterpret_cast<uintptr_t>(storage->data()) % 64) % 64;
  std::memcpy(aligned, bytes.data(), bytes.size());
  std::shared_ptr<const Model> m;
  st = load_model_from_memory(aligned, bytes.size(), &m);
  REQUIRE_MESSAGE(st.ok(), st.message());
  return m;
}

// A 2-thread session with poisoned activations; `disabled` names planner passes to skip (the unfused plan).
inline std::unique_ptr<Session> make_session(std::shared_ptr<const Model> m, const std::string& backend,
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

// The output of `batch` images of x, NaN-filled before the run so unwritten elements show.
inline std::vector<float> run_batch(Session& s, const std::vector<float>& x, int64_t batch) {
  std::vector<float> y(static_cast<size_t>(s.output_shape(batch).numel()), NAN);
  Status st = s.run(x.data(), batch, y.data(), y.size());
  REQUIRE_MESSAGE(st.ok(), st.message());
  return y;
}

// The op types of the planned graph with their counts, e.g. {"Linear": 9, "SoftmaxAttention": 2}.
inline std::map<std::string, int> planned_ops(const Session& s) {
  std::map<std::string, int> ops;
  for (const Node& n : s.graph().nodes) ++ops[op_type_name(n.type)];
  return ops;
}

inline std::string ops_str(const std::map<std::string, int>& ops) {
  std::string s;
  for (const auto& [op, count] : ops) s += op + "x" + std::to_string(count) + " ";
  return s;
}

}  // namespace vitrt::test
