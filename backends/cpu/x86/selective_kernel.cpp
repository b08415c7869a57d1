// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// SelectiveKernel on x86 (core/ir/op_attrs.h, SelectiveKernelAttrs; docs/linear_attention.md "SE and SK").
// The cost is two passes over the M branches: the channel means of U = Σ_i x_i (each branch plane summed by
// the vector sum, the M totals added in double: U itself is never stored), then dst = Σ_i a_i·x_i (one FMA
// per branch and element, selective_kernel_impl.h). Both passes split the batch's planes over the threads in
// the same static chunks, so each thread rereads the planes it has just summed; between them the small select
// step (fc_reduce, the BatchNorm, the activation, fc_select and the softmax over the branches) runs per image
// as the reference computes it (backends/cpu/ref/selective_kernel_select.h).
#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/ref/selective_kernel_select.h"
#include "backends/cpu/x86/selective_kernel_simd.h"
#include "backends/cpu/x86/x86_internal.h"
#include "common/checked_math.h"
#include "ops/selective_kernel_attrs.h"

namespace vitrt {
namespace x86 {
namespace {

// Floats read (all branches) from which the passes are split over the threads: as for SqueezeExcite, below
// ~1M a parallel region's start and barrier cost more than they save.
constexpr int64_t kThreadedElements = int64_t{1} << 20;

class SelectiveKernelKernel final : public ref::RefKernel {
 public:
  SelectiveKernelKernel(const KernelPlan& plan, std::shared_ptr<Context> ctx, const SelectiveKernelAttrs& a)
      : RefKernel(plan),
        ctx_(std::move(ctx)),
        simd_(ctx_->isa == X86Isa::kAvx512 ? selective_kernel_simd_avx512() : selective_kernel_simd_avx2()),
        a_(a),
        planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {}

  // Workspace floats at `batch` images: the means [B,C], the branch weights [B,M·C] and z [B,d].
  static bool scratch_floats(int64_t batch, int64_t c, int64_t d, int32_t m, int64_t* floats) {
    int64_t per_image = 0;
    return checked_mul(c, static_cast<int64_t>(m) + 1, &per_image) && checked_add(per_image, d, &per_image) &&
           checked_mul(per_image, batch, floats);
  }

 protected:
  Status compute(const KernelArgs& args) override {
    const SelectiveKernelInputs in{a_.branches};
    auto optional = [&](int i) -> const float* {
      return i < args.num_src && args.src[i] ? args.src[i]->f32() : nullptr;
    };
    const TensorRef& x = *args.src[0];
    const int64_t batch = x.shape[0], c = x.shape[1], hw = x.shape[2] * x.shape[3];
    const int32_t m = a_.branches;
    ref::SelectiveKernelWeights w;
    w.fc_reduce_weight = args.src[in.fc_reduce_weight()]->f32();
    w.fc_reduce_bias = optional(in.fc_reduce_bias());
    w.z_scale = optional(in.z_scale());
    w.z_shift = optional(in.z_shift());
    w.fc_select_weight = args.src[in.fc_select_weight()]->f32();
    w.fc_select_bias = optional(in.fc_select_bias());
    w.c = c;
    w.d = args.src[in.fc_reduce_weight()]->shape[0];
    w.m = m;
    int64_t floats = 0;
    if (!scratch_floats(batch, c, w.d, m, &floats)) return fail("workspace size overflows");
    VITRT_RETURN_IF_ERROR(check_workspace(args, floats));
    float* s = static_cast<float*>(args.workspace);  // [B,C]
    float* a = s + batch * c;                        // [B,M·C]
    float* z = a + batch * m * c;                    // [B,d]
    const float* src[kMaxSelectiveKernelBranches];
    for (int32_t i = 0; i < m; ++i) src[i] = args.src[i]->f32();
    float* dst = args.dst[0]->f32();
    const int64_t planes = batch * c;
    const int threads = run_threads(args, planned_threads_);
    const int nt = planes * hw * m >= kThreadedElements ? threads : 1;
    const double count = static_cast<double>(hw);
    ThreadPool::parallel_for(planes, nt, [&](int64_t lo, int64_t hi, int) {
      for (int64_t p = lo; p < hi; ++p) {
        double sum = 0;
        for (int32_t i = 0; i < m; ++i) sum += ctx_->simd->sum(src[i] + p * hw, hw);
        s[p] = static_cast<float>(sum / count);
      }
    });
    ThreadPool::parallel_for(batch, batch >= nt ? nt : 1, [&](int64_t lo, int64_t hi, int) {
      for (int64_t b = lo; b < hi; ++b)
        ref::selective_kernel_select(a_, w, s + b * c, z + b * w.d, a + b * m * c);
    });
    ThreadPool::parallel_for(planes, nt, [&](int64_t lo, int64_t hi, int) {
      const float* plane[kMaxSelectiveKernelBranches];
      for (int64_t p = lo; p < hi; ++p) {
        const int64_t b = p / c, ch = p % c;
        for (int32_t i = 0; i < m; ++i) plane[i] = src[i] + p * hw;
        simd_->weighted_sum(plane, a + b * m * c + ch, c, m, dst + p * hw, hw);
      }
    });
    return Status::Ok();
  }

 private:
  std::shared_ptr<Context> ctx_;
  const SelectiveKernelSimd* simd_;
  SelectiveKernelAttrs a_;
  int planned_threads_;
};

}  // namespace

Status create_selective_kernel(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                               std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const SelectiveKernelAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  if (!selective_kernel_attrs_problem(*a).empty()) return Status::Ok();  // the reference kernel reports it
  const SelectiveKernelInputs in{a->branches};
  if (plan.num_src <= in.fc_select_weight() || plan.src_shapes[0].rank != 4 ||
      plan.src_shapes[in.fc_reduce_weight()].rank < 1)
    return Status::Ok();
  const Shape& x = plan.src_shapes[0];
  int64_t floats = 0;
  if (!SelectiveKernelKernel::scratch_floats(x[0], x[1], plan.src_shapes[in.fc_reduce_weight()][0],
                                             a->branches, &floats) ||
      !checked_mul(floats, static_cast<int64_t>(sizeof(float)), &floats))
    return bad_model("SelectiveKernel '" + plan.node->name + "': workspace size overflows");
  info->workspace_bytes = static_cast<size_t>(floats);
  *kernel = std::make_unique<SelectiveKernelKernel>(plan, ctx, *a);
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
