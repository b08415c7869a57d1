// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// AttentionResidual (LaViT, docs/models.md §4.2): work items are (batch item, output grid row), split over
// the threads; each computes the depthwise k x k stride-k conv of its h1 score images and the 1x1 head mix
// times gamma for every ox (lavit_attention_impl.h residual_row), vectorised over the contiguous key axis.
// Memory bound: every score is read once. Per-thread scratch: one h1 x N' block.
#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/x86/lavit_attention_simd.h"
#include "backends/cpu/x86/x86_internal.h"

namespace vitrt {
namespace x86 {
namespace {

int64_t up16(int64_t x) {
  return (x + 15) / 16 * 16;
}

class AttentionResidualKernel final : public ref::RefKernel {
 public:
  AttentionResidualKernel(const KernelPlan& plan, const LavitSimd* simd, const AttentionResidualAttrs& a)
      : RefKernel(plan), simd_(simd), a_(a), planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {}

  static int64_t thread_floats(int64_t h1, int64_t nk) { return up16(h1 * nk); }

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& sc = *args.src[0];
    const int64_t batch = sc.shape[0], h1 = sc.shape[1], n1 = sc.shape[2], nk = sc.shape[3];
    const int64_t k = args.src[1]->shape[2], h2 = args.src[3]->shape[0];
    const int64_t h2d = a_.height / k, w2d = a_.width / k, n2 = h2d * w2d;
    if (batch == 0 || nk == 0 || h2 == 0) return Status::Ok();
    const int nt = run_threads(args, planned_threads_);
    const int64_t per = thread_floats(h1, nk);
    if (!args.workspace || args.workspace_bytes < static_cast<size_t>(per * nt) * sizeof(float))
      return fail("workspace smaller than these shapes need (larger than planned?)");
    float* ws = static_cast<float*>(args.workspace);
    const LavitSimd* simd = simd_;
    ThreadPool::parallel_for(batch * h2d, nt, [&](int64_t lo, int64_t hi, int tid) {
      ResidualRow r;
      r.dw = args.src[1]->f32();
      r.dw_b = args.src[2]->f32();
      r.pw = args.src[3]->f32();
      r.pw_b = args.src[4]->f32();
      r.gamma = args.src[5]->f32();
      r.h1 = h1;
      r.h2 = h2;
      r.n1 = n1;
      r.nk = nk;
      r.w1 = a_.width;
      r.k = k;
      r.w2 = w2d;
      r.n2 = n2;
      r.a = ws + tid * per;
      for (int64_t it = lo; it < hi; ++it) {
        const int64_t b = it / h2d;
        r.oy = it % h2d;
        r.s = sc.f32() + b * h1 * n1 * nk;
        r.out = args.dst[0]->f32() + b * h2 * n2 * nk;
        simd->residual_row(r);
      }
    });
    return Status::Ok();
  }

 private:
  const LavitSimd* simd_;
  AttentionResidualAttrs a_;
  int planned_threads_;
};

}  // namespace

Status create_attention_residual(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                                 std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const AttentionResidualAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  if (plan.num_src != 6 || plan.num_dst != 1) return Status::Ok();
  const Shape& s = plan.src_shapes[0];
  const Shape& dw = plan.src_shapes[1];
  // The backend checked the shapes against the op's inference; anything else unusual: reference.
  if (s.rank != 4 || dw.rank != 4 || dw[2] < 1 || a->height < 1 || a->width < 1 ||
      static_cast<int64_t>(a->height) * a->width != s[2])
    return Status::Ok();
  const LavitSimd* simd = ctx->isa == X86Isa::kAvx512 ? lavit_simd_avx512() : lavit_simd_avx2();
  const int threads = plan.num_threads < 1 ? 1 : plan.num_threads;
  info->workspace_bytes =
      static_cast<size_t>(AttentionResidualKernel::thread_floats(s[1], s[3]) * threads) * sizeof(float);
  *kernel = std::make_unique<AttentionResidualKernel>(plan, simd, *a);
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
