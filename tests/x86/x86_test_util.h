// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// What the x86 backend's tests share: OpRunner (tests/ops/op_test_util.h) planned and run with a given thread
// count, the backend at each ISA level the machine has, random inputs, batch item 0 of a tensor.
#include <random>
#include <vector>

#include "backends/cpu/x86/x86_backend.h"
#include "ops/op_cases.h"

namespace vitrt {
namespace test {

class ThreadedOpRunner : public OpRunner {
 public:
  Status plan(Backend& backend, OpType type, const OpAttrs& attrs,
              const std::vector<const HostTensor*>& inputs, const std::vector<bool>& constant, int threads,
              const std::string& name = "test_op") {
    set_threads(threads);
    return OpRunner::plan(backend, type, attrs, inputs, constant, name);
  }
};

// The ISA levels this machine can run, best first (AVX-512, AVX2).
inline std::vector<X86Isa> isa_levels() {
  std::vector<X86Isa> v;
  const X86Isa top = x86_detect_isa();
  if (top >= X86Isa::kAvx512) v.push_back(X86Isa::kAvx512);
  if (top >= X86Isa::kAvx2) v.push_back(X86Isa::kAvx2);
  return v;
}

// The cpu backend capped at `isa`, ignoring VITRT_* environment overrides.
inline std::unique_ptr<Backend> make_x86(X86Isa isa) {
  X86Options o;
  o.max_isa = isa;
  o.read_env = false;  // VITRT_X86_ONEDNN still applies: the backend reads it (read_env_tuning)
  return create_x86_backend(o);
}

// Normal(offset, scale²) values.
inline HostTensor random_tensor(const Shape& s, std::mt19937& rng, float scale = 1.0f, float offset = 0.0f) {
  HostTensor t;
  t.shape = s;
  std::normal_distribution<float> d(0.f, scale);
  t.data.resize(static_cast<size_t>(s.numel()));
  for (float& v : t.data) v = offset + d(rng);
  return t;
}

// Batch item 0 of t, as a batch of one.
inline HostTensor first_item(const HostTensor& t) {
  HostTensor r;
  r.shape = t.shape;
  r.shape[0] = 1;
  r.data.assign(t.data.begin(), t.data.begin() + r.shape.numel());
  return r;
}

}  // namespace test
}  // namespace vitrt
