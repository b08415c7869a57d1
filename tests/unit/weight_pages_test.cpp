// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// A session gives back the pages of the file-mapped weights its kernels packed (Session::
// give_back_copied_constants, docs/architecture.md §6.3): they leave the process's resident memory, come back
// from the file when something reads them again, and memory the caller lent (a model loaded from memory) is
// never touched.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "loader/model_loader.h"
#include "model_writer.h"
#include "runtime/session.h"
#include "test_graphs.h"

using namespace vitrt;

namespace {

constexpr int64_t kIn = 192, kHidden = 4096, kOut = 5;  // fc1's weight: 3 MiB

// image [B,3,8,8] -> flatten [B,192] -> fc1 (4096, ReLU) -> fc2 [B,5].
Graph mlp_classifier() {
  Graph g;
  const int32_t x = g.add_activation("image", Shape{kDynamicDim, 3, 8, 8});
  g.inputs = {x};
  const int32_t flat = g.add_activation("flat", Shape());
  g.add_node(OpType::kReshape, ReshapeAttrs{{0, -1}}, {x}, {flat}, "flatten");
  const int32_t h = g.add_activation("hidden", Shape());
  LinearAttrs relu;
  relu.activation = Activation::kRelu;
  g.add_node(OpType::kLinear, relu,
             {flat, g.add_constant("fc1.w", Shape{kHidden, kIn}, test::pseudo_random(kHidden * kIn, 7, 0.1f)),
              g.add_constant("fc1.b", Shape{kHidden}, test::pseudo_random(kHidden, 8))},
             {h}, "fc1");
  const int32_t y = g.add_activation("logits", Shape());
  g.add_node(OpType::kLinear, LinearAttrs{},
             {h, g.add_constant("fc2.w", Shape{kOut, kHidden}, test::pseudo_random(kOut * kHidden, 9, 0.05f)),
              kAbsent},
             {y}, "fc2");
  g.outputs = {y};
  g.metadata.arch = "mlp";
  g.metadata.preprocess.resize_shorter = 8;
  g.metadata.preprocess.crop_h = g.metadata.preprocess.crop_w = 8;
  REQUIRE(resolve_activation_shapes(&g).ok());
  return g;
}

constexpr int64_t kConvIn = 512, kConvOut = 60, kSide = 8;  // the conv's weight: 1.05 MiB, read in place

// image [B,3,8,8] -> stem 3×3 (512, ReLU) -> conv 3×3 (60, ReLU) -> flatten [B,3840] -> fc [B,5]. The
// conv's weight is past the size the x86 NCHW conv packs (1 MiB), so its kernel reads it at every run (with
// under 64 output channels it is not the pixel-row form's implicit product, which packs its weight).
Graph conv_classifier() {
  Graph g;
  const int32_t x = g.add_activation("image", Shape{kDynamicDim, 3, kSide, kSide});
  g.inputs = {x};
  Conv2dAttrs conv;
  conv.pad_h = conv.pad_w = 1;
  conv.activation = Activation::kRelu;
  const int32_t stem = g.add_activation("stem", Shape());
  g.add_node(
      OpType::kConv2d, conv,
      {x, g.add_constant("stem.w", Shape{kConvIn, 3, 3, 3}, test::pseudo_random(kConvIn * 27, 10, 0.3f)),
       kAbsent},
      {stem}, "stem");
  const int32_t c = g.add_activation("conv", Shape());
  g.add_node(OpType::kConv2d, conv,
             {stem,
              g.add_constant("conv.w", Shape{kConvOut, kConvIn, 3, 3},
                             test::pseudo_random(kConvOut * kConvIn * 9, 11, 0.05f)),
              g.add_constant("conv.b", Shape{kConvOut}, test::pseudo_random(kConvOut, 12))},
             {c}, "conv");
  const int32_t flat = g.add_activation("flat", Shape());
  g.add_node(OpType::kReshape, ReshapeAttrs{{0, -1}}, {c}, {flat}, "flatten");
  const int64_t features = kConvOut * kSide * kSide;
  const int32_t y = g.add_activation("logits", Shape());
  g.add_node(
      OpType::kLinear, LinearAttrs{},
      {flat, g.add_constant("fc.w", Shape{kOut, features}, test::pseudo_random(kOut * features, 13, 0.01f)),
       kAbsent},
      {y}, "fc");
  g.outputs = {y};
  g.metadata.arch = "conv";
  g.metadata.preprocess.resize_shorter = kSide;
  g.metadata.preprocess.crop_h = g.metadata.preprocess.crop_w = kSide;
  REQUIRE(resolve_activation_shapes(&g).ok());
  return g;
}

// Resident kB of the mapping of this process that holds `p` (/proc/self/smaps), or -1.
long resident_kib(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 && line.find(':') > line.find('-')) {
      inside = a >= lo && a < hi;
      continue;
    }
    if (inside && line.rfind("Rss:", 0) == 0) return std::strtol(line.c_str() + 4, nullptr, 10);
  }
  return -1;
}

const Tensor& tensor_named(const Graph& g, const char* name) {
  for (const Tensor& t : g.tensors)
    if (t.name == name) return t;
  FAIL("no tensor " << name);
  return g.tensors[0];
}

// Writes `g` to a new file named from `path` (a mkstemp template, rewritten in place) and loads it.
std::shared_ptr<const Model> write_and_load(const Graph& g, char* path) {
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  REQUIRE(write_model_file(g, path).ok());
  std::shared_ptr<const Model> model;
  const Status st = load_model(path, &model);
  REQUIRE_MESSAGE(st.ok(), st.message());
  return model;
}

std::vector<float> run_once(const std::shared_ptr<const Model>& model, const char* backend,
                            int64_t image_floats = 3 * 8 * 8) {
  SessionOptions o;
  o.backend = backend;
  o.max_batch = 2;
  std::unique_ptr<Session> s;
  Status st = Session::create(model, o, &s);
  REQUIRE_MESSAGE(st.ok(), st.message());
  const std::vector<float> x = test::pseudo_random(2 * image_floats, 3, 1.0f);
  std::vector<float> y(2 * kOut, NAN);
  st = s->run(x.data(), 2, y.data(), y.size());
  REQUIRE_MESSAGE(st.ok(), st.message());
  return y;
}

}  // namespace

TEST_CASE("session: packed weights' file pages leave resident memory; lent memory is never touched") {
  const Graph g = mlp_classifier();
  char path[] = "/tmp/vitrt_weight_pages_XXXXXX";
  const std::shared_ptr<const Model> file_model = write_and_load(g, path);
  Status st;
  const Tensor& w = tensor_named(file_model->graph, "fc1.w");
  REQUIRE(w.constant.file_mapped);
  REQUIRE(w.constant.size == static_cast<size_t>(kHidden * kIn) * sizeof(float));

  // The reference backend reads the weights at run time: they are resident after its run.
  const std::vector<float> ref = run_once(file_model, "ref");
  const long weights_kib = static_cast<long>(w.constant.size / 1024);
  // Without /proc/self/smaps (some sandboxes) the resident sizes cannot be read: the bytes are still checked.
  const bool smaps = resident_kib(w.constant.data) >= 0;
  if (!smaps) MESSAGE("/proc/self/smaps unreadable here: resident-size checks skipped");
  if (smaps) CHECK(resident_kib(w.constant.data) >= weights_kib);

  // The x86 backend packs both Linears' weights: a session's creation gives their pages back (its runs do not
  // read them). Some 4 KiB pages at the weights' edges and the flatbuffer's stay.
  std::vector<float> cpu;
  {
    SessionOptions o;
    o.backend = "cpu";
    o.max_batch = 2;
    std::unique_ptr<Session> s;
    st = Session::create(file_model, o, &s);
    if (!st.ok()) {
      MESSAGE("no x86 backend here (" << st.message() << "): page checks skipped");
    } else {
      if (smaps) CHECK(resident_kib(w.constant.data) < weights_kib / 4);
      const std::vector<float> x = test::pseudo_random(2 * 3 * 8 * 8, 3, 1.0f);
      cpu.assign(2 * kOut, NAN);
      REQUIRE(s->run(x.data(), 2, cpu.data(), cpu.size()).ok());
      if (smaps) CHECK(resident_kib(w.constant.data) < weights_kib / 4);
      for (size_t i = 0; i < ref.size(); ++i) CHECK(cpu[i] == doctest::Approx(ref[i]).epsilon(1e-4));
    }
  }
  // Read again (a reference session packs nothing): the same bytes come back from the file.
  CHECK(run_once(file_model, "ref") == ref);

  // The same model from caller memory: a session on each backend, then the reference again. Were lent memory
  // given back like a file map, its pages would read back as zeros and the last run would differ.
  std::vector<uint8_t> bytes;
  REQUIRE(write_model_memory(g, &bytes).ok());
  const size_t padded = (bytes.size() + 63) / 64 * 64;
  uint8_t* lent = static_cast<uint8_t*>(std::aligned_alloc(64, padded));
  REQUIRE(lent != nullptr);
  std::memcpy(lent, bytes.data(), bytes.size());
  {
    std::shared_ptr<const Model> memory_model;
    st = load_model_from_memory(lent, bytes.size(), &memory_model);
    REQUIRE_MESSAGE(st.ok(), st.message());
    CHECK_FALSE(tensor_named(memory_model->graph, "fc1.w").constant.file_mapped);
    if (!cpu.empty()) CHECK(run_once(memory_model, "cpu") == cpu);
    CHECK(run_once(memory_model, "ref") == ref);
  }
  CHECK(std::memcmp(lent, bytes.data(), bytes.size()) == 0);
  std::free(lent);
  std::remove(path);
}

TEST_CASE("session: an x86 kernel that reads a file-mapped weight at run time reads the session's own copy") {
  const Graph g = conv_classifier();
  char path[] = "/tmp/vitrt_weight_copy_XXXXXX";
  const std::shared_ptr<const Model> model = write_and_load(g, path);
  const Tensor& w = tensor_named(model->graph, "conv.w");
  REQUIRE(w.constant.file_mapped);
  const int64_t image = 3 * kSide * kSide;
  const std::vector<float> ref = run_once(model, "ref", image);
  const long weight_kib = static_cast<long>(w.constant.size / 1024);
  const bool smaps = resident_kib(w.constant.data) >= 0;
  if (smaps) CHECK(resident_kib(w.constant.data) >= weight_kib);

  SessionOptions o;
  o.backend = "cpu";
  o.max_batch = 2;
  std::unique_ptr<Session> s;
  const Status st = Session::create(model, o, &s);
  if (!st.ok()) {
    MESSAGE("no x86 backend here (" << st.message() << "): skipped");
    std::remove(path);
    return;
  }
  // The session's conv weight is its own copy, outside the file's mapping, whose pages went back.
  int32_t index = -1;
  for (size_t i = 0; i < s->graph().tensors.size(); ++i)
    if (s->graph().tensors[i].name == "conv.w") index = static_cast<int32_t>(i);
  REQUIRE(index >= 0);
  const uint8_t* copy = reinterpret_cast<const uint8_t*>(s->tensor_data(index));
  const uint8_t* file = model->file->data();
  CHECK((copy < file || copy >= file + model->file->size()));
  CHECK(s->memory().resident_bytes >= w.constant.size);
  if (smaps) CHECK(resident_kib(w.constant.data) < weight_kib / 4);
  const std::vector<float> x = test::pseudo_random(2 * image, 3, 1.0f);
  std::vector<float> y(2 * kOut, NAN);
  REQUIRE(s->run(x.data(), 2, y.data(), y.size()).ok());
  // Its runs do not read the file's pages.
  if (smaps) CHECK(resident_kib(w.constant.data) < weight_kib / 4);
  for (size_t i = 0; i < ref.size(); ++i) CHECK(y[i] == doctest::Approx(ref[i]).epsilon(1e-4));
  // The copy has the file's bytes (read last: this maps the pages again).
  CHECK(std::memcmp(copy, w.constant.data, w.constant.size) == 0);
  std::remove(path);
}
