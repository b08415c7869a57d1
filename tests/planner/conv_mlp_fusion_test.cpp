// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The fuse_conv_mlp pass on odd sizes: the PVT v2 / LaViT MLP (fc1 [-> ReLU] -> tokens-as-image depthwise
// conv
// -> GELU -> fc2 [+ residual]) becomes one ConvMlp op on every backend, with the reference giving the unfused
// graph's exact bits and the cpu backend's row-pipelined kernel the same outputs to rounding, at every batch;
// MLPs the op cannot express (strided conv, a hidden tensor read elsewhere) or images of fewer tokens than
// 2x the width (where fusing does not pay) are left alone.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "arch/blocks.h"
#include "arch/graph_builder.h"
#include "graph_session_util.h"
#include "ops/op_registry.h"

using namespace vitrt;
using namespace vitrt::convert;
using namespace vitrt::test;

namespace {

struct Config {
  int64_t h, w, c, hidden;
  int64_t k = 3, stride = 1;
  bool relu = false;         // PVT v2 linear variant: ReLU after fc1
  bool residual = true;      // x + mlp(x), fused into fc2 by fuse_epilogue
  bool hidden_read = false;  // fc1's result is also a graph output
  bool fused() const { return stride == 1 && !hidden_read && h * w >= 2 * c; }
};

Graph build(const Config& k) {
  Checkpoint ck;
  uint32_t seed = 7;
  auto add = [&](const std::string& name, std::vector<int64_t> shape) {
    add_random(&ck, name, std::move(shape), seed++);
  };
  add("embed.weight", {k.c, 3}), add("embed.bias", {k.c});
  add("mlp.fc1.weight", {k.hidden, k.c}), add("mlp.fc1.bias", {k.hidden});
  add("mlp.dwconv.weight", {k.hidden, 1, k.k, k.k}), add("mlp.dwconv.bias", {k.hidden});
  add("mlp.fc2.weight", {k.c, k.hidden}), add("mlp.fc2.bias", {k.c});
  GraphBuilder b(ck);
  const int32_t x =
      linear(b, image_to_tokens(b, b.input("image", Shape{1, 3, k.h, k.w}), "embed"), "embed", 3, k.c);
  int32_t y = linear(b, x, "mlp.fc1", k.c, k.hidden);
  if (k.hidden_read) b.mark_output(y);
  if (k.relu) y = b.op(OpType::kRelu, NoAttrs{}, {y}, "mlp.relu");
  y = tokens_to_image(b, y, k.h, k.w, "mlp.dwconv");
  const int32_t s = static_cast<int32_t>(k.stride), p = static_cast<int32_t>(k.k / 2);
  y = b.op(OpType::kConv2d, Conv2dAttrs{s, s, p, p, 1, 1, static_cast<int32_t>(k.hidden)},
           {y, b.weight("mlp.dwconv.weight"), b.weight("mlp.dwconv.bias")}, "mlp.dwconv");
  y = image_to_tokens(b, y, "mlp.dwconv");
  y = gelu(b, y, GeluApproximation::kErf, "mlp.act");
  y = linear(b, y, "mlp.fc2", k.hidden, k.c);
  if (k.residual) y = b.op(OpType::kAdd, NoAttrs{}, {x, y}, "residual");
  b.mark_output(y);
  return finish_image_graph(b, k.h, k.w);
}

}  // namespace

TEST_CASE("fuse_conv_mlp: the PVT v2 / LaViT MLP becomes one ConvMlp, same outputs as unfused") {
  Config wide{9, 40, 5, 1100};  // a 40-pixel row of 1100 hidden floats: one-row bands on the cpu backend
  Config relu{7, 5, 17, 64};
  relu.relu = true;
  Config plain{6, 9, 12, 48};
  plain.residual = false;
  Config five{11, 8, 10, 40};
  five.k = 5;
  Config strided{8, 6, 12, 24};
  strided.stride = 2;
  strided.residual = false;  // the conv halves the grid
  Config shared{6, 6, 8, 32};
  shared.hidden_read = true;
  Config few_tokens{5, 5, 13, 52};  // 25 tokens for 2 x 13 weight rows: not worth it
  const Config configs[] = {{14, 14, 16, 128}, {37, 23, 13, 300}, wide, relu, plain, five, strided, shared,
                            few_tokens};
  for (const Config& k : configs) {
    CAPTURE(k.h);
    CAPTURE(k.w);
    CAPTURE(k.hidden);
    std::vector<uint8_t> storage;
    const auto model = load(build(k), &storage);
    for (const char* backend : {"ref", "cpu"}) {
      CAPTURE(backend);
      const int64_t max_batch = 3;
      auto fused = session(model, backend, max_batch);
      auto unfused = session(model, backend, max_batch, "fuse_conv_mlp");
      CHECK(count(fused->graph(), OpType::kConvMlp) == (k.fused() ? 1 : 0));
      CHECK(count(unfused->graph(), OpType::kConvMlp) == 0);
      // fc1, the conv and fc2 are gone into the op; the embedding Linear stays
      CHECK(count(fused->graph(), OpType::kLinear) == (k.fused() ? 1 : 3));
      CHECK(count(fused->graph(), OpType::kConv2d) == (k.fused() ? 0 : 1));
      // the reference computes the fused op with the unfused kernels' arithmetic: identical bits
      check_same_outputs(*fused, *unfused, max_batch, 5, std::string(backend) == "ref" ? 0.0 : 2e-6);
    }
  }
}

TEST_CASE("ConvMlp: wrong shapes are a clear error naming the op and what was expected") {
  Node n;
  n.type = OpType::kConvMlp;
  ConvMlpAttrs a;
  a.height = 3;
  a.width = 4;
  n.attrs = a;
  n.outputs = {0};
  const Shape src{2, 12, 5}, w1{8, 5}, dw{8, 1, 3, 3}, w2{6, 8}, bias{8}, res{2, 12, 6};
  Shape out;
  auto infer = [&](std::vector<const Shape*> in) {
    return infer_node_shapes(n, in.data(), static_cast<int>(in.size()), &out);
  };
  REQUIRE(infer({&src, &w1, &bias, &dw, &bias, &w2, nullptr, &res}).ok());
  CHECK(out == res);
  const Shape grid_off{2, 13, 5}, dw5{8, 1, 5, 5}, w1_off{8, 4}, res_off{2, 12, 5};
  const Status s1 = infer({&grid_off, &w1, nullptr, &dw, nullptr, &w2});
  CHECK(s1.message().find("grid 3x4 does not hold 13 tokens") != std::string::npos);
  const Status s2 = infer({&src, &w1, nullptr, &dw5, nullptr, &w2});
  CHECK(s2.message().find("dw_weight must be [8,1,3,3]") != std::string::npos);
  const Status s3 = infer({&src, &w1_off, nullptr, &dw, nullptr, &w2});
  CHECK(s3.message().find("fc1_weight must be [Ch,5]") != std::string::npos);
  const Status s4 = infer({&src, &w1, nullptr, &dw, nullptr, &w2, nullptr, &res_off});
  CHECK(s4.message().find("residual must be [2,12,6]") != std::string::npos);
  CHECK_FALSE(infer({&src, &w1, nullptr, nullptr, nullptr, &w2}).ok());  // no conv weight
}
