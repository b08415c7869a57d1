// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// ExternalAttention (docs/linear_attention.md, "External Attention"): per batch item and head, in the unfused
// graph's order on this backend: the logits as Linear computes them (linear_rows.h: bias, then products in
// input order, float), the softmax over the tokens as Softmax does (float exp, the sum in double, times
// float(1/sum)), the slot sums as ReduceSum does (double, rounded to float), + eps and the division in float,
// then the second Linear.
#include <cmath>

#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/linear_rows.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "backends/operand_check.h"
#include "common/checked_math.h"
#include "ops/external_attention_attrs.h"

namespace vitrt {
namespace ref {
namespace {

// Workspace floats: the head's tokens [N,dh], both transposed weights [dh,S] and [S,dh], the logits /
// attention [N,S] and the head's output [N,dh]. False when that overflows.
bool scratch_floats(const ExternalAttentionDims& d, int64_t* floats) {
  int64_t nd = 0, sd = 0, ns = 0;
  return checked_mul(d.tokens, d.head_dim, &nd) && checked_mul(d.slots, d.head_dim, &sd) &&
         checked_mul(d.tokens, d.slots, &ns) && checked_add(nd, nd, floats) &&
         checked_add(*floats, sd, floats) && checked_add(*floats, sd, floats) &&
         checked_add(*floats, ns, floats);
}

class ExternalAttentionKernel final : public RefKernel {
 public:
  ExternalAttentionKernel(const KernelPlan& plan, const ExternalAttentionAttrs& a) : RefKernel(plan), a_(a) {}

 protected:
  Status compute(const KernelArgs& args) override {
    const Shape* shapes[kMaxOpInputs] = {};
    run_src_shapes(args, shapes);
    ExternalAttentionDims d;
    const Status decoded = decode_external_attention(a_, shapes, args.num_src, &d);
    if (!decoded.ok()) return fail(decoded.message());
    int64_t floats = 0;
    if (!scratch_floats(d, &floats)) return fail("workspace size overflows");
    VITRT_RETURN_IF_ERROR(check_workspace(args, floats));
    const int64_t n = d.tokens, dh = d.head_dim, s = d.slots, c = d.channels;
    float* xh = static_cast<float*>(args.workspace);
    float* w0t = xh + n * dh;
    float* w1t = w0t + dh * s;
    float* attn = w1t + s * dh;
    float* oh = attn + n * s;
    transpose_weight(args.src[1]->f32(), s, dh, w0t);
    transpose_weight(args.src[3]->f32(), dh, s, w1t);
    const float* b0 = d.has_b0 ? args.src[2]->f32() : nullptr;
    const float* b1 = d.has_b1 ? args.src[4]->f32() : nullptr;
    const float* src = args.src[0]->f32();
    float* dst = args.dst[0]->f32();
    for (int64_t b = 0; b < d.batch; ++b) {
      for (int64_t h = 0; h < d.heads; ++h) {
        const float* x = src + b * n * c + h * dh;
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < dh; ++j) xh[i * dh + j] = x[i * c + j];
        linear_rows(xh, n, dh, w0t, s, b0, Activation::kNone, nullptr, attn);
        softmax_over_tokens(attn, n, s);
        normalise_slots(attn, n, s);
        linear_rows(attn, n, s, w1t, dh, b1, Activation::kNone, nullptr, oh);
        float* y = dst + b * n * c + h * dh;
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < dh; ++j) y[i * c + j] = oh[i * dh + j];
      }
    }
    return Status::Ok();
  }

 private:
  // Each slot's column of l [n,s] becomes its softmax over the n tokens (Softmax's arithmetic).
  static void softmax_over_tokens(float* l, int64_t n, int64_t s) {
    for (int64_t j = 0; j < s; ++j) {
      float mx = l[j];
      for (int64_t i = 1; i < n; ++i) mx = l[i * s + j] > mx ? l[i * s + j] : mx;
      double sum = 0.0;
      for (int64_t i = 0; i < n; ++i) {
        const float e = std::exp(l[i * s + j] - mx);
        l[i * s + j] = e;
        sum += e;
      }
      const float r = static_cast<float>(1.0 / sum);
      for (int64_t i = 0; i < n; ++i) l[i * s + j] *= r;
    }
  }

  // Each token's row a[n,:] divided by eps + its sum over the s slots (ReduceSum's double sum, then float).
  void normalise_slots(float* a, int64_t n, int64_t s) const {
    for (int64_t i = 0; i < n; ++i) {
      float* row = a + i * s;
      double sum = 0.0;
      for (int64_t j = 0; j < s; ++j) sum += row[j];
      const float denom = a_.eps + static_cast<float>(sum);
      for (int64_t j = 0; j < s; ++j) row[j] = row[j] / denom;
    }
  }

  ExternalAttentionAttrs a_;
};

}  // namespace

Status create_external_attention(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const ExternalAttentionAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  const Shape* shapes[kMaxOpInputs] = {};
  planned_src_shapes(plan, shapes);
  ExternalAttentionDims d;
  Status st = decode_external_attention(*a, shapes, plan.num_src, &d);
  if (!st.ok()) return st.with_context("ExternalAttention '" + plan.node->name + "'");
  int64_t floats = 0, bytes = 0;
  if (!scratch_floats(d, &floats) || !checked_mul(floats, static_cast<int64_t>(sizeof(float)), &bytes))
    return bad_model("ExternalAttention '" + plan.node->name + "': workspace size overflows");
  info->workspace_bytes = static_cast<size_t>(bytes);
  *kernel = std::make_unique<ExternalAttentionKernel>(plan, *a);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
