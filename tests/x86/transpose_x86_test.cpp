// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Transpose on the x86 backend (blocked batched 2-D transpose for swap-shaped permutations, the reference
// otherwise) against the reference kernel: random ranks 2-5, size-1 axes, sizes around the 32x32 tile, every
// permutation, 1 and 2 threads, batch 1 of a batched plan. A transpose is a copy: results must be identical.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "backends/cpu/x86/x86_backend.h"
#include "x86_test_util.h"

namespace vitrt {
namespace test {
namespace {

HostTensor iota(Shape s) {
  HostTensor t;
  t.shape = s;
  t.data.resize(static_cast<size_t>(s.numel()));
  std::iota(t.data.begin(), t.data.end(), 0.0f);
  return t;
}

}  // namespace

TEST_CASE("x86 Transpose equals the reference for every permutation of random shapes") {
  X86Options xo;
  xo.read_env = false;
  auto x86 = create_x86_backend(xo);
  if (!x86) return;  // no AVX2 here: nothing to compare
  auto ref = create_reference_backend();
  std::mt19937 rng(7);
  const int64_t sizes[] = {1, 2, 3, 5, 17, 31, 33, 64, 70};
  int checked = 0;
  for (int rank = 2; rank <= 5; ++rank) {
    for (int trial = 0; trial < (rank <= 3 ? 6 : 3); ++trial) {
      Shape s;
      s.rank = rank;
      int64_t numel = 1;
      for (int d = 0; d < rank; ++d) {
        s.dims[d] = sizes[rng() % 9];
        if (numel * s.dims[d] > 300000) s.dims[d] = 1 + static_cast<int64_t>(rng() % 3);
        numel *= s.dims[d];
      }
      if (trial == 0) s.dims[0] = 3;  // a batch above 1, so batch 1 regroups the axes
      std::vector<int32_t> perm(rank);
      std::iota(perm.begin(), perm.end(), 0);
      do {
        TransposeAttrs a;
        a.perm = perm;
        const HostTensor x = iota(s);
        std::vector<const HostTensor*> in{&x};
        std::string name = "transpose";
        for (int32_t p : perm) name += "_" + std::to_string(p);
        std::string dims;
        for (int d = 0; d < rank; ++d) dims += (d ? "x" : "") + std::to_string(s.dims[d]);
        INFO(name, " of ", dims);
        ThreadedOpRunner rr;
        REQUIRE(rr.plan(*ref, OpType::kTranspose, a, in, {false}, 1, name).ok());
        HostTensor want;
        REQUIRE(rr.run(in, &want).ok());
        for (int threads : {1, 2}) {
          ThreadedOpRunner r;
          Status st = r.plan(*x86, OpType::kTranspose, a, in, {false}, threads, name);
          REQUIRE_MESSAGE(st.ok(), st.message());
          HostTensor got;
          st = r.run(in, &got);
          REQUIRE_MESSAGE(st.ok(), st.message());
          CHECK(got.data == want.data);
          if (s.dims[0] > 1) {  // batch 1 inside the batched plan
            HostTensor one = x;
            one.shape.dims[0] = 1;
            one.data.resize(static_cast<size_t>(one.shape.numel()));
            std::vector<const HostTensor*> in1{&one};
            HostTensor got1, want1;
            REQUIRE(r.run(in1, &got1).ok());
            ThreadedOpRunner r1;
            REQUIRE(r1.plan(*ref, OpType::kTranspose, a, in1, {false}, 1, name).ok());
            REQUIRE(r1.run(in1, &want1).ok());
            CHECK(got1.data == want1.data);
          }
          ++checked;
        }
      } while (std::next_permutation(perm.begin(), perm.end()) && (rank < 5 || rng() % 4 == 0));
    }
  }
  MESSAGE("checked ", checked, " transposes");
}

}  // namespace test
}  // namespace vitrt
