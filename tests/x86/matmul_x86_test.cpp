// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// MatMul on the x86 backend (backends/cpu/x86/matmul.cpp, the packed GEMM) against the reference kernel on
// odd shapes: M, N, K of 1, 7, 33 and 197, batch axes broadcast on either side or both, batch dims of 1 on
// either side, a constant a (Linformer's E · X[b]), a constant b (x·W, with and without batch axes), both at
// run time; every ISA the machine has, 1, 2 and 3 threads (with the kernel's minimum work per thread and with
// a minimum of 1, so that every shape runs the split), and a smaller batch than planned. Outputs and
// workspace are poisoned with NaN by the runner. The kernel sums each element over k in order with one FMA
// a step, so it must equal that chain exactly (computed here with std::fma), and the reference (separate
// multiply and add) within the rounding of K terms. (MatMul's operands have rank >= 2: 1-D operands are
// reshaped by the ONNX importer, so there is no 1-D case here.)
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "x86_test_util.h"

namespace vitrt {
namespace test {
namespace {

struct Case {
  Shape a, b;
  bool const_a = false, const_b = false;
  int shrink = -1;  // input whose first item alone is also run (a smaller batch than planned), or -1
};

// The output index's offset into an operand of batch shape `s` (right-aligned, size-1 axes broadcast).
int64_t operand_slice(const Shape& out_batch, int64_t item, const Shape& s) {
  int64_t off = 0, stride = 1;
  for (int i = out_batch.rank - 1, si = s.rank - 1; i >= 0; --i, --si) {
    const int64_t idx = item % out_batch.dims[i];
    item /= out_batch.dims[i];
    if (si < 0) continue;
    if (s.dims[si] != 1) off += idx * stride;
    stride *= s.dims[si];
  }
  return off;
}

Shape batch_of(const Shape& s) {
  Shape b = s;
  b.rank = s.rank - 2;
  return b;
}

// y = a · b with one FMA a step over k in order, and the sum of |a·b| terms of each element (for the
// reference's rounding bound).
void fma_product(const HostTensor& a, const HostTensor& b, const Shape& y, std::vector<float>* out,
                 std::vector<double>* abs_sum) {
  const int64_t m = a.shape.dim(-2), k = a.shape.dim(-1), n = b.shape.dim(-1);
  const Shape yb = batch_of(y);
  out->assign(static_cast<size_t>(y.numel()), 0.0f);
  abs_sum->assign(out->size(), 0.0);
  for (int64_t s = 0; s < yb.numel(); ++s) {
    const float* pa = a.data.data() + operand_slice(yb, s, batch_of(a.shape)) * m * k;
    const float* pb = b.data.data() + operand_slice(yb, s, batch_of(b.shape)) * k * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float acc = 0.0f;
        double sum = 0.0;
        for (int64_t t = 0; t < k; ++t) {
          acc = std::fma(pa[i * k + t], pb[t * n + j], acc);
          sum += std::fabs(double(pa[i * k + t]) * pb[t * n + j]);
        }
        (*out)[(s * m + i) * n + j] = acc;
        (*abs_sum)[(s * m + i) * n + j] = sum;
      }
  }
}

void check_run(OpRunner& x86, OpRunner& ref, const std::vector<const HostTensor*>& in) {
  HostTensor got, want;
  REQUIRE(ref.run(in, &want).ok());
  const Status st = x86.run(in, &got);
  REQUIRE_MESSAGE(st.ok(), st.message());
  REQUIRE(got.shape == want.shape);
  std::vector<float> fma;
  std::vector<double> abs_sum;
  fma_product(*in[0], *in[1], got.shape, &fma, &abs_sum);
  const double k = static_cast<double>(in[0]->shape.dim(-1));
  int64_t mismatches = 0;
  for (size_t i = 0; i < got.data.size(); ++i) {
    // Both round each of the K steps once or twice: within 2K units of 2^-24 of the sum of |terms|.
    const double tol = 2.0 * k * std::ldexp(1.0, -24) * abs_sum[i] + 1e-30;
    if (!(std::fabs(double(got.data[i]) - want.data[i]) <= tol) || got.data[i] != fma[i]) {
      if (++mismatches <= 5)
        CHECK_MESSAGE(false, "element ", i, ": x86 ", got.data[i], ", reference ", want.data[i],
                      ", fma chain ", fma[i]);
    }
  }
  CHECK(mismatches == 0);
}

void check_case(const Case& c, std::mt19937& rng) {
  const HostTensor a = random_tensor(c.a, rng), b = random_tensor(c.b, rng);
  const std::vector<const HostTensor*> in{&a, &b};
  const std::vector<bool> constant{c.const_a, c.const_b};
  HostTensor small;
  std::vector<const HostTensor*> in_small = in;
  if (c.shrink >= 0) {
    small = first_item(*in[c.shrink]);
    in_small[c.shrink] = &small;
  }
  auto reference = create_reference_backend();
  OpRunner ref;
  REQUIRE(ref.plan(*reference, OpType::kMatMul, NoAttrs{}, in, constant).ok());
  // The kernel's own minimum work per thread keeps these small products on one thread; a minimum of 1 makes
  // 2 and 3 threads split them, so that the threaded paths (folded rows, broadcasts, constant operands, a
  // smaller batch) are checked on every shape.
  for (X86Isa isa : isa_levels())
    for (int64_t min_macs : {int64_t{1}, X86Options{}.matmul_min_macs_per_thread}) {
      CAPTURE(static_cast<int>(isa));
      CAPTURE(min_macs);
      X86Options o;
      o.max_isa = isa;
      o.read_env = false;
      o.matmul_min_macs_per_thread = min_macs;
      auto backend = create_x86_backend(o);
      REQUIRE(backend != nullptr);
      for (int threads : {1, 2, 3}) {
        CAPTURE(threads);
        ThreadedOpRunner x86;
        const Status st = x86.plan(*backend, OpType::kMatMul, NoAttrs{}, in, constant, threads);
        REQUIRE_MESSAGE(st.ok(), st.message());
        // A run-time b is packed into the workspace: the GEMM kernel, not the reference (which needs none).
        if (!c.const_b) CHECK(x86.info().workspace_bytes > 0);
        check_run(x86, ref, in);
        if (c.shrink >= 0) check_run(x86, ref, in_small);
      }
    }
}

}  // namespace

TEST_CASE("x86 MatMul matches the reference and the in-order FMA chain on odd shapes") {
  std::mt19937 rng(2428);
  const Case cases[] = {
      {Shape{7, 33}, Shape{33, 197}},                            // one product, N over three 64-wide panels
      {Shape{1, 33}, Shape{33, 1}},                              // M = N = 1
      {Shape{197, 1}, Shape{1, 7}},                              // K = 1
      {Shape{1, 1}, Shape{1, 1}},                                // 1 × 1 × 1
      {Shape{2, 3, 7, 33}, Shape{33, 197}, false, false, 0},     // b shared: the batch folds into rows
      {Shape{3, 197, 33}, Shape{33, 7}, false, true, 0},         // x·W, constant b, folded
      {Shape{33, 197}, Shape{2, 197, 7}, true, false, 1},        // Linformer: constant a over b's batch
      {Shape{7, 197}, Shape{197, 33}, true, false},              // constant a, batch 1
      {Shape{2, 1, 7, 33}, Shape{1, 3, 33, 7}},                  // broadcast on both sides
      {Shape{1, 7, 33}, Shape{3, 33, 197}},                      // batch 1 on a
      {Shape{3, 7, 33}, Shape{1, 33, 7}},                        // batch 1 on b
      {Shape{3, 1, 197, 33}, Shape{2, 33, 1}, false, true},      // constant b with a batch, both broadcast
      {Shape{2, 33, 197}, Shape{2, 197, 7}, true, false},        // constant a with a batch
      {Shape{2, 3, 197, 7}, Shape{2, 3, 7, 197}},                // q·kᵀ: K = 7, 197 columns
      {Shape{2, 197, 197}, Shape{2, 197, 33}, false, false, 0},  // attn·v: one panel, many row chunks
      {Shape{2, 1, 3, 7, 33}, Shape{3, 33, 7}, false, true},     // rank 5 against a constant rank 3
      // 15M multiply-adds: above the kernel's minimum work per thread (4M) for 3 threads, so the split runs
      {Shape{3, 300, 129}, Shape{3, 129, 130}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.a.str());
    CAPTURE(c.b.str());
    CAPTURE(c.const_a);
    CAPTURE(c.const_b);
    check_case(c, rng);
  }
}

}  // namespace test
}  // namespace vitrt
