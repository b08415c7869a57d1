// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// FastformerAttention (docs/linear_attention.md, Fastformer): the math of core/ir/op_attrs.h
// (FastformerAttentionAttrs) in plain loops, every sum, softmax and product in double, rounded to float
// once at the output. For each batch item, with channel c in head c/d:
//   sq[n][h] = scale·(bq[h] + Σ_c Wq[h][c]·q[n][c]);   α = softmax over n of sq[·][h]
//   p[c]     = Σ_n α[c/d][n]·q[n][c]
//   sk[n][h] = scale·(bk[h] + Σ_c Wk[h][c]·(k[n][c]·p[c]));   β = softmax over n of sk[·][h]
//   g[c]     = Σ_n β[c/d][n]·(k[n][c]·p[c])
//   dst[n][c] = g[c]·q[n][c]
// Workspace (doubles): scores [N][h], p [C], g [C].
#include <cmath>

#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "backends/operand_check.h"
#include "ops/fastformer_attention_geometry.h"

namespace vitrt {
namespace ref {
namespace {

int64_t workspace_doubles(const FastformerGeometry& g) {
  return g.n * g.heads + 2 * g.c;
}

// scores[n][h] = exp(s[n][h] − max_n s[·][h]) / Σ_n exp(...): the softmax over tokens, per head, in place.
void softmax_over_tokens(double* scores, int64_t n, int64_t heads) {
  for (int64_t h = 0; h < heads; ++h) {
    double mx = -INFINITY;
    for (int64_t i = 0; i < n; ++i) mx = std::fmax(mx, scores[i * heads + h]);
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      const double e = std::exp(scores[i * heads + h] - mx);
      scores[i * heads + h] = e;
      sum += e;
    }
    for (int64_t i = 0; i < n; ++i) scores[i * heads + h] /= sum;
  }
}

class FastformerAttentionKernel final : public RefKernel {
 public:
  FastformerAttentionKernel(const KernelPlan& plan, const FastformerAttentionAttrs& a)
      : RefKernel(plan), a_(a) {}

 protected:
  Status compute(const KernelArgs& args) override {
    const Shape* shapes[kMaxOpInputs] = {};
    run_src_shapes(args, shapes);
    FastformerGeometry s;
    const Status decoded = decode_fastformer_geometry(a_, shapes, args.num_src, &s);
    if (!decoded.ok()) return fail(decoded.message());
    VITRT_RETURN_IF_ERROR(check_workspace(args, 2 * workspace_doubles(s)));
    double* scores = static_cast<double*>(args.workspace);
    double* p = scores + s.n * s.heads;
    double* g = p + s.c;
    const float* wq = args.src[2]->f32();
    const float* bq = args.src[3]->f32();
    const float* wk = args.src[4]->f32();
    const float* bk = args.src[5]->f32();
    const double scale = a_.scale;
    for (int64_t b = 0; b < s.batch; ++b) {
      const float* q = args.src[0]->f32() + b * s.n * s.c;
      const float* k = args.src[1]->f32() + b * s.n * s.c;
      float* dst = args.dst[0]->f32() + b * s.n * s.c;
      // α and the pooled query p.
      for (int64_t i = 0; i < s.n; ++i)
        for (int64_t h = 0; h < s.heads; ++h) {
          double acc = bq[h];
          for (int64_t c = 0; c < s.c; ++c) acc += static_cast<double>(wq[h * s.c + c]) * q[i * s.c + c];
          scores[i * s.heads + h] = scale * acc;
        }
      softmax_over_tokens(scores, s.n, s.heads);
      for (int64_t c = 0; c < s.c; ++c) {
        double acc = 0.0;
        for (int64_t i = 0; i < s.n; ++i) acc += scores[i * s.heads + c / s.d] * q[i * s.c + c];
        p[c] = acc;
      }
      // β over qk = k∘p and the pooled key g.
      for (int64_t i = 0; i < s.n; ++i)
        for (int64_t h = 0; h < s.heads; ++h) {
          double acc = bk[h];
          for (int64_t c = 0; c < s.c; ++c) acc += wk[h * s.c + c] * (k[i * s.c + c] * p[c]);
          scores[i * s.heads + h] = scale * acc;
        }
      softmax_over_tokens(scores, s.n, s.heads);
      for (int64_t c = 0; c < s.c; ++c) {
        double acc = 0.0;
        for (int64_t i = 0; i < s.n; ++i) acc += scores[i * s.heads + c / s.d] * (k[i * s.c + c] * p[c]);
        g[c] = acc;
      }
      // "query = value": the pooled key scales every query token.
      for (int64_t i = 0; i < s.n; ++i)
        for (int64_t c = 0; c < s.c; ++c) dst[i * s.c + c] = static_cast<float>(g[c] * q[i * s.c + c]);
    }
    return Status::Ok();
  }

 private:
  FastformerAttentionAttrs a_;
};

}  // namespace

Status create_fastformer_attention(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel,
                                   KernelInfo* info) {
  const FastformerAttentionAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  const Shape* shapes[kMaxOpInputs] = {};
  planned_src_shapes(plan, shapes);
  FastformerGeometry g;
  Status s = decode_fastformer_geometry(*a, shapes, plan.num_src, &g);
  if (!s.ok()) return s.with_context("FastformerAttention '" + plan.node->name + "'");
  info->workspace_bytes = static_cast<size_t>(workspace_doubles(g)) * sizeof(double);
  *kernel = std::make_unique<FastformerAttentionKernel>(plan, *a);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
