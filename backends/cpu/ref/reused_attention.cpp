// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// ReusedAttention (LaViT's Less-Attention layer, docs/models.md §4.2), per batch item b and head h:
//   T = S_prev[b,h] · Θᵀ + θ_b                 (Linear on the key axis:    T[i,j] = θ_b[j] + Σ_k
//   S_prev[i,k]·Θ[j,k]) S = Ψ · T + ψ_b                            (Linear on the query axis:  S[i,j] =
//   ψ_b[i] + Σ_k Ψ[i,k]·T[k,j]) out[b, i, h·d:(h+1)·d] = softmax(S[i,:]) · v[b, :, h·d:(h+1)·d]
// Θ and Ψ are shared by all heads. With a second output, S is written straight into it ([B,h,N,N']);
// otherwise it lives in the workspace. Both contractions accumulate a row at a time in double (Ψ sums over up
// to N = 3136 terms), which keeps this oracle well inside PyTorch's own float32 error.
// Workspace, sized at plan time: a double row [N'], Θᵀ [N',N'], T [N,N'], S [N,N'] (only without the second
// output); nothing is allocated in run.
#include <cmath>

#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"

namespace vitrt {
namespace ref {
namespace {

class ReusedAttentionKernel final : public RefKernel {
 public:
  ReusedAttentionKernel(const KernelPlan& plan, const ReusedAttentionAttrs& a) : RefKernel(plan), a_(a) {}

  static int64_t workspace_floats(int64_t n, int64_t nk, bool scores_out) {
    return 2 * nk + nk * nk + n * nk + (scores_out ? 0 : n * nk);
  }

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& prev = *args.src[0];
    const TensorRef& v = *args.src[1];
    const float* theta = args.src[2]->f32();
    const float* theta_b = args.src[3]->f32();
    const float* psi = args.src[4]->f32();
    const float* psi_b = args.src[5]->f32();
    const int64_t batch = prev.shape[0], heads = a_.num_heads, n = prev.shape[2], nk = prev.shape[3];
    const int64_t c = v.shape[2], d = c / heads;
    const bool scores_out = args.num_dst > 1;
    VITRT_RETURN_IF_ERROR(check_workspace(args, workspace_floats(n, nk, scores_out)));
    double* acc = static_cast<double*>(args.workspace);   // [nk], first: 8-byte aligned
    float* theta_t = reinterpret_cast<float*>(acc + nk);  // [nk, nk]: theta_t[k*nk + j] = Θ[j,k]
    float* t = theta_t + nk * nk;                         // [n, nk]
    float* s_ws = t + n * nk;                             // [n, nk] when S is not an output
    for (int64_t j = 0; j < nk; ++j)
      for (int64_t k = 0; k < nk; ++k) theta_t[k * nk + j] = theta[j * nk + k];
    float* out = args.dst[0]->f32();
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t h = 0; h < heads; ++h) {
        const float* sp = prev.f32() + (b * heads + h) * n * nk;
        float* s = scores_out ? args.dst[1]->f32() + (b * heads + h) * n * nk : s_ws;
        // T = S_prev · Θᵀ + θ_b, one row at a time.
        for (int64_t i = 0; i < n; ++i) {
          for (int64_t j = 0; j < nk; ++j) acc[j] = theta_b[j];
          const float* si = sp + i * nk;
          for (int64_t k = 0; k < nk; ++k) {
            const double sv = si[k];
            const float* tr = theta_t + k * nk;
            for (int64_t j = 0; j < nk; ++j) acc[j] += sv * tr[j];
          }
          float* ti = t + i * nk;
          for (int64_t j = 0; j < nk; ++j) ti[j] = static_cast<float>(acc[j]);
        }
        // S = Ψ · T + ψ_b (ψ_b broadcast along the key axis).
        for (int64_t i = 0; i < n; ++i) {
          for (int64_t j = 0; j < nk; ++j) acc[j] = psi_b[i];
          const float* pr = psi + i * n;
          for (int64_t k = 0; k < n; ++k) {
            const double pv = pr[k];
            const float* tk = t + k * nk;
            for (int64_t j = 0; j < nk; ++j) acc[j] += pv * tk[j];
          }
          float* si = s + i * nk;
          for (int64_t j = 0; j < nk; ++j) si[j] = static_cast<float>(acc[j]);
        }
        // softmax(S) · v for this head; the probabilities go through the double row.
        const float* vb = v.f32() + b * nk * c + h * d;
        for (int64_t i = 0; i < n; ++i) {
          const float* si = s + i * nk;
          float mx = -INFINITY;
          for (int64_t j = 0; j < nk; ++j) mx = si[j] > mx ? si[j] : mx;
          double sum = 0.0;
          for (int64_t j = 0; j < nk; ++j) {
            const float e = std::exp(si[j] - mx);
            acc[j] = e;
            sum += e;
          }
          const float r = static_cast<float>(1.0 / sum);
          float* oi = out + (b * n + i) * c + h * d;
          for (int64_t tt = 0; tt < d; ++tt) oi[tt] = 0.0f;
          for (int64_t j = 0; j < nk; ++j) {
            const float pj = static_cast<float>(acc[j]) * r;
            const float* vr = vb + j * c;
            for (int64_t tt = 0; tt < d; ++tt) oi[tt] += pj * vr[tt];
          }
        }
      }
    }
    return Status::Ok();
  }

 private:
  ReusedAttentionAttrs a_;
};

}  // namespace

Status create_reused_attention(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const ReusedAttentionAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  const std::string where = "ReusedAttention '" + plan.node->name + "'";
  if (a->num_heads < 1) return bad_model(where + ": num_heads must be >= 1");
  const Shape& s = plan.src_shapes[0];
  if (plan.num_src < 6 || s.rank != 4) return bad_model(where + ": bad planned shapes");
  info->workspace_bytes =
      static_cast<size_t>(ReusedAttentionKernel::workspace_floats(s[2], s[3], plan.num_dst > 1)) *
      sizeof(float);
  *kernel = std::make_unique<ReusedAttentionKernel>(plan, *a);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
