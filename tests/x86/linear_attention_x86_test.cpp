// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The x86 LinearAttention kernel (SOFT) against the reference kernel on random odd shapes: N and m not
// multiples of the vector width, d = 8..48, r = 2..8 with H and W not multiples of r, k = 1..9, batch 1..5,
// heads 1..10, both Newton variants, SOFT-Norm; at every ISA level this CPU has and 1, 2 and 3 threads (fewer
// items than threads splits each item over the threads), outputs and workspace poisoned with NaN by the
// runner, and a smaller batch than planned.
#include <doctest/doctest.h>

#include <cstdlib>
#include <random>

#include "backends/cpu/x86/x86_backend.h"
#include "x86_test_util.h"

namespace vitrt {
namespace test {
namespace {

struct Spec {
  const char* name;
  int64_t batch, height, width, heads, d, r, k;
  PseudoInverse pinv;
  bool sym;
  float gamma;  // landmark LN gamma around this: smaller means closer landmarks, a worse-conditioned K2
  int32_t iterations = 20;
  float regularizer = 0.01f;
};

const Spec kSpecs[] = {
    {"scaled_13x11_r2_h3_d16_k3_b2", 2, 13, 11, 3, 16, 2, 3, PseudoInverse::kNewtonScaled, false, 1.0f},
    {"legacy_sym_23x19_r3_h1_d32_k5", 1, 23, 19, 1, 32, 3, 5, PseudoInverse::kNewtonLegacy, true, 1.0f},
    {"scaled_sym_17x30_r4_h2_d48_k9_b3", 3, 17, 30, 2, 48, 4, 9, PseudoInverse::kNewtonScaled, true, 1.0f},
    {"legacy_9x10_r2_h5_d16_k3_b5_close", 5, 9, 10, 5, 16, 2, 3, PseudoInverse::kNewtonLegacy, false, 0.3f},
    {"legacy_sym_soft_stage1", 1, 56, 56, 2, 32, 8, 9, PseudoInverse::kNewtonLegacy, true, 1.0f},
    {"scaled_soft_stage3_b2", 2, 14, 14, 10, 32, 2, 3, PseudoInverse::kNewtonScaled, false, 1.0f},
    {"scaled_21x22_r5_h4_d32_k5_b4_iters7", 4, 21, 22, 4, 32, 5, 5, PseudoInverse::kNewtonScaled, false, 0.3f,
     7, 0.05f},
    {"scaled_20x17_r6_h2_d16_k1", 1, 20, 17, 2, 16, 6, 1, PseudoInverse::kNewtonScaled, false, 1.0f},
    {"legacy_sym_7x9_r2_h3_d8_k3_b2", 2, 7, 9, 3, 8, 2, 3, PseudoInverse::kNewtonLegacy, true, 1.0f},
    {"scaled_sym_31x29_r7_h1_d20_k7", 1, 31, 29, 1, 20, 7, 7, PseudoInverse::kNewtonScaled, true, 1.0f},
    {"legacy_40x36_r4_h2_d32_k5_b3_m90", 3, 40, 36, 2, 32, 4, 5, PseudoInverse::kNewtonLegacy, false, 1.0f},
};

LinearAttentionAttrs attrs_of(const Spec& s) {
  LinearAttentionAttrs a;
  a.num_heads = static_cast<int32_t>(s.heads);
  a.height = static_cast<int32_t>(s.height);
  a.width = static_cast<int32_t>(s.width);
  a.q_scale = std::pow(static_cast<float>(s.d), -0.25f);
  a.landmark_ratio = static_cast<int32_t>(s.r);
  a.pinv = s.pinv;
  a.newton_iterations = s.iterations;
  a.newton_regularizer = s.regularizer;
  a.symmetric_normalization = s.sym;
  return a;
}

std::vector<HostTensor> inputs_of(const Spec& s, std::mt19937& rng) {
  const int64_t n = s.height * s.width, c = s.heads * s.d;
  std::vector<HostTensor> in;
  in.push_back(random_tensor(Shape{s.batch, n, c}, rng));
  in.push_back(random_tensor(Shape{s.batch, n, c}, rng));
  in.push_back(
      random_tensor(Shape{s.d, s.d, s.r, s.r}, rng, 1.0f / std::sqrt(static_cast<float>(s.d * s.r * s.r))));
  in.push_back(random_tensor(Shape{s.d}, rng, 0.1f * s.gamma, s.gamma));
  in.push_back(random_tensor(Shape{s.d}, rng, 0.1f));
  in.push_back(random_tensor(Shape{s.heads, 1, s.k, s.k}, rng, 1.0f / static_cast<float>(s.k)));
  return in;
}

const std::vector<bool> kConstant = {false, false, true, true, true, true};

// |a - b| <= tol everywhere (NaN fails); reports the largest difference.
bool close(const std::vector<float>& a, const std::vector<float>& b, double tol, double* worst,
           std::string* msg) {
  *worst = 0;
  if (a.size() != b.size()) {
    *msg = "size " + std::to_string(a.size()) + " vs " + std::to_string(b.size());
    return false;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    const double e = std::fabs(static_cast<double>(a[i]) - b[i]);
    if (!(e <= tol)) {
      *msg = "element " + std::to_string(i) + ": " + std::to_string(a[i]) + " vs ref " +
             std::to_string(b[i]) + " (tolerance " + std::to_string(tol) + ")";
      return false;
    }
    if (e > *worst) *worst = e;
  }
  *msg = "max diff " + std::to_string(*worst);
  return true;
}

std::vector<float> run_ref(const Spec& s, const std::vector<HostTensor>& in) {
  auto ref = create_reference_backend();
  std::vector<const HostTensor*> ptrs;
  for (const auto& t : in) ptrs.push_back(&t);
  ThreadedOpRunner r;
  Status st = r.plan(*ref, OpType::kLinearAttention, attrs_of(s), ptrs, kConstant, 1, s.name);
  REQUIRE_MESSAGE(st.ok(), st.message());
  HostTensor out;
  st = r.run(ptrs, &out);
  REQUIRE_MESSAGE(st.ok(), st.message());
  return out.data;
}

TEST_CASE("x86 LinearAttention matches the reference kernel on odd shapes") {
  std::mt19937 rng(20240611);
  double worst_all = 0;
  for (const Spec& s : kSpecs) {
    const std::string name = s.name;
    const std::vector<HostTensor> in = inputs_of(s, rng);
    std::vector<const HostTensor*> ptrs;
    for (const auto& t : in) ptrs.push_back(&t);
    const std::vector<float> want = run_ref(s, in);
    double scale = 1.0;
    for (float x : want) scale = std::fmax(scale, std::fabs(x));
    // Only the rounding of a·b + c (FMA) and of exp differ from the reference, amplified a little by the
    // Newton iteration.
    const double tol = 2e-5 * scale;
    // Batch 1 of the batched plan: the scaled variant's items are independent, the legacy one's step size is
    // global over the batch (so its batch-1 reference is a run at batch 1).
    std::vector<HostTensor> small;
    std::vector<const HostTensor*> small_ptrs;
    std::vector<float> want1;
    if (s.batch > 1) {
      for (size_t i = 0; i < in.size(); ++i) small.push_back(kConstant[i] ? in[i] : first_item(in[i]));
      for (const auto& t : small) small_ptrs.push_back(&t);
      if (s.pinv == PseudoInverse::kNewtonLegacy) {
        Spec s1 = s;
        s1.batch = 1;
        want1 = run_ref(s1, small);
      } else {
        want1.assign(want.begin(), want.begin() + static_cast<int64_t>(want.size()) / s.batch);
      }
    }
    for (X86Isa isa : isa_levels()) {
      auto be = make_x86(isa);
      REQUIRE(be);
      const std::string isa_name = x86_isa_name(isa);
      for (int threads : {1, 2, 3}) {
        INFO("case ", name, " isa ", isa_name, " threads ", threads);
        ThreadedOpRunner r;
        Status st = r.plan(*be, OpType::kLinearAttention, attrs_of(s), ptrs, kConstant, threads, s.name);
        REQUIRE_MESSAGE(st.ok(), st.message());
        HostTensor out;
        st = r.run(ptrs, &out);
        REQUIRE_MESSAGE(st.ok(), st.message());
        double worst = 0;
        std::string msg;
        CHECK_MESSAGE(close(out.data, want, tol, &worst, &msg), name, ": ", msg);
        worst_all = std::fmax(worst_all, worst / scale);
        if (std::getenv("VITRT_OPS_VERBOSE")) MESSAGE(name, " [", isa_name, ", ", threads, "t]: ", msg);
        if (s.batch > 1) {
          HostTensor o1;
          st = r.run(small_ptrs, &o1);
          REQUIRE_MESSAGE(st.ok(), st.message());
          CHECK_MESSAGE(close(o1.data, want1, tol, &worst, &msg), name, " (batch 1): ", msg);
        }
      }
    }
  }
  MESSAGE("largest difference from the reference, relative to the output scale: ", worst_all);
}

// x86 outputs of every spec on fresh random inputs: fn(spec, isa, run) where run(threads) plans and runs it.
template <class Fn>
void for_each_x86_case(uint32_t seed, Fn fn) {
  std::mt19937 rng(seed);
  for (const Spec& s : kSpecs) {
    const std::vector<HostTensor> in = inputs_of(s, rng);
    std::vector<const HostTensor*> ptrs;
    for (const auto& t : in) ptrs.push_back(&t);
    for (X86Isa isa : isa_levels()) {
      auto be = make_x86(isa);
      fn(s, isa, [&](int threads) {
        ThreadedOpRunner r;
        REQUIRE(r.plan(*be, OpType::kLinearAttention, attrs_of(s), ptrs, kConstant, threads, s.name).ok());
        HostTensor out;
        REQUIRE(r.run(ptrs, &out).ok());
        return out.data;
      });
    }
  }
}

// Splitting items or tokens over threads never changes an element's order of summation.
TEST_CASE("x86 LinearAttention gives the same bits at 1, 2 and 3 threads") {
  for_each_x86_case(5, [](const Spec& s, X86Isa isa, auto run) {
    INFO("case ", std::string(s.name), " isa ", std::string(x86_isa_name(isa)));
    const std::vector<float> first = run(1);
    CHECK(run(2) == first);
    CHECK(run(3) == first);
  });
}

// The Newton steps run on the packed GEMM from a landmark count up (X86Options::newton_packed_min_m, which
// VITRT_X86_NEWTON_PACKED_MIN_M sets when the backend is created) and on the simd row loops below it. Both sum
// every element in the same order, so forcing either path on the same shapes must give the same bits.
TEST_CASE("x86 LinearAttention: packed-GEMM and row-loop Newton steps give the same bits") {
  std::mt19937 rng(77);
  for (const Spec& s : kSpecs) {
    const std::vector<HostTensor> in = inputs_of(s, rng);
    std::vector<const HostTensor*> ptrs;
    for (const auto& t : in) ptrs.push_back(&t);
    for (X86Isa isa : isa_levels()) {
      INFO("case ", std::string(s.name), " isa ", std::string(x86_isa_name(isa)));
      auto run = [&](int64_t packed_min_m) {
        X86Options o;
        o.max_isa = isa;
        o.read_env = o.read_env_tuning = false;
        o.newton_packed_min_m = packed_min_m;
        auto be = create_x86_backend(o);
        REQUIRE(be);
        ThreadedOpRunner r;
        REQUIRE(r.plan(*be, OpType::kLinearAttention, attrs_of(s), ptrs, kConstant, 2, s.name).ok());
        HostTensor out;
        REQUIRE(r.run(ptrs, &out).ok());
        return out.data;
      };
      CHECK(run(0) == run(1000000000));
    }
  }
}

TEST_CASE("x86 LinearAttention leaves invalid attributes to the reference, which reports them") {
  std::mt19937 rng(9);
  const Spec& s = kSpecs[0];
  const std::vector<HostTensor> in = inputs_of(s, rng);
  std::vector<const HostTensor*> ptrs;
  for (const auto& t : in) ptrs.push_back(&t);
  LinearAttentionAttrs a = attrs_of(s);
  a.pinv = static_cast<PseudoInverse>(7);
  auto be = make_x86(x86_detect_isa());
  auto ref = create_reference_backend();
  ThreadedOpRunner r, rr;
  const Status got = r.plan(*be, OpType::kLinearAttention, a, ptrs, kConstant, 2, s.name);
  const Status want = rr.plan(*ref, OpType::kLinearAttention, a, ptrs, kConstant, 2, s.name);
  CHECK(!want.ok());
  CHECK(!got.ok());
  CHECK(got.message() == want.message());
}

}  // namespace
}  // namespace test
}  // namespace vitrt
