// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Pool2d on the x86 backend (a vector of output columns at a time, the reference's per-cell loop at the row
// edges) against the reference kernel: random windows, strides, dilations, asymmetric pads, ceil_mode and
// count_include_pad on odd shapes, inputs with NaN and -inf, every ISA, 1 and 2 threads. Max must be
// identical (NaN where the reference has NaN); an average sums in float where the reference sums in double.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ops/op_registry.h"
#include "x86_test_util.h"

namespace vitrt {
namespace test {
namespace {

// A random valid Pool2d for an [h, w] image (false when the drawn window does not fit).
bool random_pool(std::mt19937& rng, int64_t h, int64_t w, Pool2dAttrs* a) {
  auto pick = [&](int lo, int hi) {
    return lo + static_cast<int>(rng() % static_cast<unsigned>(hi - lo + 1));
  };
  a->kind = rng() % 2 ? PoolKind::kMax : PoolKind::kAverage;
  a->kernel_h = pick(1, 5);
  a->kernel_w = pick(1, 5);
  a->stride_h = pick(1, 3);
  a->stride_w = pick(1, 3);
  const bool dilate = a->kind == PoolKind::kMax && rng() % 3 == 0;
  a->dilation_h = dilate ? pick(1, 3) : 1;
  a->dilation_w = dilate ? pick(1, 3) : 1;
  a->pad_top = pick(0, a->kernel_h - 1);
  a->pad_bottom = pick(0, a->kernel_h - 1);
  a->pad_left = pick(0, a->kernel_w - 1);
  a->pad_right = pick(0, a->kernel_w - 1);
  a->ceil_mode = rng() % 2;
  a->count_include_pad = rng() % 2;
  int64_t ho, wo;
  return pool_output_size(h, a->kernel_h, a->pad_top, a->pad_bottom, a->stride_h, a->dilation_h, a->ceil_mode,
                          &ho) &&
         pool_output_size(w, a->kernel_w, a->pad_left, a->pad_right, a->stride_w, a->dilation_w, a->ceil_mode,
                          &wo);
}

std::string describe(const Shape& s, const Pool2dAttrs& a) {
  return s.str() + (a.kind == PoolKind::kMax ? " max " : " average ") + std::to_string(a.kernel_h) + "x" +
         std::to_string(a.kernel_w) + " s" + std::to_string(a.stride_h) + "x" + std::to_string(a.stride_w) +
         " d" + std::to_string(a.dilation_h) + "x" + std::to_string(a.dilation_w) + " pads " +
         std::to_string(a.pad_top) + "/" + std::to_string(a.pad_left) + "/" + std::to_string(a.pad_bottom) +
         "/" + std::to_string(a.pad_right) + (a.ceil_mode ? " ceil" : "") +
         (a.count_include_pad ? " include_pad" : "");
}

}  // namespace

TEST_CASE("x86 Pool2d matches the reference on random windows over odd shapes (every ISA, 1 and 2 threads)") {
  auto ref = create_reference_backend();
  std::mt19937 rng(2611);
  const int64_t widths[] = {1, 3, 7, 8, 15, 17, 33, 70};
  int checked = 0, vectorised = 0;
  for (int trial = 0; trial < 120; ++trial) {
    const Shape s{1 + static_cast<int64_t>(rng() % 2), 1 + static_cast<int64_t>(rng() % 5),
                  1 + static_cast<int64_t>(rng() % 19), widths[rng() % 8]};
    Pool2dAttrs a;
    if (!random_pool(rng, s[2], s[3], &a)) continue;
    HostTensor x = random_tensor(s, rng);
    if (trial % 3 == 0) {  // NaN and -inf inside the image: a NaN wins a max, -inf never beats a finite tap
      x.data[rng() % x.data.size()] = std::numeric_limits<float>::quiet_NaN();
      x.data[rng() % x.data.size()] = -std::numeric_limits<float>::infinity();
    }
    INFO(describe(s, a));
    const std::vector<const HostTensor*> in{&x};
    ThreadedOpRunner rr;
    REQUIRE(rr.plan(*ref, OpType::kPool2d, a, in, {false}, 1).ok());
    HostTensor want;
    REQUIRE(rr.run(in, &want).ok());
    for (X86Isa isa : isa_levels()) {
      auto x86 = make_x86(isa);
      REQUIRE(x86 != nullptr);
      for (int threads : {1, 2}) {
        CAPTURE(threads);
        ThreadedOpRunner r;
        Status st = r.plan(*x86, OpType::kPool2d, a, in, {false}, threads);
        REQUIRE_MESSAGE(st.ok(), st.message());
        HostTensor got;
        st = r.run(in, &got);
        REQUIRE_MESSAGE(st.ok(), st.message());
        REQUIRE(got.data.size() == want.data.size());
        for (size_t i = 0; i < got.data.size(); ++i) {
          const float g = got.data[i], e = want.data[i];
          const bool same = g == e || (std::isnan(g) && std::isnan(e));
          const bool close =
              a.kind == PoolKind::kAverage && std::fabs(g - e) <= 1e-6f * (1.0f + std::fabs(e));
          CHECK_MESSAGE((same || close), "element ", i, ": ", g, " vs ", e);
        }
      }
    }
    ++checked;
    vectorised += s[3] >= 17;
  }
  MESSAGE("checked ", checked, " random Pool2d cases (", vectorised, " with rows of 17 or more columns)");
  CHECK(checked >= 60);
}

TEST_CASE("x86 Pool2d on a large map splits rows over the threads with the same result") {
  // ResNet's stem pool and GoogLeNet's ceil_mode pool on a [2,16,57,61] map: far above the threading
  // threshold.
  auto ref = create_reference_backend();
  std::mt19937 rng(5);
  const Shape s{2, 16, 57, 61};
  const HostTensor x = random_tensor(s, rng);
  const std::vector<const HostTensor*> in{&x};
  Pool2dAttrs stem;
  stem.kernel_h = stem.kernel_w = 3;
  stem.stride_h = stem.stride_w = 2;
  stem.pad_top = stem.pad_left = stem.pad_bottom = stem.pad_right = 1;
  Pool2dAttrs googlenet = stem;
  googlenet.pad_top = googlenet.pad_left = googlenet.pad_bottom = googlenet.pad_right = 0;
  googlenet.ceil_mode = true;
  Pool2dAttrs average = stem;
  average.kind = PoolKind::kAverage;
  average.stride_h = average.stride_w = 1;
  for (const Pool2dAttrs& a : {stem, googlenet, average}) {
    INFO(describe(s, a));
    ThreadedOpRunner rr;
    REQUIRE(rr.plan(*ref, OpType::kPool2d, a, in, {false}, 1).ok());
    HostTensor want;
    REQUIRE(rr.run(in, &want).ok());
    for (X86Isa isa : isa_levels()) {
      auto x86 = make_x86(isa);
      ThreadedOpRunner r;
      REQUIRE(r.plan(*x86, OpType::kPool2d, a, in, {false}, 2).ok());
      HostTensor got;
      REQUIRE(r.run(in, &got).ok());
      REQUIRE(got.data.size() == want.data.size());
      double worst = 0;
      for (size_t i = 0; i < got.data.size(); ++i)
        worst = std::max(worst, std::fabs(double(got.data[i]) - want.data[i]));
      if (a.kind == PoolKind::kMax)
        CHECK(got.data == want.data);
      else
        CHECK(worst <= 1e-6);
    }
  }
}

}  // namespace test
}  // namespace vitrt
