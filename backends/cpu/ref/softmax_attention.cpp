// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// SoftmaxAttention: for each batch b, head h (channels c = h·d + j) and query row i:
//   s[j] = scale · q_i·k_j,  p = softmax(s) (max-subtracted),  out[i, h·d:(h+1)·d] = Σ_j p[j] · v_j.
// Q, K and V come as (q, k, v), (qkv) or (q, kv), located by ops/softmax_attention_layout.h. After them an
// optional score bias [B,h,Nq,Nk] or [1,h,Nq,Nk] is added to the scaled scores (s[j] = scale·q_i·k_j +
// bias[b or 0,h,i,j]), then an optional mask [nW,Nq,Nk] (s[j] += mask[b mod nW,i,j]); with scale_on_q the
// scores are Σ_t fl(q_i[t]·scale)·k_j[t] instead. Cosine attention (qk_norm, head_scales): q_i and every k_j
// are divided by max(their L2 norm, eps) first, and head h's scores multiplied by head_scales[h]
// (ops/softmax_attention_cosine.h). With a second output the final pre-softmax scores s are
// written to it ([B,h,Nq,Nk], LaViT's VA layers). The
// workspace holds one head of K transposed (d x Nk, so the score row accumulates contiguous rows), one row
// of scores (Nk) and one normalised q row (d), sized at plan time from the planned Nk; nothing is allocated
// in run.
#include <cmath>

#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "backends/operand_check.h"
#include "ops/softmax_attention_cosine.h"
#include "ops/softmax_attention_layout.h"

namespace vitrt {
namespace ref {
namespace {

class SoftmaxAttentionKernel final : public RefKernel {
 public:
  SoftmaxAttentionKernel(const KernelPlan& plan, const SoftmaxAttentionAttrs& a) : RefKernel(plan), a_(a) {}

  static int64_t workspace_floats(int64_t nk, int64_t d) { return nk * d + nk + d; }

 protected:
  Status compute(const KernelArgs& args) override {
    const Shape* shapes[kMaxOpInputs] = {};
    run_src_shapes(args, shapes);
    SoftmaxAttentionLayout o;
    Status decoded = decode_softmax_attention_layout(a_, shapes, args.num_src, &o);
    if (!decoded.ok()) return fail(decoded.message());
    const int nb = softmax_attention_layout_inputs(a_.inputs);
    SoftmaxAttentionTerms terms;
    decoded = decode_softmax_attention_terms(o, nb, shapes, args.num_src, &terms);
    if (!decoded.ok()) return fail(decoded.message());
    const int64_t heads = o.heads, d = o.head_dim, nk = o.nk;
    const int64_t batch = o.batch;
    VITRT_RETURN_IF_ERROR(check_workspace(args, workspace_floats(nk, d)));
    float* kt = static_cast<float*>(args.workspace);  // [d, nk]
    float* s = kt + d * nk;                           // [nk]
    float* qn = s + nk;                               // [d]: q_i normalised (qk_norm)
    float* out = args.dst[0]->f32();
    const float* q = args.src[o.q_src]->f32() + o.q_off;
    const float* k = args.src[o.k_src]->f32() + o.k_off;
    const float* v = args.src[o.v_src]->f32() + o.v_off;
    const float* bias = terms.bias ? args.src[nb]->f32() : nullptr;
    const float* mask = terms.mask_windows > 0 ? args.src[nb + 1]->f32() : nullptr;
    const float q_scale = a_.scale_on_q ? a_.scale : 1.0f;  // exact when 1
    float* scores = args.num_dst > 1 ? args.dst[1]->f32() : nullptr;
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t h = 0; h < heads; ++h) {
        const float* kb = k + b * o.k_batch + h * d;
        const float scale = softmax_attention_head_scale(a_, h);
        for (int64_t j = 0; j < nk; ++j) {
          if (a_.qk_norm) {
            l2_normalize_row(kb + j * o.k_stride, d, a_.qk_norm_eps, qn);  // qn as scratch
            for (int64_t t = 0; t < d; ++t) kt[t * nk + j] = qn[t];
          } else {
            for (int64_t t = 0; t < d; ++t) kt[t * nk + j] = kb[j * o.k_stride + t];
          }
        }
        const float* vb = v + b * o.v_batch + h * d;
        for (int64_t i = 0; i < o.nq; ++i) {
          const float* qi = q + b * o.q_batch + i * o.q_stride + h * d;
          if (a_.qk_norm) {
            l2_normalize_row(qi, d, a_.qk_norm_eps, qn);
            qi = qn;
          }
          // Scores: s = q_i · Kᵀ, as a sum of d scaled rows of Kᵀ.
          for (int64_t j = 0; j < nk; ++j) s[j] = 0.0f;
          for (int64_t t = 0; t < d; ++t) {
            const float qv = qi[t] * q_scale;
            const float* kr = kt + t * nk;
            for (int64_t j = 0; j < nk; ++j) s[j] += qv * kr[j];
          }
          const int64_t row = ((b * heads + h) * o.nq + i) * nk;  // of scores [B,h,Nq,Nk]
          if (!a_.scale_on_q)
            for (int64_t j = 0; j < nk; ++j) s[j] *= scale;
          if (bias) {
            const float* br = bias + b * terms.bias_batch + (h * o.nq + i) * nk;
            for (int64_t j = 0; j < nk; ++j) s[j] += br[j];
          }
          if (mask) {
            const float* mr = mask + ((b % terms.mask_windows) * o.nq + i) * nk;
            for (int64_t j = 0; j < nk; ++j) s[j] += mr[j];
          }
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
  const Shape* shapes[kMaxOpInputs] = {};
  planned_src_shapes(plan, shapes);
  SoftmaxAttentionLayout o;
  Status decoded = decode_softmax_attention_layout(*a, shapes, plan.num_src, &o);
  if (!decoded.ok()) return decoded.with_context("SoftmaxAttention '" + plan.node->name + "'");
  info->workspace_bytes =
      static_cast<size_t>(SoftmaxAttentionKernel::workspace_floats(o.nk, o.head_dim)) * sizeof(float);
  *kernel = std::make_unique<SoftmaxAttentionKernel>(plan, *a);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
