// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The x86 backend against PyTorch and against the reference backend, op case by op case, at every ISA level
// this CPU has and at 1 and 2 threads; smaller batches than planned, in-place runs, odd shapes, and the env
// switches.
#include <doctest/doctest.h>

#include <cstdlib>
#include <random>

#include "backends/cpu/x86/x86_backend.h"
#include "x86_test_util.h"

namespace vitrt {
namespace test {
namespace {

const std::vector<OpCase>& all_cases() {
  static std::vector<OpCase> cases;
  static bool loaded = false;
  if (!loaded) {
    loaded = true;
    const std::string dir = op_cases_dir();
    REQUIRE_MESSAGE(!dir.empty(), "VITRT_FIXTURE_DIR is not set");
    Status s = load_op_cases(dir, &cases);
    REQUIRE_MESSAGE(s.ok(), s.message());
    REQUIRE(!cases.empty());
  }
  return cases;
}

// |a - b| <= tol everywhere (NaN fails).
bool close(const std::vector<float>& a, const std::vector<float>& b, double tol, std::string* msg) {
  if (a.size() != b.size()) {
    *msg = "size " + std::to_string(a.size()) + " vs " + std::to_string(b.size());
    return false;
  }
  double worst = 0;
  size_t at = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double e = std::fabs(static_cast<double>(a[i]) - b[i]);
    if (!(e <= tol)) {
      *msg = "element " + std::to_string(i) + ": " + std::to_string(a[i]) + " vs ref " +
             std::to_string(b[i]) + " (tolerance " + std::to_string(tol) + ")";
      return false;
    }
    if (e > worst) worst = e, at = i;
  }
  *msg = "max diff " + std::to_string(worst) + " at " + std::to_string(at);
  return true;
}

TEST_CASE("x86 backend is available on this CPU and honours the switches") {
  REQUIRE_MESSAGE(x86_detect_isa() != X86Isa::kNone, "this test machine has AVX2+FMA at least");
  MESSAGE("detected ISA: ", std::string(x86_isa_name(x86_detect_isa())));
  auto b = make_x86(X86Isa::kAvx512);
  REQUIRE(b);
  CHECK(std::string(b->name()) == "cpu");
  X86Options none;
  none.max_isa = X86Isa::kNone;
  none.read_env = false;
  CHECK(!create_x86_backend(none));

  setenv("VITRT_FORCE_REF", "1", 1);
  CHECK(x86_effective_isa(X86Options{}) == X86Isa::kNone);
  CHECK(!create_x86_backend(X86Options{}));
  unsetenv("VITRT_FORCE_REF");
  setenv("VITRT_MAX_ISA", "avx2", 1);
  CHECK(x86_effective_isa(X86Options{}) == X86Isa::kAvx2);
  unsetenv("VITRT_MAX_ISA");
  CHECK(x86_effective_isa(X86Options{}) == x86_detect_isa());
}

TEST_CASE("x86 backend matches PyTorch and the reference on every op case, every ISA, 1 and 2 threads") {
  auto ref = create_reference_backend();
  int checked = 0;
  for (X86Isa isa : isa_levels()) {
    auto be = make_x86(isa);
    REQUIRE(be);
    for (int threads : {1, 2}) {
      for (const OpCase& c : all_cases()) {
        INFO("case ", c.name, " isa ", std::string(x86_isa_name(isa)), " threads ", threads);
        ThreadedOpRunner r;
        Status s = r.plan(*be, c.type, c.attrs, c.input_ptrs(), c.constant_flags(), threads, c.name);
        REQUIRE_MESSAGE(s.ok(), c.name, ": plan: ", s.message());
        CHECK(r.planned_output_shape() == c.out_shape);
        HostTensor out;
        s = r.run(c.input_ptrs(), &out);
        REQUIRE_MESSAGE(s.ok(), c.name, ": run: ", s.message());
        const Comparison cmp = compare_to_reference(out.data, c.expected64, c.expected32);
        CHECK_MESSAGE(cmp.ok, c.name, " [", std::string(x86_isa_name(isa)), ", ", threads,
                      "t]: ", cmp.message);
        if (std::getenv("VITRT_OPS_VERBOSE")) MESSAGE(c.name, ": ", cmp.message);
        // Against the reference backend: both within the PyTorch-derived tolerance of float64, so within 2x
        // of each other.
        ThreadedOpRunner rr;
        REQUIRE(rr.plan(*ref, c.type, c.attrs, c.input_ptrs(), c.constant_flags(), 1, c.name).ok());
        HostTensor ref_out;
        REQUIRE(rr.run(c.input_ptrs(), &ref_out).ok());
        std::string msg;
        CHECK_MESSAGE(close(out.data, ref_out.data, 2 * cmp.tolerance, &msg), c.name,
                      " vs ref backend: ", msg);
        // may_inplace is the same contract as the reference's.
        CHECK_MESSAGE(r.info().may_inplace == rr.info().may_inplace, c.name, ": may_inplace");
        if (r.info().may_inplace) {
          HostTensor out2;
          s = r.run(c.input_ptrs(), &out2, nullptr, /*inplace=*/true);
          REQUIRE_MESSAGE(s.ok(), c.name, ": in-place run: ", s.message());
          CHECK_MESSAGE(out2.data == out.data, c.name, ": in-place result differs");
        }
        ++checked;
      }
    }
  }
  MESSAGE("checked ", checked, " (case, isa, threads) runs");
}

TEST_CASE("x86 backend runs a smaller batch than planned") {
  int checked = 0;
  for (X86Isa isa : isa_levels()) {
    auto be = make_x86(isa);
    for (int threads : {1, 2}) {
      for (const OpCase& c : all_cases()) {
        if (!c.batchable) continue;
        INFO("case ", c.name, " isa ", std::string(x86_isa_name(isa)), " threads ", threads);
        ThreadedOpRunner r;
        REQUIRE(r.plan(*be, c.type, c.attrs, c.input_ptrs(), c.constant_flags(), threads, c.name).ok());
        std::vector<HostTensor> small(c.inputs.size());
        std::vector<const HostTensor*> ptrs;
        for (size_t i = 0; i < c.inputs.size(); ++i) {
          if (!c.inputs[i].present) {
            ptrs.push_back(nullptr);
            continue;
          }
          small[i] = c.inputs[i].batched ? first_item(c.inputs[i].tensor) : c.inputs[i].tensor;
          ptrs.push_back(&small[i]);
        }
        HostTensor out;
        Status s = r.run(ptrs, &out);
        REQUIRE_MESSAGE(s.ok(), c.name, ": batch-1 run: ", s.message());
        Shape want = c.out_shape;
        want[0] = 1;
        CHECK(out.shape == want);
        const size_t n = static_cast<size_t>(want.numel());
        std::vector<double> e64(c.expected64.begin(), c.expected64.begin() + n);
        std::vector<double> e32(c.expected32.begin(), c.expected32.begin() + n);
        Comparison cmp = compare_to_reference(out.data, e64, e32);
        CHECK_MESSAGE(cmp.ok, c.name, " (batch 1): ", cmp.message);
        ++checked;
      }
    }
  }
  CHECK(checked > 50);
  MESSAGE("checked ", checked, " batch-1 runs");
}

TEST_CASE("x86 backend rejects an output shape that does not match the inputs") {
  auto be = make_x86(x86_detect_isa());
  for (const OpCase& c : all_cases()) {
    INFO("case ", c.name);
    ThreadedOpRunner r;
    REQUIRE(r.plan(*be, c.type, c.attrs, c.input_ptrs(), c.constant_flags(), 2, c.name).ok());
    Shape bad = c.out_shape;
    if (bad.rank == 0)
      bad = Shape{2};  // a 0-d output (sum_all, max_all): a 1-d shape instead
    else
      bad.dims[bad.rank - 1] += 1;
    Status s = r.run(c.input_ptrs(), nullptr, &bad);
    CHECK_MESSAGE(!s.ok(), c.name, ": a wrong output shape was accepted");
  }
}

// ---- odd shapes, against the reference backend ----

struct Synthetic {
  std::string name;
  OpType type;
  OpAttrs attrs;
  std::vector<HostTensor> inputs;
  std::vector<bool> constant;
};

std::vector<Synthetic> synthetic_cases() {
  std::mt19937 rng(7);
  std::vector<Synthetic> v;
  auto attn = [&](const char* name, AttentionInputs l, int64_t b, int64_t nq, int64_t nk, int64_t heads,
                  int64_t d) {
    SoftmaxAttentionAttrs a;
    a.num_heads = static_cast<int32_t>(heads);
    a.scale = 1.0f / std::sqrt(static_cast<float>(d));
    a.inputs = l;
    const int64_t c = heads * d;
    Synthetic s{name, OpType::kSoftmaxAttention, a, {}, {}};
    if (l == AttentionInputs::kQkvPacked) {
      s.inputs.push_back(random_tensor(Shape{b, nq, 3 * c}, rng));
    } else if (l == AttentionInputs::kQKvPacked) {
      s.inputs.push_back(random_tensor(Shape{b, nq, c}, rng));
      s.inputs.push_back(random_tensor(Shape{b, nk, 2 * c}, rng));
    } else {
      s.inputs.push_back(random_tensor(Shape{b, nq, c}, rng));
      s.inputs.push_back(random_tensor(Shape{b, nk, c}, rng));
      s.inputs.push_back(random_tensor(Shape{b, nk, c}, rng));
    }
    s.constant.assign(s.inputs.size(), false);
    v.push_back(std::move(s));
  };
  attn("attn_long_keys_online", AttentionInputs::kSeparate, 2, 37, 1100, 2, 32);  // > 2 key blocks
  attn("attn_d20", AttentionInputs::kQkvPacked, 3, 33, 33, 3, 20);                // d not a vector multiple
  attn("attn_d7_nq1", AttentionInputs::kQKvPacked, 1, 1, 5, 5, 7);
  attn("attn_deit_b3", AttentionInputs::kQkvPacked, 3, 197, 197, 3, 64);
  attn("attn_pvt_s1", AttentionInputs::kQKvPacked, 2, 3136, 49, 1, 32);
  // Long sequences: 3 key blocks of the online softmax (the last one short and not a whole Kᵀ panel), query
  // blocks with a row tail; d = 7 packs V, d = 64 reads it in place.
  attn("attn_long_d7", AttentionInputs::kQkvPacked, 1, 1037, 1037, 1, 7);
  attn("attn_long_d64_b2", AttentionInputs::kSeparate, 2, 1037, 1037, 1, 64);
  attn("attn_long_d80_heads2", AttentionInputs::kQKvPacked, 1, 301, 1037, 2, 80);  // a 64 + 16 column tail
  auto linear = [&](const char* name, Shape x, int64_t n, Activation act, bool bias) {
    const int64_t k = x.dims[x.rank - 1];
    Synthetic s{name, OpType::kLinear, LinearAttrs{act}, {}, {}};
    s.inputs.push_back(random_tensor(x, rng));
    s.inputs.push_back(random_tensor(Shape{n, k}, rng, 0.2f));
    if (bias) s.inputs.push_back(random_tensor(Shape{n}, rng));
    s.constant = {false, true, true};
    s.constant.resize(s.inputs.size());
    v.push_back(std::move(s));
  };
  linear("linear_odd", Shape{3, 7, 13}, 33, Activation::kGeluErf, true);
  linear("linear_big_tanh", Shape{4, 50, 192}, 768, Activation::kGeluTanh, true);
  linear("linear_relu_nobias", Shape{5, 17}, 9, Activation::kRelu, false);
  auto ln = [&](const char* name, Shape x) {
    Synthetic s{name, OpType::kLayerNorm, LayerNormAttrs{1e-6f}, {}, {}};
    const int64_t c = x.dims[x.rank - 1];
    s.inputs.push_back(random_tensor(x, rng, 3.0f));
    s.inputs.push_back(random_tensor(Shape{c}, rng));
    s.inputs.push_back(random_tensor(Shape{c}, rng));
    s.constant = {false, true, true};
    v.push_back(std::move(s));
  };
  ln("ln_c37", Shape{3, 11, 37});
  ln("ln_c1000", Shape{2, 300, 1000});
  auto bin = [&](const char* name, OpType t, Shape a, Shape b) {
    Synthetic s{name, t, NoAttrs{}, {random_tensor(a, rng), random_tensor(b, rng)}, {false, false}};
    v.push_back(std::move(s));
  };
  bin("add_big_same", OpType::kAdd, Shape{4, 197, 192}, Shape{4, 197, 192});
  bin("add_pos_embed", OpType::kAdd, Shape{4, 197, 192}, Shape{1, 197, 192});
  bin("mul_left_row", OpType::kMul, Shape{37}, Shape{3, 5, 37});
  bin("add_col_bcast", OpType::kAdd, Shape{3, 64, 1}, Shape{3, 64, 33});
  // One value per channel ([C,1,...] against [N,C,D...]: the threaded plane path), for PRelu's slope as
  // nn.PReLU exports it and for Add / Mul; PRelu against a scalar, a row, a general broadcast, and with x the
  // smaller operand (never swapped: PRelu is not commutative).
  bin("prelu_channel", OpType::kPRelu, Shape{3, 13, 5, 7}, Shape{13, 1, 1});
  bin("prelu_channel_big", OpType::kPRelu, Shape{2, 64, 28, 28}, Shape{64, 1, 1});
  bin("prelu_scalar", OpType::kPRelu, Shape{2, 37, 11}, Shape{1});
  bin("prelu_rows", OpType::kPRelu, Shape{3, 5, 37}, Shape{37});
  bin("prelu_general", OpType::kPRelu, Shape{3, 5, 1, 7}, Shape{5, 4, 1});
  bin("prelu_x_smaller", OpType::kPRelu, Shape{37}, Shape{3, 5, 37});
  bin("add_channel_bias", OpType::kAdd, Shape{2, 16, 9, 9}, Shape{1, 16, 1, 1});
  bin("mul_channel_rank3", OpType::kMul, Shape{5, 6, 33}, Shape{6, 1});
  auto gelu = [&](const char* name, int64_t n, GeluApproximation g) {
    Synthetic s{name, OpType::kGelu, GeluAttrs{g}, {random_tensor(Shape{1, n}, rng, 4.0f)}, {false}};
    v.push_back(std::move(s));
  };
  gelu("gelu_erf_odd", 10007, GeluApproximation::kErf);
  gelu("gelu_tanh_odd", 37, GeluApproximation::kTanh);
  auto conv = [&](const char* name, Shape x, int64_t cout, int64_t k, int s_, int p, int g) {
    Conv2dAttrs a;
    a.stride_h = a.stride_w = s_;
    a.pad_h = a.pad_w = p;
    a.groups = g;
    Synthetic s{name, OpType::kConv2d, a, {}, {}};
    s.inputs.push_back(random_tensor(x, rng));
    s.inputs.push_back(random_tensor(Shape{cout, x.dims[1] / g, k, k}, rng, 0.2f));
    s.inputs.push_back(random_tensor(Shape{cout}, rng));
    s.constant = {false, true, true};
    v.push_back(std::move(s));
  };
  conv("conv_dw3_b3", Shape{3, 32, 56, 56}, 32, 3, 1, 1, 32);
  conv("conv_dw3_s2_odd", Shape{2, 8, 15, 13}, 8, 3, 2, 1, 8);
  conv("conv_patch7_s4", Shape{2, 3, 64, 64}, 32, 7, 4, 3, 1);
  conv("conv_sr8", Shape{2, 32, 56, 56}, 32, 8, 8, 0, 1);
  conv("conv_sr2_odd", Shape{2, 16, 7, 7}, 16, 2, 2, 0, 1);
  return v;
}

TEST_CASE(
    "x86 backend matches the reference on odd shapes (poisoned outputs, 1 and 2 threads, smaller batch)") {
  auto ref = create_reference_backend();
  for (const Synthetic& sc : synthetic_cases()) {
    std::vector<const HostTensor*> ptrs;
    for (const auto& t : sc.inputs) ptrs.push_back(&t);
    ThreadedOpRunner rr;
    REQUIRE(rr.plan(*ref, sc.type, sc.attrs, ptrs, sc.constant, 1, sc.name).ok());
    HostTensor ref_out;
    REQUIRE(rr.run(ptrs, &ref_out).ok());
    double scale = 1.0;
    for (float x : ref_out.data) scale = std::fmax(scale, std::fabs(x));
    const double tol = 2e-5 * scale;
    for (X86Isa isa : isa_levels()) {
      auto be = make_x86(isa);
      for (int threads : {1, 2}) {
        INFO("case ", sc.name, " isa ", std::string(x86_isa_name(isa)), " threads ", threads);
        ThreadedOpRunner r;
        Status s = r.plan(*be, sc.type, sc.attrs, ptrs, sc.constant, threads, sc.name);
        REQUIRE_MESSAGE(s.ok(), s.message());
        HostTensor out;
        s = r.run(ptrs, &out);
        REQUIRE_MESSAGE(s.ok(), s.message());
        std::string msg;
        CHECK_MESSAGE(close(out.data, ref_out.data, tol, &msg), sc.name, ": ", msg);
        // Batch 1 of a batched plan: the first item of every batched (non-constant, rank >= 2) input.
        if (sc.inputs[0].shape.rank >= 3 && sc.inputs[0].shape[0] > 1) {
          std::vector<HostTensor> small;
          small.reserve(sc.inputs.size());
          std::vector<const HostTensor*> sp;
          for (size_t i = 0; i < sc.inputs.size(); ++i) {
            const bool batched = !sc.constant[i] && sc.inputs[i].shape.rank >= 3 &&
                                 sc.inputs[i].shape[0] == sc.inputs[0].shape[0];
            small.push_back(batched ? first_item(sc.inputs[i]) : sc.inputs[i]);
            sp.push_back(&small.back());
          }
          HostTensor o1;
          s = r.run(sp, &o1);
          REQUIRE_MESSAGE(s.ok(), s.message());
          std::vector<float> want(ref_out.data.begin(), ref_out.data.begin() + o1.data.size());
          CHECK_MESSAGE(close(o1.data, want, tol, &msg), sc.name, " (batch 1): ", msg);
        }
      }
    }
  }
}

}  // namespace
}  // namespace test
}  // namespace vitrt
