// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// fuse_attention's attention residual with gamma as torch.onnx.export writes it: gamma.view(1,h2,1,1) folded
// into a [1,h2,1,1] (or [h2,1,1]) constant instead of a Reshape of the [h2] weight. The pass must fuse it
// into the same AttentionResidual as the .pth route's form (gamma read as [h2], the same bytes) and run to
// the same bytes as the fused op built directly; a constant of h2 values along another axis (a per-key scale)
// is not a per-head gamma and stays unfused.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "arch/graph_builder.h"
#include "graph_session_util.h"

using namespace vitrt;
using namespace vitrt::convert;
using namespace vitrt::test;

namespace {

constexpr int64_t kH1 = 3, kH2 = 4, kGridH = 4, kGridW = 6, kKeys = 4;  // scores [B,h1,H·W,N']

// The image input [B,h1,H·W,N'] is the previous stage's scores. `gamma_shape` empty: the fused op;
// otherwise --emit primitive with gamma's Reshape replaced by a constant of that shape.
Graph build(const std::vector<int64_t>& gamma_shape) {
  Checkpoint ck;
  uint32_t seed = 5;
  auto add = [&](const std::string& name, std::vector<int64_t> shape, float scale = 0.4f) {
    add_random(&ck, name, std::move(shape), seed++, scale);
  };
  add("ar.dw.weight", {kH1, 1, 2, 2}), add("ar.dw.bias", {kH1}, 0.1f);
  add("ar.pw.weight", {kH2, kH1, 1, 1}), add("ar.pw.bias", {kH2}, 0.1f);
  add("ar.gamma", {kH2}, 1.0f);
  GraphBuilder b(ck);
  b.set_emit_primitive(!gamma_shape.empty());
  const int32_t scores = b.input("image", Shape{1, kH1, kGridH * kGridW, kKeys});
  b.mark_output(b.op(OpType::kAttentionResidual, AttentionResidualAttrs{kGridH, kGridW},
                     {scores, b.weight("ar.dw.weight"), b.weight("ar.dw.bias"), b.weight("ar.pw.weight"),
                      b.weight("ar.pw.bias"), b.weight("ar.gamma")},
                     "ar"));
  Graph g = finish_image_graph(b, kGridH * kGridW, kKeys);
  if (gamma_shape.empty()) return g;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].name != "ar.gamma.view") continue;
    const Tensor& w = g.tensors[g.nodes[i].inputs[0]];
    const int32_t view = g.nodes[i].outputs[0];
    Shape folded_shape;
    REQUIRE(Shape::from_vector(gamma_shape, &folded_shape));
    const std::vector<float> values(w.f32(), w.f32() + kH2);
    const int32_t folded = g.add_constant("ar.gamma.folded", folded_shape, values);
    for (Node& n : g.nodes)
      for (int32_t& in : n.inputs)
        if (in == view) in = folded;
    g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(i));
    return g;
  }
  FAIL("no ar.gamma.view in the primitive graph");
  return g;
}

}  // namespace

TEST_CASE("fuse_attention: an attention residual whose gamma view is a folded constant fuses, same bytes") {
  std::vector<uint8_t> s0;
  const auto fused = load(build({}), &s0);
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{1, kH2, 1, 1}, std::vector<int64_t>{kH2, 1, 1},
        std::vector<int64_t>{1, 1, 1, kKeys}}) {
    CAPTURE(shape.size());
    CAPTURE(shape.back());
    const bool per_head = shape.back() == 1;
    std::vector<uint8_t> s1;
    const auto folded = load(build(shape), &s1);
    for (const std::string backend : {"ref", "cpu"}) {
      CAPTURE(backend);
      const int64_t max_batch = 3;
      auto f = session(fused, backend, max_batch);
      auto p = session(folded, backend, max_batch);
      auto u = session(folded, backend, max_batch, "fuse_attention");
      CHECK(count(p->graph(), OpType::kAttentionResidual) == (per_head ? 1 : 0));
      CHECK(count(u->graph(), OpType::kAttentionResidual) == 0);
      const std::vector<float> x =
          pseudo_random(static_cast<size_t>(f->input_shape(max_batch).numel()), 9, 1.5f);
      for (int64_t batch = 1; batch <= max_batch; ++batch) {
        CAPTURE(batch);
        const size_t n = static_cast<size_t>(f->output_shape(batch).numel());
        std::vector<float> yf(n, NAN), yp(n, NAN);
        REQUIRE(f->run(x.data(), batch, yf.data(), n).ok());
        REQUIRE(p->run(x.data(), batch, yp.data(), n).ok());
        if (per_head) CHECK(std::memcmp(yf.data(), yp.data(), n * sizeof(float)) == 0);
      }
      // Fused or not, each form computes its own function: the per-key scale against its unfused run.
      check_same_outputs(*p, *u, max_batch, 13, 1e-5);
    }
  }
}
