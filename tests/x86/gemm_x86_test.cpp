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

#include "backends/cpu/x86/x86_backend.h"
#include "x86_test_util.h"

namespace vitrt {
namespace test {
namespace {

std::vector<X86Isa> gemm_isa_levels() {
  std::vector<X86Isa> v;
  const X86Isa top = x86_detect_isa();
  if (top >= X86Isa::kAvx512) v.push_back(X86Isa::kAvx512);
  if (top >= X86Isa::kAvx2) v.push_back(X86Isa::kAvx2);
  return v;
}

std::unique_ptr<Backend> x86_at(X86Isa isa) {
  X86Options o;
  o.max_isa = isa;
  o.read_env = false;  // VITRT_X86_ONEDNN still applies: the factories read it themselves
  return create_x86_backend(o);
}

HostTensor random_tensor(const Shape& s, std::mt19937& rng, float scale) {
  HostTensor t;
  t.shape = s;
  std::normal_distribution<float> d(0.f, scale);
  t.data.resize(static_cast<size_t>(s.numel()));
  for (float& v : t.data) v = d(rng);
  return t;
}

HostTensor absolute(const HostTensor& t) {
  HostTensor r = t;
  for (float& v : r.data) v = std::fabs(v);
  return r;
}

const Activation kActivations[] = {Activation::kNone, Activation::kRelu, Activation::kGeluErf,
                                   Activation::kGeluTanh};

const char* act_name(Activation a) {
  switch (a) {
    case Activation::kNone:
      return "none";
    case Activation::kRelu:
      return "relu";
    case Activation::kGeluErf:
      return "gelu_erf";
    default:
      return "gelu_tanh";
  }
}

struct GemmCase {
  std::string name;
  OpType type;
  OpAttrs attrs;
  std::vector<HostTensor> inputs;  // absent optional inputs have an empty shape
  std::vector<bool> constant;
  OpAttrs bound_attrs;  // the same op without activation, for the error bound
};

std::vector<const HostTensor*> pointers(const std::vector<HostTensor>& v) {
  std::vector<const HostTensor*> p;
  for (const HostTensor& t : v) p.push_back(t.shape.rank > 0 ? &t : nullptr);
  return p;
}

// Runs c on `backend`, planned with `threads`.
HostTensor run_on(Backend& backend, const GemmCase& c, const OpAttrs& attrs,
                  const std::vector<const HostTensor*>& in, int threads) {
  ThreadedOpRunner r;
  Status s = r.plan(backend, c.type, attrs, in, c.constant, threads, c.name);
  REQUIRE_MESSAGE(s.ok(), c.name, ": plan: ", s.message());
  HostTensor out;
  s = r.run(in, &out);
  REQUIRE_MESSAGE(s.ok(), c.name, ": run: ", s.message());
  return out;
}

// The reference's result and, per element, a rounding bound: 1e-5 × (Σ|x·w| + |b| + |residual|), which the
// reference computes from the absolute values of the same inputs with no activation (GELU and ReLU are
// 1.13-Lipschitz at most, so the bound holds through them).
void check_case(const GemmCase& c) {
  auto ref = create_reference_backend();
  const auto in = pointers(c.inputs);
  const HostTensor want = run_on(*ref, c, c.attrs, in, 1);
  std::vector<HostTensor> abs_inputs;
  for (const HostTensor& t : c.inputs) abs_inputs.push_back(absolute(t));
  const HostTensor bound = run_on(*ref, c, c.bound_attrs, pointers(abs_inputs), 1);
  for (X86Isa isa : gemm_isa_levels()) {
    auto be = x86_at(isa);
    REQUIRE(be);
    for (int threads : {1, 2}) {
      const std::string isa_name = x86_isa_name(isa);
      INFO(c.name, " isa ", isa_name, " threads ", threads);
      const HostTensor got = run_on(*be, c, c.attrs, in, threads);
      REQUIRE(got.shape == want.shape);
      size_t bad = 0, first = 0;
      for (size_t i = 0; i < got.data.size(); ++i) {
        const double tol = 1e-5 * (1.0 + bound.data[i]);
        if (!(std::fabs(static_cast<double>(got.data[i]) - want.data[i]) <= tol) && bad++ == 0) first = i;
      }
      CHECK_MESSAGE(bad == 0, c.name, " [", isa_name, ", ", threads, "t]: ", bad, " of ", got.data.size(),
                    " elements off; first ", first, ": ", got.data[first], " vs ref ", want.data[first]);
    }
  }
}

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
    const Activation act = kActivations[n_cases % 4];
    check_case(linear_case(rng, f.items, f.tokens, f.k, f.n, act, n_cases % 3 != 0, n_cases % 5 == 0));
    ++n_cases;
  }
  MESSAGE("checked ", n_cases, " Linear cases");
}

GemmCase conv_case(std::mt19937& rng, int64_t b, int64_t cin, int64_t h, int64_t w, int64_t cout, int64_t kh,
                   int64_t kw, int stride, int pad, int dil, int groups, Activation act, bool bias) {
  GemmCase c;
  c.name = "conv b" + std::to_string(b) + " " + std::to_string(cin) + "x" + std::to_string(h) + "x" +
           std::to_string(w) + " -> " + std::to_string(cout) + " k" + std::to_string(kh) + "x" +
           std::to_string(kw) + " s" + std::to_string(stride) + " p" + std::to_string(pad) + " d" +
           std::to_string(dil) + " g" + std::to_string(groups) + " " + act_name(act) + (bias ? " bias" : "");
  c.type = OpType::kConv2d;
  Conv2dAttrs a;
  a.stride_h = a.stride_w = stride;
  a.pad_h = a.pad_w = pad;
  a.dilation_h = a.dilation_w = dil;
  a.groups = groups;
  a.activation = act;
  c.attrs = a;
  a.activation = Activation::kNone;
  c.bound_attrs = a;
  const int64_t k = cin / groups * kh * kw;
  c.inputs.push_back(random_tensor(Shape{b, cin, h, w}, rng, 1.0f));
  c.inputs.push_back(random_tensor(Shape{cout, cin / groups, kh, kw}, rng, 1.0f / std::sqrt(float(k))));
  if (bias) c.inputs.push_back(random_tensor(Shape{cout}, rng, 1.0f));
  c.constant = {false, true, true};
  c.constant.resize(c.inputs.size());
  return c;
}

TEST_CASE("cpu Conv2d (im2col + packed GEMM) matches the reference on the model stems and odd shapes") {
  std::mt19937 rng(77);
  int n_cases = 0;
  auto check = [&](int64_t b, int64_t cin, int64_t h, int64_t w, int64_t cout, int64_t kh, int64_t kw, int s,
                   int p, int d, int g) {
    const Activation act = kActivations[n_cases % 4];
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
  // Random ones.
  std::uniform_int_distribution<int> ch(1, 40), hw(5, 40), kern(1, 5), stride(1, 4), items(1, 9);
  for (int r = 0; r < 8; ++r) {
    const int64_t kh = kern(rng), kw = kern(rng), s = stride(rng), p = std::min<int64_t>(kh, kw) / 2;
    check(items(rng), ch(rng), hw(rng), hw(rng), ch(rng), kh, kw, static_cast<int>(s), static_cast<int>(p), 1,
          1);
  }
  MESSAGE("checked ", n_cases, " Conv2d cases");
}

}  // namespace
}  // namespace test
}  // namespace vitrt
