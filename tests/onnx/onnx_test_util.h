// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Shared by the ONNX tests: the fixture folder, graphs written to a model in memory and loaded back through
// the loader (as vitrt-convert's verify step does), and sessions on them.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/npy.h"
#include "loader/model_loader.h"
#include "model_writer.h"
#include "onnx/importer.h"
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

// The exported-attention fixtures (tools/reference/make_onnx_<mechanism>_cases.py): a folder of NAME.onnx,
// NAME.input.npy and PyTorch's float64 outputs, with a manifest {"cases": {NAME: {...}}}.
inline std::string export_fixture_dir(const std::string& set) {
  return env_or("VITRT_FIXTURE_DIR", "fixtures") + "/" + set;
}

// The manifest of `dir`, which must list `count` cases.
inline nlohmann::json read_export_manifest(const std::string& dir, size_t count) {
  std::ifstream f(dir + "/manifest.json");
  REQUIRE_MESSAGE(f.good(), "missing " << dir << "/manifest.json (its ctest fixture did not run)");
  const nlohmann::json manifest = nlohmann::json::parse(f);
  REQUIRE(manifest["cases"].size() == count);
  return manifest;
}

// One exported model: converted by the ONNX importer, written and loaded back, with its input images and the
// float64 outputs PyTorch gave.
struct ExportedCase {
  std::vector<uint8_t> storage;  // the loaded model's bytes
  std::shared_ptr<const Model> model;
  std::vector<float> x;
  std::vector<int64_t> x_shape;
  std::vector<double> y64;
  std::vector<int64_t> y_shape;
  int64_t batch() const { return x_shape[0]; }
  int64_t classes() const { return y_shape[1]; }
};

// Case `name` of `dir`: NAME.onnx, NAME.input.npy and NAME.`outputs` (e.g. "logits64.npy").
inline void load_exported_case(const std::string& dir, const std::string& name, const std::string& outputs,
                               ExportedCase* out) {
  Graph g;
  std::string log;
  Status st = convert::convert_onnx_file(dir + "/" + name + ".onnx", convert::ConvertOptions{}, &g, &log);
  REQUIRE_MESSAGE(st.ok(), st.message());
  out->model = load_graph(g, &out->storage);
  REQUIRE(read_npy_f32(dir + "/" + name + ".input.npy", &out->x, &out->x_shape).ok());
  REQUIRE(read_npy_f64(dir + "/" + name + "." + outputs, &out->y64, &out->y_shape).ok());
  REQUIRE(out->x_shape.size() >= 1);
  REQUIRE(out->y_shape.size() == 2);
}

// A near miss of a fusion: `g` (an export with one block edited so that `pass` must leave it alone) still
// plans exactly one `op` (the other block) on ref, and its plan computes what the plan without `pass` does
// at batch 2: within 1e-5 of the largest logit, NaN in the same places (a divisor of 0 makes them NaN).
inline void check_near_miss(const Graph& g, const std::vector<float>& x, const std::string& op,
                            const char* pass) {
  std::vector<uint8_t> bytes;
  auto model = load_graph(g, &bytes);
  auto fused = make_session(model, "ref", 2);
  auto unfused = make_session(model, "ref", 2, pass);
  const auto ops = planned_ops(*fused);
  CHECK_MESSAGE((ops.count(op) && ops.at(op) == 1), ops_str(ops));
  const std::vector<float> y = run_batch(*fused, x, 2), yu = run_batch(*unfused, x, 2);
  REQUIRE(y.size() == yu.size());
  double largest = 0, err = 0;
  bool same_nans = true;
  for (size_t i = 0; i < y.size(); ++i) {
    same_nans = same_nans && std::isnan(y[i]) == std::isnan(yu[i]);
    if (std::isnan(yu[i])) continue;
    largest = std::fmax(largest, std::fabs(yu[i]));
    err = std::fmax(err, std::fabs(y[i] - yu[i]));
  }
  CHECK(same_nans);
  CHECK(err <= 1e-5 * largest);
}

// Checks y (n images) against PyTorch's float64 logits: within 1e-4 of the largest magnitude, same argmax.
inline void check_logits(const std::vector<float>& y, const std::vector<double>& y64, int64_t n,
                         int64_t classes) {
  REQUIRE(y.size() == static_cast<size_t>(n * classes));
  for (int64_t b = 0; b < n; ++b) {
    const auto row = y.begin() + b * classes;
    const auto row64 = y64.begin() + b * classes;
    double largest = 0, err = 0;
    for (int64_t k = 0; k < classes; ++k) {
      largest = std::max(largest, std::fabs(row64[k]));
      err = std::max(err, std::fabs(row[k] - row64[k]));
    }
    CAPTURE(b);
    CHECK_MESSAGE(err <= 1e-4 * largest,
                  "max |vitrt - torch64| " << err << " (largest logit " << largest << ")");
    CHECK(std::max_element(row, row + classes) - row == std::max_element(row64, row64 + classes) - row64);
  }
}

// The plans with and without the fusion: `op` planned `want` times in `fused` and never in `unfused`.
// Returns the fused plan's op counts for further checks.
inline std::map<std::string, int> check_fused_plan(const Session& fused, const Session& unfused,
                                                   const std::string& op, int want) {
  const auto ops = planned_ops(fused);
  const int planned = ops.count(op) ? ops.at(op) : 0;
  CHECK_MESSAGE(planned == want, ops_str(ops));
  CHECK_MESSAGE(planned_ops(unfused).count(op) == 0, ops_str(planned_ops(unfused)));
  return ops;
}

}  // namespace vitrt::test
