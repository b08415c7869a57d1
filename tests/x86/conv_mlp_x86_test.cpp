// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The cpu backend's ConvMlp (the fused PVT v2 / LaViT MLP, row-pipelined in bands of image rows with halo
// rows kept between bands) against the reference backend on random odd shapes: grids from one row to many
// bands, bands of one row (wide hidden layers) and of many, 3x3, 5x5 and 1x3 kernels, every activation in
// every slot, each bias and the residual present or not, batch 1..9 (odd batches cut images into row
// segments across the 2 threads), both ISA levels, 1 and 2 threads.
#include <doctest/doctest.h>

#include "checked_op_case.h"

namespace vitrt {
namespace test {
namespace {

struct MlpShape {
  int64_t b, h, w, c, ch, co, pad_h, pad_w;
};

GemmCase conv_mlp_case(std::mt19937& rng, const MlpShape& s, int variant) {
  GemmCase c;
  ConvMlpAttrs a;
  a.height = static_cast<int32_t>(s.h);
  a.width = static_cast<int32_t>(s.w);
  a.pad_h = static_cast<int32_t>(s.pad_h);
  a.pad_w = static_cast<int32_t>(s.pad_w);
  a.fc1_activation = kActivations[variant % kNumActivations];
  a.dw_activation = kActivations[(variant + 2) % kNumActivations];
  a.fc2_activation = kActivations[(variant / 4 + 3) % kNumActivations];
  const bool bias1 = variant % 3 != 1, bias_dw = variant % 5 != 2, bias2 = variant % 2 == 0,
             residual = variant % 7 != 3;
  c.name = "conv_mlp b" + std::to_string(s.b) + " " + std::to_string(s.h) + "x" + std::to_string(s.w) + "x" +
           std::to_string(s.c) + " -> " + std::to_string(s.ch) + " -> " + std::to_string(s.co) + " pad " +
           std::to_string(s.pad_h) + "," + std::to_string(s.pad_w) + " " + act_name(a.fc1_activation) + "/" +
           act_name(a.dw_activation) + "/" + act_name(a.fc2_activation) + (bias1 ? " b1" : "") +
           (bias_dw ? " bdw" : "") + (bias2 ? " b2" : "") + (residual ? " residual" : "");
  c.type = OpType::kConvMlp;
  c.attrs = a;
  a.fc1_activation = a.dw_activation = a.fc2_activation = Activation::kNone;
  c.bound_attrs = a;
  const int64_t n = s.h * s.w, kh = 2 * s.pad_h + 1, kw = 2 * s.pad_w + 1;
  auto optional = [&](bool present, const Shape& shape, float scale) {
    c.inputs.push_back(present ? random_tensor(shape, rng, scale) : HostTensor{});
  };
  c.inputs.push_back(random_tensor(Shape{s.b, n, s.c}, rng, 1.0f));
  c.inputs.push_back(random_tensor(Shape{s.ch, s.c}, rng, 1.0f / std::sqrt(float(s.c))));
  optional(bias1, Shape{s.ch}, 0.5f);
  c.inputs.push_back(random_tensor(Shape{s.ch, 1, kh, kw}, rng, 1.0f / std::sqrt(float(kh * kw))));
  optional(bias_dw, Shape{s.ch}, 0.5f);
  c.inputs.push_back(random_tensor(Shape{s.co, s.ch}, rng, 1.0f / std::sqrt(float(s.ch))));
  optional(bias2, Shape{s.co}, 0.5f);
  optional(residual, Shape{s.b, n, s.co}, 1.0f);
  while (c.inputs.back().shape.rank == 0) c.inputs.pop_back();
  c.constant = {false, true, true, true, true, true, true, false};
  c.constant.resize(c.inputs.size());
  return c;
}

TEST_CASE("cpu ConvMlp (row-pipelined fc1 -> depthwise conv -> fc2) matches the reference") {
  std::mt19937 rng(2718);
  int n_cases = 0;
  auto check = [&](const MlpShape& s) { check_case(conv_mlp_case(rng, s, n_cases++)); };
  // Scaled-down model shapes (hidden 8x and 4x the tokens), one-row bands (hidden 1100 wide: a row of
  // 40 pixels exceeds the band budget's third), a grid of one row and of one column, many bands.
  check({2, 14, 14, 16, 128, 16, 1, 1});
  check({1, 7, 7, 40, 160, 40, 1, 1});
  check({3, 9, 40, 5, 1100, 7, 1, 1});
  check({1, 37, 23, 13, 300, 11, 1, 1});
  check({2, 1, 9, 6, 33, 6, 1, 1});
  check({1, 11, 1, 6, 17, 9, 1, 1});
  check({9, 3, 5, 3, 19, 4, 1, 1});
  check({1, 17, 13, 9, 70, 9, 2, 2});
  check({4, 6, 11, 10, 21, 10, 0, 1});
  std::uniform_int_distribution<int> side(1, 24), chans(1, 40), hidden(1, 200), pad(0, 2), items(1, 9);
  for (int r = 0; r < 8; ++r)
    check({items(rng), side(rng), side(rng), chans(rng), hidden(rng), chans(rng), pad(rng), pad(rng)});
  MESSAGE("checked ", n_cases, " ConvMlp cases");
}

}  // namespace
}  // namespace test
}  // namespace vitrt
