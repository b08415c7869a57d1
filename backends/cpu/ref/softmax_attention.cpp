// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// SoftmaxAttention: for each batch b, head h (channels c = h·d + j) and query row i:
//   s[j] = scale · q_i·k_j,  p = softmax(s) (max-subtracted),  out[i, h·d:(h+1)·d] = Σ_j p[j] · v_j.
// Q, K and V come as (q, k, v), (qkv) or (q, kv): see AttentionInputs. After them an optional score bias
// [B,h,Nq,Nk] is added to the scaled scores (s[j] = scale·q_i·k_j + bias[b,h,i,j]); with a second output the
// final pre-softmax scores s are written to it ([B,h,Nq,Nk], LaViT's VA layers). The workspace holds one head
// of K transposed (d x Nk, so the score row accumulates contiguous rows) and one row of scores (Nk), sized at
// plan time from the planned Nk; nothing is allocated in run.
#include <cmath>

#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"

namespace vitrt {
namespace ref {
namespace {

struct Operands {
  const float* q;
  const float* k;
  const float* v;
  int64_t q_stride, k_stride, v_stride;  // between tokens
  int64_t q_batch, k_batch, v_batch;     // between batch items
  int64_t nq, nk, c;
};

// Number of inputs the layout itself takes (the optional score bias follows them).
int layout_inputs(AttentionInputs layout) {
  return layout == AttentionInputs::kSeparate ? 3 : layout == AttentionInputs::kQkvPacked ? 1 : 2;
}

Operands locate(AttentionInputs layout, const KernelArgs& args) {
  Operands o{};
  const TensorRef& a = *args.src[0];
  o.nq = a.shape[1];
  if (layout == AttentionInputs::kQkvPacked) {
    o.c = a.shape[2] / 3;
    o.nk = o.nq;
    o.q = a.f32();
    o.k = o.q + o.c;
    o.v = o.q + 2 * o.c;
    o.q_stride = o.k_stride = o.v_stride = 3 * o.c;
    o.q_batch = o.k_batch = o.v_batch = o.nq * 3 * o.c;
  } else if (layout == AttentionInputs::kQKvPacked) {
    const TensorRef& kv = *args.src[1];
    o.c = a.shape[2];
    o.nk = kv.shape[1];
    o.q = a.f32();
    o.k = kv.f32();
    o.v = o.k + o.c;
    o.q_stride = o.c;
    o.k_stride = o.v_stride = 2 * o.c;
    o.q_batch = o.nq * o.c;
    o.k_batch = o.v_batch = o.nk * 2 * o.c;
  } else {
    o.c = a.shape[2];
    o.nk = args.src[1]->shape[1];
    o.q = a.f32();
    o.k = args.src[1]->f32();
    o.v = args.src[2]->f32();
    o.q_stride = o.k_stride = o.v_stride = o.c;
    o.q_batch = o.nq * o.c;
    o.k_batch = o.v_batch = o.nk * o.c;
  }
  return o;
}

class SoftmaxAttentionKernel final : public RefKernel {
 public:
  SoftmaxAttentionKernel(const KernelPlan& plan, const SoftmaxAttentionAttrs& a) : RefKernel(plan), a_(a) {}

  static int64_t workspace_floats(int64_t nk, int64_t d) { return nk * d + nk; }

 protected:
  Status compute(const KernelArgs& args) override {
    const Operands o = locate(a_.inputs, args);
    const int64_t heads = a_.num_heads, d = o.c / heads, nk = o.nk;
    const int64_t batch = args.src[0]->shape[0];
    VITRT_RETURN_IF_ERROR(check_workspace(args, workspace_floats(nk, d)));
    float* kt = static_cast<float*>(args.workspace);  // [d, nk]
    float* s = kt + d * nk;                           // [nk]
    const float scale = a_.scale;
    float* out = args.dst[0]->f32();
    const int nb = layout_inputs(a_.inputs);
    const float* bias = args.num_src > nb && args.src[nb] ? args.src[nb]->f32() : nullptr;
    float* scores = args.num_dst > 1 ? args.dst[1]->f32() : nullptr;
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t h = 0; h < heads; ++h) {
        const float* kb = o.k + b * o.k_batch + h * d;
        for (int64_t j = 0; j < nk; ++j)
          for (int64_t t = 0; t < d; ++t) kt[t * nk + j] = kb[j * o.k_stride + t];
        const float* vb = o.v + b * o.v_batch + h * d;
        for (int64_t i = 0; i < o.nq; ++i) {
          const float* qi = o.q + b * o.q_batch + i * o.q_stride + h * d;
          // Scores: s = q_i · Kᵀ, as a sum of d scaled rows of Kᵀ.
          for (int64_t j = 0; j < nk; ++j) s[j] = 0.0f;
          for (int64_t t = 0; t < d; ++t) {
            const float qv = qi[t];
            const float* kr = kt + t * nk;
            for (int64_t j = 0; j < nk; ++j) s[j] += qv * kr[j];
          }
          const int64_t row = ((b * heads + h) * o.nq + i) * nk;  // of bias and scores [B,h,Nq,Nk]
          for (int64_t j = 0; j < nk; ++j) s[j] *= scale;
          if (bias)
            for (int64_t j = 0; j < nk; ++j) s[j] += bias[row + j];
          if (scores)
            for (int64_t j = 0; j < nk; ++j) scores[row + j] = s[j];
          float mx = -INFINITY;
          for (int64_t j = 0; j < nk; ++j) mx = s[j] > mx ? s[j] : mx;
          double sum = 0.0;
          for (int64_t j = 0; j < nk; ++j) {
            s[j] = std::exp(s[j] - mx);
            sum += s[j];
          }
          const float r = static_cast<float>(1.0 / sum);
          float* oi = out + (b * o.nq + i) * o.c + h * d;
          for (int64_t t = 0; t < d; ++t) oi[t] = 0.0f;
          for (int64_t j = 0; j < nk; ++j) {
            const float pj = s[j] * r;
            const float* vr = vb + j * o.v_stride;
            for (int64_t t = 0; t < d; ++t) oi[t] += pj * vr[t];
          }
        }
      }
    }
    return Status::Ok();
  }

 private:
  SoftmaxAttentionAttrs a_;
};

}  // namespace

Status create_softmax_attention(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const SoftmaxAttentionAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  const std::string where = "SoftmaxAttention '" + plan.node->name + "'";
  if (a->inputs != AttentionInputs::kSeparate && a->inputs != AttentionInputs::kQkvPacked &&
      a->inputs != AttentionInputs::kQKvPacked)
    return bad_model(where + ": unknown input layout");
  if (a->num_heads < 1) return bad_model(where + ": num_heads must be >= 1");
  const Shape& q = plan.src_shapes[0];
  if (q.rank != 3 || plan.num_src < 1) return bad_model(where + ": bad planned shapes");
  int64_t c, nk;
  if (a->inputs == AttentionInputs::kQkvPacked) {
    c = q[2] / 3;
    nk = q[1];
  } else {
    if (plan.num_src < 2 || plan.src_shapes[1].rank != 3) return bad_model(where + ": bad planned shapes");
    c = q[2];
    nk = plan.src_shapes[1][1];
  }
  info->workspace_bytes =
      static_cast<size_t>(SoftmaxAttentionKernel::workspace_floats(nk, c / a->num_heads)) * sizeof(float);
  *kernel = std::make_unique<SoftmaxAttentionKernel>(plan, *a);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
