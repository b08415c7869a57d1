// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// KernelizedAttention (core/ir/op_attrs.h; docs/linear_attention.md): per image and head, the key features
// φk(K) [N][dk], the context KV = φk(K)ᵀ·V [dk][dv] (and for kEluNormalized the key sum Σ_s φk(K_s) [dk]),
// then each token's query features times the context. Float arithmetic; every sum runs over its index in
// order (tokens for the context and key sum, channels for the output and normaliser).
#include "backends/cpu/ref/kernelized_features.h"
#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "common/checked_math.h"
#include "ops/kernelized_attention_attrs.h"

namespace vitrt {
namespace ref {
namespace {

class KernelizedAttentionKernel final : public RefKernel {
 public:
  KernelizedAttentionKernel(const KernelPlan& plan, const KernelizedAttentionAttrs& a)
      : RefKernel(plan), a_(a) {}

  // Workspace floats: φk(K) [N][dk], KV [dk][dv], the key sum [dk] and one token's φq [dk].
  static bool scratch_floats(const KernelizedGeometry& g, int64_t* floats) {
    int64_t fk = 0, kv = 0;
    return checked_mul(g.n, g.dk, &fk) && checked_mul(g.dk, g.dv, &kv) && checked_add(fk, kv, floats) &&
           checked_add(*floats, 2 * g.dk, floats);
  }

 protected:
  Status compute(const KernelArgs& args) override {
    KernelizedGeometry g;
    VITRT_RETURN_IF_ERROR(decode(args, &g));
    int64_t floats = 0;
    if (!scratch_floats(g, &floats)) return fail("workspace size overflows");
    VITRT_RETURN_IF_ERROR(check_workspace(args, floats));
    float* fk = static_cast<float*>(args.workspace);
    float* kv = fk + g.n * g.dk;
    float* ksum = kv + g.dk * g.dv;
    float* fq = ksum + g.dk;
    const int64_t cq = g.cq(), cv = g.cv();
    for (int64_t b = 0; b < g.batch; ++b) {
      for (int64_t h = 0; h < g.heads; ++h) {
        const float* q = args.src[0]->f32() + b * g.n * cq + h * g.dk;
        const float* k = args.src[1]->f32() + b * g.n * cq + h * g.dk;
        const float* v = args.src[2]->f32() + b * g.n * cv + h * g.dv;
        float* out = args.dst[0]->f32() + b * g.n * cv + h * g.dv;
        key_features(k, g, fk);
        for (int64_t d = 0; d < g.dk; ++d) {
          float s = 0.0f;
          for (int64_t t = 0; t < g.n; ++t) s += fk[t * g.dk + d];
          ksum[d] = s;
          for (int64_t m = 0; m < g.dv; ++m) {
            float acc = 0.0f;
            for (int64_t t = 0; t < g.n; ++t) acc += fk[t * g.dk + d] * v[t * cv + m];
            kv[d * g.dv + m] = acc;
          }
        }
        for (int64_t t = 0; t < g.n; ++t) {
          query_features(q + t * cq, g.dk, fq);
          float z = 1.0f;
          if (a_.kind == KernelizedKind::kEluNormalized) {
            float den = 0.0f;
            for (int64_t d = 0; d < g.dk; ++d) den += fq[d] * ksum[d];
            z = 1.0f / (den + a_.eps);
          }
          for (int64_t m = 0; m < g.dv; ++m) {
            float acc = 0.0f;
            for (int64_t d = 0; d < g.dk; ++d) acc += fq[d] * kv[d * g.dv + m];
            out[t * cv + m] = acc * z;
          }
        }
      }
    }
    return Status::Ok();
  }

 private:
  Status decode(const KernelArgs& args, KernelizedGeometry* g) const {
    const Status s =
        decode_kernelized_geometry(a_, args.src[0]->shape, args.src[1]->shape, args.src[2]->shape, g);
    return s.ok() ? s : fail(s.message());
  }

  // fk[t][d] = φk(k[t][d]): elementwise, or softmax over the tokens of each channel.
  void key_features(const float* k, const KernelizedGeometry& g, float* fk) const {
    const int64_t cq = g.cq();
    if (a_.kind == KernelizedKind::kSoftmaxPair) {
      for (int64_t d = 0; d < g.dk; ++d) softmax_strided(k + d, cq, g.n, fk + d, g.dk);
      return;
    }
    for (int64_t t = 0; t < g.n; ++t)
      for (int64_t d = 0; d < g.dk; ++d) fk[t * g.dk + d] = elu_feature(k[t * cq + d], a_.scale);
  }

  // fq[d] = φq(q[d]) of one token: elementwise, or softmax over its dk channels.
  void query_features(const float* q, int64_t dk, float* fq) const {
    if (a_.kind == KernelizedKind::kSoftmaxPair) {
      softmax_strided(q, 1, dk, fq, 1);
      return;
    }
    for (int64_t d = 0; d < dk; ++d) fq[d] = elu_feature(q[d], a_.scale);
  }

  KernelizedAttentionAttrs a_;
};

}  // namespace

Status create_kernelized_attention(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel,
                                   KernelInfo* info) {
  const KernelizedAttentionAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  const std::string where = "KernelizedAttention '" + plan.node->name + "': ";
  if (plan.num_src != 3) return bad_model(where + "expects q, k, v");
  KernelizedGeometry g;
  const Status s =
      decode_kernelized_geometry(*a, plan.src_shapes[0], plan.src_shapes[1], plan.src_shapes[2], &g);
  if (!s.ok()) return bad_model(where + s.message());
  int64_t floats = 0, bytes = 0;
  if (!KernelizedAttentionKernel::scratch_floats(g, &floats) ||
      !checked_mul(floats, static_cast<int64_t>(sizeof(float)), &bytes))
    return bad_model(where + "workspace size overflows");
  info->workspace_bytes = static_cast<size_t>(bytes);
  *kernel = std::make_unique<KernelizedAttentionKernel>(plan, *a);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
