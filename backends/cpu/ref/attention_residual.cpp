// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// AttentionResidual (LaViT, docs/models.md §4.2): for each batch item b and key j, the scores S[b,:,:,j] are
// an h1-channel image over the H1 x W1 query grid; a depthwise conv (kernel = stride = k, bias), a 1x1 conv
// h1 -> h2 (bias) and a per-head scale give the [B,h2,N2,N'] residual:
//   A[c,p,j]     = dw_b[c] + Σ_{ky,kx} dw[c,ky,kx] · S[b,c,(oy·k+ky)·W1 + ox·k+kx, j]      (p = oy·W2 + ox)
//   out[b,o,p,j] = gamma[o] · (pw_b[o] + Σ_c pw[o,c] · A[c,p,j])
// Keys are the innermost axis everywhere, so every loop runs over contiguous rows of N'. The workspace holds
// A for one output position (h1 x N'), sized at plan time.
#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"

namespace vitrt {
namespace ref {
namespace {

class AttentionResidualKernel final : public RefKernel {
 public:
  AttentionResidualKernel(const KernelPlan& plan, const AttentionResidualAttrs& a) : RefKernel(plan), a_(a) {}

  static int64_t workspace_floats(int64_t h1, int64_t nk) { return h1 * nk; }

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& sc = *args.src[0];
    const float* dw = args.src[1]->f32();
    const float* dw_b = args.src[2]->f32();
    const float* pw = args.src[3]->f32();
    const float* pw_b = args.src[4]->f32();
    const float* gamma = args.src[5]->f32();
    const int64_t batch = sc.shape[0], h1 = sc.shape[1], n1 = sc.shape[2], nk = sc.shape[3];
    const int64_t k = args.src[1]->shape[2], h2 = args.src[3]->shape[0];
    const int64_t w1 = a_.width, h2d = a_.height / k, w2d = a_.width / k, n2 = h2d * w2d;
    VITRT_RETURN_IF_ERROR(check_workspace(args, workspace_floats(h1, nk)));
    float* a = static_cast<float*>(args.workspace);  // [h1, nk]
    float* out = args.dst[0]->f32();
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t oy = 0; oy < h2d; ++oy) {
        for (int64_t ox = 0; ox < w2d; ++ox) {
          const int64_t p = oy * w2d + ox;
          for (int64_t c = 0; c < h1; ++c) {
            float* ac = a + c * nk;
            for (int64_t j = 0; j < nk; ++j) ac[j] = dw_b[c];
            const float* src = sc.f32() + (b * h1 + c) * n1 * nk;
            for (int64_t ky = 0; ky < k; ++ky) {
              for (int64_t kx = 0; kx < k; ++kx) {
                const float wv = dw[(c * k + ky) * k + kx];
                const float* row = src + ((oy * k + ky) * w1 + ox * k + kx) * nk;
                for (int64_t j = 0; j < nk; ++j) ac[j] += wv * row[j];
              }
            }
          }
          for (int64_t o = 0; o < h2; ++o) {
            float* dst = out + ((b * h2 + o) * n2 + p) * nk;
            for (int64_t j = 0; j < nk; ++j) dst[j] = pw_b[o];
            for (int64_t c = 0; c < h1; ++c) {
              const float wv = pw[o * h1 + c];
              const float* ac = a + c * nk;
              for (int64_t j = 0; j < nk; ++j) dst[j] += wv * ac[j];
            }
            const float g = gamma[o];
            for (int64_t j = 0; j < nk; ++j) dst[j] *= g;
          }
        }
      }
    }
    return Status::Ok();
  }

 private:
  AttentionResidualAttrs a_;
};

}  // namespace

Status create_attention_residual(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const AttentionResidualAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  const Shape& s = plan.src_shapes[0];
  if (plan.num_src < 6 || s.rank != 4)
    return bad_model("AttentionResidual '" + plan.node->name + "': bad planned shapes");
  info->workspace_bytes =
      static_cast<size_t>(AttentionResidualKernel::workspace_floats(s[1], s[3])) * sizeof(float);
  *kernel = std::make_unique<AttentionResidualKernel>(plan, *a);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
