// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The cpu backend's packed GEMM through its two users, Linear and Conv2d (not depthwise), against the
// reference backend on random shapes: M, N, K off the register tiles and the K block, 1..9 batch items, every
// activation, with and without bias (and Linear's fused residual), at both ISA levels and 1 and 2 threads.
// OpRunner poisons outputs and workspace with NaN, so an element the kernel never writes fails the
// comparison.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>

#include "checked_op_case.h"

namespace vitrt {
namespace test {
namespace {

GemmCase linear_case(std::mt19937& rng, int64_t items, int64_t tokens, int64_t k, int64_t n, Activation act,
                     bool bias, bool residual) {
  GemmCase c;
  c.name = "linear b" + std::to_string(items) + " t" + std::to_string(tokens) + " k" + std::to_string(k) +
           " n" + std::to_string(n) + " " + act_name(act) + (bias ? " bias" : "") +
           (residual ? " residual" : "");
  c.type = OpType::kLinear;
  c.attrs = LinearAttrs{act};
  c.bound_attrs = LinearAttrs{Activation::kNone};
  const Shape xs = tokens > 0 ? Shape{items, tokens, k} : Shape{items, k};
  const Shape ys = tokens > 0 ? Shape{items, tokens, n} : Shape{items, n};
  c.inputs.push_back(random_tensor(xs, rng, 1.0f));
  c.inputs.push_back(random_tensor(Shape{n, k}, rng, 1.0f / std::sqrt(static_cast<float>(k))));
  c.inputs.push_back(bias ? random_tensor(Shape{n}, rng, 1.0f) : HostTensor{});
  c.inputs.push_back(residual ? random_tensor(ys, rng, 1.0f) : HostTensor{});
  if (!residual) c.inputs.pop_back();
  c.constant = {false, true, true, false};
  c.constant.resize(c.inputs.size());
  return c;
}

TEST_CASE("cpu Linear (packed GEMM) matches the reference on random odd shapes, every activation") {
  std::mt19937 rng(2024);
  std::uniform_int_distribution<int> items(1, 9), tokens(1, 61), dim(1, 211);
  int n_cases = 0;
  for (Activation act : kActivations)
    for (int bias = 0; bias < 2; ++bias)
      for (int rep = 0; rep < 3; ++rep) {
        const bool residual = rep == 2;
        check_case(linear_case(rng, items(rng), rep == 1 ? 0 : tokens(rng), dim(rng), dim(rng), act, bias,
                               residual));
        ++n_cases;
      }
  // Shapes at the tile and block boundaries: K over one and several K blocks (192), N a multiple of the wide
  // tile (48), of the tall one (32) and neither, M over the row chunk, a single row and column.
  struct Fixed {
    int64_t items, tokens, k, n;
  };
  const Fixed fixed[] = {{1, 197, 192, 576}, {2, 197, 768, 192}, {1, 50, 193, 96},  {3, 17, 385, 33},
                         {1, 1, 1, 1},       {9, 1, 17, 1000},   {1, 130, 64, 480}, {2, 64, 7, 49},
                         {1, 224, 96, 47},   {1, 113, 400, 80}};
  for (const Fixed& f : fixed) {
    const Activation act = kActivations[n_cases % kNumActivations];
    check_case(linear_case(rng, f.items, f.tokens, f.k, f.n, act, n_cases % 3 != 0, n_cases % 5 == 0));
    ++n_cases;
  }
  MESSAGE("checked ", n_cases, " Linear cases");
}

TEST_CASE("cpu Conv2d (im2col + packed GEMM) matches the reference on the model stems and odd shapes") {
  std::mt19937 rng(77);
  int n_cases = 0;
  auto check = [&](int64_t b, int64_t cin, int64_t h, int64_t w, int64_t cout, int64_t kh, int64_t kw, int s,
                   int p, int d, int g) {
    const Activation act = kActivations[n_cases % kNumActivations];
    check_case(conv_case(rng, b, cin, h, w, cout, kh, kw, s, p, d, g, act, n_cases % 3 != 2));
    ++n_cases;
  };
  // The shapes the shipped families use, scaled down: DeiT patch 16/16, SOFT/LaViT/PVT stems 7×7 s4 p3 and
  // 3×3 s2 p1, SOFT's 3×3 s1, spatial-reduction convs k = s = 8, 4, 2, 1×1 convs.
  check(1, 3, 64, 48, 24, 16, 16, 16, 0, 1, 1);
  check(3, 3, 61, 59, 32, 7, 7, 4, 3, 1, 1);
  check(2, 16, 23, 29, 40, 3, 3, 2, 1, 1, 1);
  check(1, 8, 19, 17, 8, 3, 3, 1, 1, 1, 1);
  check(2, 24, 56, 40, 24, 8, 8, 8, 0, 1, 1);
  check(1, 20, 28, 28, 20, 4, 4, 4, 0, 1, 1);
  check(4, 33, 14, 14, 35, 2, 2, 2, 0, 1, 1);
  check(2, 17, 9, 11, 50, 1, 1, 1, 0, 1, 1);
  // Grouped (not depthwise), dilated, rectangular kernels, 1×1 outputs, up to 9 images.
  check(2, 12, 15, 13, 18, 3, 3, 1, 1, 1, 3);
  check(1, 6, 21, 20, 10, 3, 3, 1, 2, 2, 1);
  check(9, 5, 7, 9, 7, 3, 2, 2, 1, 1, 1);
  check(5, 4, 6, 6, 130, 6, 6, 6, 0, 1, 1);
  // Pointwise (1×1) convs at MobileNetV3's and EfficientNet's shapes, scaled down and made odd: few input
  // channels (K under one vector), output channels off every row tile, 7² to 29² maps over 1 to 8 images
  // (panels folded across images and not), and a 1×1 stride-2 projection (ResNet's downsample).
  check(1, 3, 7, 7, 13, 1, 1, 1, 0, 1, 1);
  check(8, 16, 7, 7, 97, 1, 1, 1, 0, 1, 1);
  check(2, 40, 14, 14, 7, 1, 1, 1, 0, 1, 1);
  check(3, 24, 8, 8, 72, 1, 1, 1, 0, 1, 1);
  check(1, 75, 29, 29, 41, 1, 1, 1, 0, 1, 1);
  check(5, 33, 11, 13, 200, 1, 1, 1, 0, 1, 1);
  check(2, 64, 14, 14, 45, 1, 1, 2, 0, 1, 1);
  // Grouped pointwise with whole panels inside each image: those are read in place, a group's planes apart.
  check(2, 12, 17, 16, 18, 1, 1, 1, 0, 1, 3);
  // Inputs over 1 MiB, where each panel's GEMM prefetches the next panel's input: a 3×3 and a pointwise conv.
  check(2, 64, 47, 45, 20, 3, 3, 1, 1, 1, 1);
  check(2, 130, 33, 35, 9, 1, 1, 1, 0, 1, 1);
  // Random ones.
  std::uniform_int_distribution<int> ch(1, 40), hw(5, 40), kern(1, 5), stride(1, 4), items(1, 9);
  for (int r = 0; r < 8; ++r) {
    const int64_t kh = kern(rng), kw = kern(rng), s = stride(rng), p = std::min<int64_t>(kh, kw) / 2;
    check(items(rng), ch(rng), hw(rng), hw(rng), ch(rng), kh, kw, static_cast<int>(s), static_cast<int>(p), 1,
          1);
  }
  MESSAGE("checked ", n_cases, " Conv2d cases");
}

// fuse_epilogue's Conv2d residual: act(conv + bias + r), r of the output's shape. Maps whose pixels do not
// fill whole panels over several images (7², 14², odd sizes) put panels across two images, whose C block gets
// the residual and activation while it is copied out; the others get them in registers.
TEST_CASE("cpu Conv2d with a residual input (added before the activation) matches the reference") {
  std::mt19937 rng(79);
  int n_cases = 0;
  auto check = [&](int64_t b, int64_t cin, int64_t h, int64_t w, int64_t cout, int64_t k, int s, int p,
                   bool bias, bool constant_weight) {
    const Activation act = kActivations[(n_cases + 1) % kNumActivations];
    GemmCase c = conv_case(rng, b, cin, h, w, cout, k, k, s, p, 1, 1, act, bias);
    const int64_t ho = (h + 2 * p - k) / s + 1, wo = (w + 2 * p - k) / s + 1;
    if (!bias) c.inputs.push_back(HostTensor{});
    c.inputs.push_back(random_tensor(Shape{b, cout, ho, wo}, rng, 2.0f));
    c.constant = {false, constant_weight, true, false};
    c.name += " residual" + std::string(constant_weight ? "" : " (run-time weight)");
    check_case(c);
    ++n_cases;
  };
  check(8, 24, 7, 7, 40, 1, 1, 0, true, true);    // ResNet's last stage, scaled: panels across images
  check(3, 16, 14, 14, 33, 3, 1, 1, true, true);  // 196 pixels: across images too
  check(2, 8, 9, 11, 70, 1, 1, 0, false, true);
  check(1, 12, 56, 56, 24, 1, 1, 0, true, true);  // whole panels, a masked last one
  check(4, 20, 13, 9, 17, 3, 2, 1, true, true);
  // ResNet's third stage at batch 8, scaled: 49 folded panels of 32 pixels (AVX-512), an odd count that two
  // threads cannot share, so each panel's output channels are cut into row chunks.
  check(8, 16, 14, 14, 40, 3, 1, 1, true, true);
  check(8, 24, 14, 14, 61, 1, 1, 0, false, true);
  check(2, 7, 5, 5, 9, 1, 1, 0, true, false);
  check(5, 30, 7, 7, 64, 1, 1, 0, false, false);
  for (int act = 0; act < kNumActivations; ++act) check(3, 9, 6, 7, 11, 1, 1, 0, true, true);
  MESSAGE("checked ", n_cases, " Conv2d residual cases");
}

// A residual input of the output's shape `out` (fuse_epilogue's conv -> Add, added before the activation),
// after an absent bias where the case has none.
void add_residual(GemmCase* c, std::mt19937& rng, bool bias, const Shape& out) {
  if (!bias) c->inputs.push_back(HostTensor{});
  c->inputs.push_back(random_tensor(out, rng, 2.0f));
  c->constant = {false, true, true, false};
  c->name += " residual";
}

// Small maps at batch 1-2, whose pixels would leave the NCHW panels part empty, run with the pixels as the
// GEMM's rows (gemm_conv2d_rows.cpp; each of these takes it on AVX-512, most on AVX2: VITRT_X86_VERBOSE
// prints "pixel-row"; its cost rule wants K large enough for the transposed copy of C not to matter):
// pointwise read in place, strided and padded 3×3 through the image's im2col (stride-1 ones with >= 64 output
// channels through the implicit product, tested below), K over several K blocks,
// channel counts off the vector width, row counts off every tile, with and without bias and residual.
TEST_CASE("cpu Conv2d with the pixels as the GEMM's rows (7², 14², odd maps) matches the reference") {
  std::mt19937 rng(81);
  int n_cases = 0;
  auto check = [&](int64_t b, int64_t cin, int64_t h, int64_t w, int64_t cout, int64_t k, int s, int p, int d,
                   bool residual) {
    const Activation act = kActivations[n_cases % kNumActivations];
    const bool bias = n_cases % 3 != 1;
    GemmCase c = conv_case(rng, b, cin, h, w, cout, k, k, s, p, d, 1, act, bias);
    if (residual)
      add_residual(
          &c, rng, bias,
          Shape{b, cout, (h + 2 * p - d * (k - 1) - 1) / s + 1, (w + 2 * p - d * (k - 1) - 1) / s + 1});
    check_case(c);
    ++n_cases;
  };
  for (int residual = 0; residual < 2; ++residual) {
    check(1, 160, 7, 7, 64, 1, 1, 0, 1, residual);    // ResNet's 7² pointwise, scaled
    check(1, 20, 7, 7, 48, 3, 1, 1, 1, residual);     // its 3×3
    check(1, 24, 14, 14, 64, 3, 2, 1, 1, residual);   // the stride-2 3×3 into 7²
    check(1, 160, 14, 14, 64, 1, 2, 0, 1, residual);  // the stride-2 downsample
    check(1, 64, 14, 14, 256, 3, 1, 1, 1, residual);  // 196 pixels
    check(2, 160, 7, 7, 64, 1, 1, 0, 1, residual);
    check(1, 70, 7, 7, 48, 3, 1, 1, 1, residual);  // K = 630: four K blocks
    check(1, 40, 11, 5, 64, 3, 1, 1, 1, residual);
    check(1, 40, 9, 9, 64, 3, 1, 2, 2, residual);    // dilated
    check(1, 200, 7, 7, 40, 3, 1, 1, 1, residual);   // Cout 40: a partial last panel at AVX-512 too
    check(2, 512, 3, 3, 100, 1, 1, 0, 1, residual);  // batch 2, Cout 100
  }
  MESSAGE("checked ", n_cases, " pixel-row Conv2d cases");
}

// Dense stride-1 convs with at least 64 output channels and output rows that fill a register tile take the
// pixel-row form's implicit product (gemm_conv2d_rows.cpp: no im2col, the taps read from the zero-padded
// image, or from the image itself without padding), at any map size up to its C block limit; an AVX2 7-wide
// map keeps im2col.
TEST_CASE("cpu Conv2d's implicit pixel-row product (no im2col) matches the reference") {
  std::mt19937 rng(82);
  int n_cases = 0;
  auto check = [&](int64_t b, int64_t cin, int64_t h, int64_t w, int64_t cout, int64_t kh, int64_t kw, int p,
                   int d, bool residual) {
    const Activation act = kActivations[n_cases % kNumActivations];
    const bool bias = n_cases % 3 != 1;
    GemmCase c = conv_case(rng, b, cin, h, w, cout, kh, kw, 1, p, d, 1, act, bias);
    if (residual)
      add_residual(&c, rng, bias, Shape{b, cout, h + 2 * p - d * (kh - 1), w + 2 * p - d * (kw - 1)});
    check_case(c);
    ++n_cases;
  };
  check(1, 64, 56, 56, 64, 3, 3, 1, 1, false);   // ResNet's layer1 3×3: 56-wide rows, 4 tiles each
  check(1, 32, 28, 28, 128, 3, 3, 1, 1, true);   // layer2's, scaled
  check(1, 24, 14, 14, 256, 3, 3, 1, 1, false);  // layer3's
  check(1, 40, 7, 7, 512, 3, 3, 1, 1, true);     // layer4's: 7-wide rows
  check(2, 17, 9, 11, 64, 3, 3, 1, 1, false);    // odd map, batch 2
  check(1, 70, 14, 14, 96, 3, 3, 1, 1, true);    // K = 630 across K blocks, a partial last panel
  check(1, 9, 13, 13, 80, 5, 5, 2, 1, false);    // 5×5
  check(1, 12, 16, 16, 64, 3, 3, 2, 2, true);    // dilated
  check(1, 20, 12, 18, 72, 3, 3, 0, 1, false);   // no padding: the image read in place
  check(1, 16, 10, 15, 64, 1, 3, 0, 1, true);    // 1×3, in place
  check(3, 8, 20, 14, 100, 3, 1, 1, 1, false);   // 3×1 (padding on both axes), batch 3
  MESSAGE("checked ", n_cases, " implicit Conv2d cases");
}

TEST_CASE("cpu Conv2d with a weight computed at run time (not packed at plan time) matches the reference") {
  std::mt19937 rng(78);
  const struct {
    int64_t b, cin, hw, cout, k;
    int s, p, g;
  } shapes[] = {{1, 8, 13, 21, 3, 1, 1, 1}, {3, 17, 7, 50, 1, 1, 0, 1}, {2, 12, 9, 18, 3, 2, 1, 3}};
  for (const auto& sh : shapes) {
    GemmCase c = conv_case(rng, sh.b, sh.cin, sh.hw, sh.hw, sh.cout, sh.k, sh.k, sh.s, sh.p, 1, sh.g,
                           Activation::kRelu, true);
    c.constant[1] = false;
    c.name += " (run-time weight)";
    check_case(c);
  }
}

}  // namespace
}  // namespace test
}  // namespace vitrt
