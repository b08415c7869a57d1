// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// After Session::create, run() on the cpu backend performs no heap allocation: a small model with every kind
// of Linear (activations, no bias, fused residual) and Conv2d (patch embedding, strided 3×3, depthwise, 1×1)
// runs at both ISA levels, 1 and 2 threads and changing batches (also with its convs batch-tiled, image by
// image) while this binary counts malloc, calloc, realloc, memalign, aligned_alloc and posix_memalign
// (operator new ends in malloc, and is checked to be counted).
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "alloc_counter.h"
#include "backends/cpu/x86/x86_backend.h"
#include "ir/shape_propagation.h"
#include "loader/model_loader.h"
#include "model_writer.h"
#include "runtime/session.h"
#include "unit/test_graphs.h"

using vitrt::test::g_allocations;
using vitrt::test::g_counting;

namespace vitrt {
namespace {

using test::pseudo_random;

// image [B,3,20,20] -> conv 3×3 s2 p1 + ReLU [B,16,10,10] -> depthwise 3×3 -> conv 2×2 s2 + GELU [B,24,5,5]
// -> 1×1 conv [B,24,5,5] -> tokens [B,25,24] -> Linear GELU 72 -> Linear (no bias) 24 + residual -> LayerNorm
// -> mean -> Linear head [B,10].
Graph conv_linear_model() {
  Graph g;
  const int32_t x = g.add_activation("image", Shape{kDynamicDim, 3, 20, 20});
  g.inputs = {x};
  uint32_t seed = 1;
  auto w = [&](const char* name, Shape s) {
    return g.add_constant(name, s, pseudo_random(s.numel(), seed++, 0.3f));
  };
  auto act = [&](const char* name) { return g.add_activation(name, Shape()); };
  auto conv = [](int s, int p, int groups, Activation a) {
    Conv2dAttrs c;
    c.stride_h = c.stride_w = s;
    c.pad_h = c.pad_w = p;
    c.groups = groups;
    c.activation = a;
    return c;
  };
  const int32_t c1 = act("stem");
  g.add_node(OpType::kConv2d, conv(2, 1, 1, Activation::kRelu),
             {x, w("stem.w", Shape{16, 3, 3, 3}), w("stem.b", Shape{16})}, {c1}, "stem");
  const int32_t dw = act("dw");
  g.add_node(OpType::kConv2d, conv(1, 1, 16, Activation::kNone),
             {c1, w("dw.w", Shape{16, 1, 3, 3}), w("dw.b", Shape{16})}, {dw}, "dw");
  const int32_t c2 = act("down");
  g.add_node(OpType::kConv2d, conv(2, 0, 1, Activation::kGeluErf),
             {dw, w("down.w", Shape{24, 16, 2, 2}), w("down.b", Shape{24})}, {c2}, "down");
  const int32_t c3 = act("pw");
  g.add_node(OpType::kConv2d, conv(1, 0, 1, Activation::kNone), {c2, w("pw.w", Shape{24, 24, 1, 1}), kAbsent},
             {c3}, "pw");
  const int32_t flat = act("flat");
  g.add_node(OpType::kReshape, ReshapeAttrs{{0, 0, -1}}, {c3}, {flat}, "flatten");
  const int32_t tok = act("tokens");
  g.add_node(OpType::kTranspose, TransposeAttrs{{0, 2, 1}}, {flat}, {tok}, "to_tokens");
  const int32_t fc1 = act("fc1");
  g.add_node(OpType::kLinear, LinearAttrs{Activation::kGeluTanh},
             {tok, w("fc1.w", Shape{72, 24}), w("fc1.b", Shape{72})}, {fc1}, "fc1");
  const int32_t fc2 = act("fc2");
  g.add_node(OpType::kLinear, LinearAttrs{}, {fc1, w("fc2.w", Shape{24, 72}), kAbsent}, {fc2}, "fc2");
  const int32_t res = act("res");
  g.add_node(OpType::kAdd, NoAttrs{}, {tok, fc2}, {res}, "residual");  // fuse_epilogue folds it into fc2
  const int32_t ln = act("ln");
  g.add_node(OpType::kLayerNorm, LayerNormAttrs{1e-6f}, {res, w("ln.g", Shape{24}), w("ln.b", Shape{24})},
             {ln}, "ln");
  const int32_t mean = act("mean");
  g.add_node(OpType::kReduceMean, ReduceMeanAttrs{{1}, false}, {ln}, {mean}, "pool");
  const int32_t fc3 = act("fc3");
  g.add_node(OpType::kLinear, LinearAttrs{Activation::kRelu},
             {mean, w("fc3.w", Shape{40, 24}), w("fc3.b", Shape{40})}, {fc3}, "fc3");
  const int32_t logits = act("logits");
  g.add_node(OpType::kLinear, LinearAttrs{}, {fc3, w("head.w", Shape{10, 40}), w("head.b", Shape{10})},
             {logits}, "head");
  g.outputs = {logits};
  g.metadata.producer = "x86 zero-allocation test";
  g.metadata.arch = "tiny";
  g.metadata.preprocess.resize_shorter = 23;
  g.metadata.preprocess.crop_h = g.metadata.preprocess.crop_w = 20;
  (void)resolve_activation_shapes(&g);
  return g;
}

// image [B,3,5,6] -> ConvTranspose 3x3 s2, pads 1/0/0/1, output_padding 1, groups 3 [B,6,11,13] -> ArgMax
// over the channels [B,11,13]: the GEMM kernel's panels and C block come from the planned workspace.
Graph conv_transpose_arg_max_model() {
  Graph g;
  const int32_t x = g.add_activation("image", Shape{kDynamicDim, 3, 5, 6});
  g.inputs = {x};
  ConvTransposeAttrs a;
  a.stride_h = a.stride_w = 2;
  a.pad_top = 1;
  a.pad_right = 1;
  a.output_padding_h = a.output_padding_w = 1;
  a.groups = 3;
  const int32_t w = g.add_constant("up.w", Shape{3, 2, 3, 3}, pseudo_random(54, 11, 0.3f));
  const int32_t b = g.add_constant("up.b", Shape{6}, pseudo_random(6, 12, 0.3f));
  const int32_t up = g.add_activation("up", Shape());
  g.add_node(OpType::kConvTranspose, a, {x, w, b}, {up}, "up");
  const int32_t idx = g.add_activation("classes", Shape());
  g.add_node(OpType::kArgMax, ArgMaxAttrs{ArgKind::kMax, 1, false, false}, {up}, {idx}, "argmax");
  g.outputs = {idx};
  g.metadata.producer = "x86 zero-allocation test";
  g.metadata.arch = "tiny";
  g.metadata.preprocess.resize_shorter = 6;
  g.metadata.preprocess.crop_h = 5;
  g.metadata.preprocess.crop_w = 6;
  (void)resolve_activation_shapes(&g);
  return g;
}

std::shared_ptr<const Model> load(const Graph& g) {
  static std::vector<uint8_t> bytes;
  static std::unique_ptr<uint8_t, decltype(&std::free)> aligned(nullptr, &std::free);
  REQUIRE(write_model_memory(g, &bytes).ok());
  aligned.reset(static_cast<uint8_t*>(std::aligned_alloc(64, (bytes.size() + 63) / 64 * 64)));
  std::memcpy(aligned.get(), bytes.data(), bytes.size());
  std::shared_ptr<const Model> m;
  Status st = load_model_from_memory(aligned.get(), bytes.size(), &m);
  REQUIRE_MESSAGE(st.ok(), st.message());
  return m;
}

TEST_CASE("the allocation counter sees malloc, operator new and aligned allocation") {
  g_allocations = 0;
  g_counting = true;
  // Each pointer escapes through `sink`, or the compiler may drop an allocation freed unused (GCC does under
  // ASan).
  void* volatile sink = nullptr;
  void* p = std::malloc(16);
  sink = p;
  auto* q = new std::vector<int>(3);
  sink = q;
  sink = q->data();
  void* r = std::aligned_alloc(64, 64);
  sink = r;
  g_counting = false;
  (void)sink;
  std::free(p);
  delete q;
  std::free(r);
  CHECK(g_allocations.load() >= 4);  // malloc, new (the vector), its buffer, aligned_alloc
}

// With `tile` set (the default limits leave these small models untiled), the session must choose a batch tile
// (runtime/batch_tile.h), whose image-by-image steps then run in the counted runs too.
void check_runs_allocate_nothing(const std::shared_ptr<const Model>& model,
                                 const BatchTileLimits* tile = nullptr) {
  const X86Isa top = x86_detect_isa();
  for (X86Isa isa : {X86Isa::kAvx512, X86Isa::kAvx2}) {
    if (isa > top) continue;
    for (int threads : {1, 2}) {
      const std::string isa_name = x86_isa_name(isa);
      CAPTURE(isa_name);
      CAPTURE(threads);
      SessionOptions o;
      o.backend = "cpu";
      o.backend_factory = [isa] {
        X86Options xo;
        xo.max_isa = isa;
        xo.read_env = false;
        return create_x86_backend(xo);
      };
      o.num_threads = threads;
      o.max_batch = 5;
      if (tile) {
        o.batch_tile = *tile;
        // The channels-last passes would put a layout conversion (not a per-image op) first: no tile.
        o.disabled_passes = "channels_last_conv,channels_last_stem";
      }
      std::unique_ptr<Session> s;
      Status st = Session::create(model, o, &s);
      REQUIRE_MESSAGE(st.ok(), st.message());
      if (tile) REQUIRE(s->batch_tile().last >= s->batch_tile().first + 1);
      const auto x = pseudo_random(static_cast<size_t>(s->input_shape(5).numel()), 7, 1.0f);
      std::vector<float> y(static_cast<size_t>(s->output_shape(5).numel()));
      for (int64_t b : {5, 1, 3}) REQUIRE(s->run(x.data(), b, y.data(), y.size()).ok());  // warm-up
      const std::vector<float> want(y.begin(), y.begin() + 30);
      g_allocations = 0;
      g_counting = true;
      for (int rep = 0; rep < 3; ++rep)
        for (int64_t b : {5, 1, 3, 2}) {
          st = s->run(x.data(), b, y.data(), y.size());
          if (!st.ok()) break;
        }
      g_counting = false;
      REQUIRE_MESSAGE(st.ok(), st.message());
      CHECK(g_allocations.load() == 0);
      // The last runs (batch 2 after batch 3) left the warm-up's batch-3 logits in place.
      for (size_t i = 0; i < want.size(); ++i)
        CHECK(std::fabs(y[i] - want[i]) <= 1e-5f * (1 + std::fabs(want[i])));
    }
  }
}

TEST_CASE("cpu backend: Session::run allocates nothing (Linear + Conv2d model, both ISAs, 1-2 threads)") {
  check_runs_allocate_nothing(load(conv_linear_model()));
}

TEST_CASE("cpu backend: Session::run allocates nothing with a batch tile (the Conv2d start image by image)") {
  BatchTileLimits small;  // the stem's and depthwise conv's 16x10x10 floats per image join
  small.min_image_bytes = 4096;
  check_runs_allocate_nothing(load(conv_linear_model()), &small);
}

TEST_CASE(
    "cpu backend: Session::run allocates nothing (ConvTranspose + ArgMax model, both ISAs, 1-2 threads)") {
  check_runs_allocate_nothing(load(conv_transpose_arg_max_model()));
}

}  // namespace
}  // namespace vitrt
