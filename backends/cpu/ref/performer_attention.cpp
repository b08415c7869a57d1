// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// PerformerAttention (core/ir/op_attrs.h; docs/linear_attention.md, Performer), plain loops per (batch, head)
// in lucidrains' order: the key features φ(k) [Nk][m], their sum over tokens and φ(k)ᵀ·v [m][d], then per
// query row φ(q), its dot product with the key sum and the output row. Every tensor torch materialises is
// rounded to float where torch rounds it (performer_features.h); each sum runs in double.
#include <algorithm>
#include <cmath>

#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/performer_features.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "backends/operand_check.h"
#include "common/checked_math.h"
#include "ops/performer_attention_geometry.h"

namespace vitrt {
namespace ref {
namespace {

class PerformerAttentionKernel final : public RefKernel {
 public:
  PerformerAttentionKernel(const KernelPlan& plan, const PerformerAttentionAttrs& a)
      : RefKernel(plan), a_(a) {}

  // Workspace floats: φ(k) [Nk][m], φ(k)ᵀ·v [m][d], Σ_n φ(k) [m], one row's u [m] and dn·x [d].
  static bool scratch_floats(const PerformerGeometry& g, int64_t* floats) {
    int64_t keys = 0, ctx = 0;
    return checked_mul(g.nk, g.m, &keys) && checked_mul(g.m, g.d, &ctx) && checked_add(keys, ctx, floats) &&
           checked_add(*floats, 2 * g.m + g.d, floats);
  }

 protected:
  Status compute(const KernelArgs& args) override {
    const Shape* shapes[kMaxOpInputs] = {};
    run_src_shapes(args, shapes);
    PerformerGeometry g;
    const Status decoded = decode_performer_geometry(a_, shapes, args.num_src, &g);
    if (!decoded.ok()) return fail(decoded.message());
    int64_t floats = 0;
    if (!scratch_floats(g, &floats)) return fail("workspace size overflows");
    VITRT_RETURN_IF_ERROR(check_workspace(args, floats));
    float* phik = static_cast<float*>(args.workspace);
    float* ctx = phik + g.nk * g.m;
    float* ksum = ctx + g.m * g.d;
    float* u = ksum + g.m;
    float* xs = u + g.m;
    const float* q = args.src[0]->f32();
    const float* k = args.src[1]->f32();
    const float* v = args.src[2]->f32();
    const float* w = args.src[3]->f32();
    float* dst = args.dst[0]->f32();
    const PerformerScalars sc = performer_scalars(g.d, g.m);
    const bool softmax = a_.kernel == PerformerKernel::kSoftmax;

    // u = (dn·x)·Wᵀ of one token row x (stride 1), and its g = dn²/2·‖x‖².
    auto project = [&](const float* x) {
      double sq = 0.0;
      for (int64_t t = 0; t < g.d; ++t) {
        xs[t] = sc.dn * x[t];
        sq += static_cast<double>(x[t] * x[t]);
      }
      for (int64_t j = 0; j < g.m; ++j) {
        double acc = 0.0;
        for (int64_t t = 0; t < g.d; ++t) acc += static_cast<double>(xs[t]) * w[j * g.d + t];
        u[j] = static_cast<float>(acc);
      }
      return performer_diag(static_cast<float>(sq), sc);
    };
    auto key_row = [&](int64_t b, int64_t h, int64_t n) { return k + (b * g.nk + n) * g.c + h * g.d; };
    // The largest u of the keys of item (b, h).
    auto key_max = [&](int64_t b, int64_t h) {
      float best = -INFINITY;
      for (int64_t n = 0; n < g.nk; ++n) {
        project(key_row(b, h, n));
        for (int64_t j = 0; j < g.m; ++j) best = std::max(best, u[j]);
      }
      return best;
    };
    float global_max = -INFINITY;
    if (softmax && a_.key_max == PerformerKeyMax::kGlobal)
      for (int64_t b = 0; b < g.batch; ++b)
        for (int64_t h = 0; h < g.heads; ++h) global_max = std::max(global_max, key_max(b, h));

    for (int64_t b = 0; b < g.batch; ++b) {
      for (int64_t h = 0; h < g.heads; ++h) {
        float kmax = 0.0f;
        if (softmax) kmax = a_.key_max == PerformerKeyMax::kGlobal ? global_max : key_max(b, h);
        for (int64_t n = 0; n < g.nk; ++n) {
          const float diag = project(key_row(b, h, n));
          float* row = phik + n * g.m;
          for (int64_t j = 0; j < g.m; ++j)
            row[j] = softmax ? performer_softmax_feature(u[j], diag, kmax, sc) : performer_relu_feature(u[j]);
        }
        for (int64_t j = 0; j < g.m; ++j) {
          double s = 0.0;
          for (int64_t n = 0; n < g.nk; ++n) s += phik[n * g.m + j];
          ksum[j] = static_cast<float>(s);
          for (int64_t e = 0; e < g.d; ++e) {
            double c = 0.0;
            for (int64_t n = 0; n < g.nk; ++n)
              c += static_cast<double>(phik[n * g.m + j]) * v[(b * g.nk + n) * g.c + h * g.d + e];
            ctx[j * g.d + e] = static_cast<float>(c);
          }
        }
        for (int64_t i = 0; i < g.nq; ++i) {
          const float diag = project(q + (b * g.nq + i) * g.c + h * g.d);
          float rmax = -INFINITY;
          for (int64_t j = 0; j < g.m; ++j) rmax = std::max(rmax, u[j]);
          for (int64_t j = 0; j < g.m; ++j)
            u[j] = softmax ? performer_softmax_feature(u[j], diag, rmax, sc) : performer_relu_feature(u[j]);
          double den = 0.0;
          for (int64_t j = 0; j < g.m; ++j) den += static_cast<double>(u[j]) * ksum[j];
          const float d_inv = 1.0f / static_cast<float>(den);
          float* out = dst + (b * g.nq + i) * g.c + h * g.d;
          for (int64_t e = 0; e < g.d; ++e) {
            double acc = 0.0;
            for (int64_t j = 0; j < g.m; ++j) acc += static_cast<double>(u[j]) * ctx[j * g.d + e];
            out[e] = static_cast<float>(acc) * d_inv;
          }
        }
      }
    }
    return Status::Ok();
  }

 private:
  PerformerAttentionAttrs a_;
};

}  // namespace

Status create_performer_attention(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const PerformerAttentionAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  const std::string label = "PerformerAttention '" + plan.node->name + "': ";
  const Shape* shapes[kMaxOpInputs] = {};
  planned_src_shapes(plan, shapes);
  PerformerGeometry g;
  const Status decoded = decode_performer_geometry(*a, shapes, plan.num_src, &g);
  if (!decoded.ok()) return bad_model(label + decoded.message());
  int64_t floats = 0, bytes = 0;
  if (g.nk < 1 || !PerformerAttentionKernel::scratch_floats(g, &floats) ||
      !checked_mul(floats, static_cast<int64_t>(sizeof(float)), &bytes))
    return bad_model(label + "workspace size overflows");
  info->workspace_bytes = static_cast<size_t>(bytes);
  *kernel = std::make_unique<PerformerAttentionKernel>(plan, *a);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
