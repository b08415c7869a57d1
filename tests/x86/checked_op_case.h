// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// A single op on random inputs, run on the reference backend and on the cpu backend at every ISA level the
// machine has (AVX-512, AVX2) with 1 and 2 threads, compared element by element against a rounding bound
// derived from the same op on the inputs' absolute values. OpRunner poisons outputs and workspace with NaN,
// so an element a kernel never writes fails. Used by the GEMM (Linear, Conv2d) and channels-last conv tests.
#include <doctest/doctest.h>

#include <cmath>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/x86/x86_backend.h"
#include "x86_test_util.h"

namespace vitrt {
namespace test {

inline HostTensor absolute(const HostTensor& t) {
  HostTensor r = t;
  for (float& v : r.data) v = std::fabs(v);
  return r;
}

inline constexpr Activation kActivations[] = {
    Activation::kNone, Activation::kRelu,      Activation::kGeluErf, Activation::kGeluTanh,
    Activation::kSilu, Activation::kHardSwish, Activation::kRelu6};
inline constexpr int kNumActivations = static_cast<int>(std::size(kActivations));

inline const char* act_name(Activation a) {
  switch (a) {
    case Activation::kNone:
      return "none";
    case Activation::kRelu:
      return "relu";
    case Activation::kGeluErf:
      return "gelu_erf";
    case Activation::kGeluTanh:
      return "gelu_tanh";
    case Activation::kSilu:
      return "silu";
    case Activation::kRelu6:
      return "relu6";
    default:
      return "hard_swish";
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

inline std::vector<const HostTensor*> pointers(const std::vector<HostTensor>& v) {
  std::vector<const HostTensor*> p;
  for (const HostTensor& t : v) p.push_back(t.shape.rank > 0 ? &t : nullptr);
  return p;
}

// Runs c on `backend`, planned with `threads`.
inline HostTensor run_on(Backend& backend, const GemmCase& c, const OpAttrs& attrs,
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
// reference computes from the absolute values of the same inputs with no activation (GELU, ReLU and SiLU
// are 1.13-Lipschitz at most, HardSwish 1.5: the bound, far above float rounding, holds through them).
inline void check_case(const GemmCase& c) {
  auto ref = create_reference_backend();
  const auto in = pointers(c.inputs);
  const HostTensor want = run_on(*ref, c, c.attrs, in, 1);
  std::vector<HostTensor> abs_inputs;
  for (const HostTensor& t : c.inputs) abs_inputs.push_back(absolute(t));
  const HostTensor bound = run_on(*ref, c, c.bound_attrs, pointers(abs_inputs), 1);
  for (X86Isa isa : isa_levels()) {
    auto be = make_x86(isa);
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

// A Conv2d case: src [b, cin, h, w] (channels_last: [b, h, w, cin]), weight [cout, cin / groups, kh, kw].
inline GemmCase conv_case(std::mt19937& rng, int64_t b, int64_t cin, int64_t h, int64_t w, int64_t cout,
                          int64_t kh, int64_t kw, int stride, int pad, int dil, int groups, Activation act,
                          bool bias, bool channels_last = false) {
  GemmCase c;
  c.name = std::string(channels_last ? "nhwc " : "") + "conv b" + std::to_string(b) + " " +
           std::to_string(cin) + "x" + std::to_string(h) + "x" + std::to_string(w) + " -> " +
           std::to_string(cout) + " k" + std::to_string(kh) + "x" + std::to_string(kw) + " s" +
           std::to_string(stride) + " p" + std::to_string(pad) + " d" + std::to_string(dil) + " g" +
           std::to_string(groups) + " " + act_name(act) + (bias ? " bias" : "");
  c.type = OpType::kConv2d;
  Conv2dAttrs a;
  a.stride_h = a.stride_w = stride;
  a.pad_h = a.pad_w = pad;
  a.dilation_h = a.dilation_w = dil;
  a.groups = groups;
  a.activation = act;
  a.channels_last = channels_last;
  c.attrs = a;
  a.activation = Activation::kNone;
  c.bound_attrs = a;
  const int64_t k = cin / groups * kh * kw;
  c.inputs.push_back(random_tensor(channels_last ? Shape{b, h, w, cin} : Shape{b, cin, h, w}, rng, 1.0f));
  c.inputs.push_back(random_tensor(Shape{cout, cin / groups, kh, kw}, rng, 1.0f / std::sqrt(float(k))));
  if (bias) c.inputs.push_back(random_tensor(Shape{cout}, rng, 1.0f));
  c.constant = {false, true, true};
  c.constant.resize(c.inputs.size());
  return c;
}

}  // namespace test
}  // namespace vitrt
