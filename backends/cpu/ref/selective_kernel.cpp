// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// SelectiveKernel (core/ir/op_attrs.h, SelectiveKernelAttrs): per image, the channel means of U = Σ_i x_i
// (every term added in double, as a ReduceSum over the branches followed by the mean would come close to),
// the branch weights a (selective_kernel_select.h), then dst = Σ_i a_i·x_i (each product in float, the sum
// in double, as Mul then ReduceSum over the branch axis).
#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/ref/selective_kernel_select.h"
#include "common/checked_math.h"
#include "ops/selective_kernel_attrs.h"

namespace vitrt {
namespace ref {
namespace {

class SelectiveKernelKernel final : public RefKernel {
 public:
  SelectiveKernelKernel(const KernelPlan& plan, const SelectiveKernelAttrs& a) : RefKernel(plan), a_(a) {}

  // Workspace floats: the means s [C], z [d] and the branch weights a [M·C] of one image.
  static bool scratch_floats(int64_t c, int64_t d, int32_t m, int64_t* floats) {
    int64_t mc = 0;
    return checked_mul(c, static_cast<int64_t>(m) + 1, &mc) && checked_add(mc, d, floats);
  }

 protected:
  Status compute(const KernelArgs& args) override {
    const SelectiveKernelInputs in{a_.branches};
    auto optional = [&](int i) -> const float* {
      return i < args.num_src && args.src[i] ? args.src[i]->f32() : nullptr;
    };
    const TensorRef& x = *args.src[0];
    const int64_t batch = x.shape[0], c = x.shape[1], hw = x.shape[2] * x.shape[3];
    SelectiveKernelWeights w;
    w.fc_reduce_weight = args.src[in.fc_reduce_weight()]->f32();
    w.fc_reduce_bias = optional(in.fc_reduce_bias());
    w.z_scale = optional(in.z_scale());
    w.z_shift = optional(in.z_shift());
    w.fc_select_weight = args.src[in.fc_select_weight()]->f32();
    w.fc_select_bias = optional(in.fc_select_bias());
    w.c = c;
    w.d = args.src[in.fc_reduce_weight()]->shape[0];
    w.m = a_.branches;
    int64_t floats = 0;
    if (!scratch_floats(c, w.d, w.m, &floats)) return fail("workspace size overflows");
    VITRT_RETURN_IF_ERROR(check_workspace(args, floats));
    float* s = static_cast<float*>(args.workspace);
    float* a = s + c;
    float* z = a + w.m * c;
    const float* src[kMaxSelectiveKernelBranches];
    for (int64_t b = 0; b < batch; ++b) {
      for (int32_t i = 0; i < w.m; ++i) src[i] = args.src[i]->f32() + b * c * hw;
      float* dst = args.dst[0]->f32() + b * c * hw;
      for (int64_t ch = 0; ch < c; ++ch) {
        double sum = 0;
        for (int64_t p = ch * hw; p < (ch + 1) * hw; ++p)
          for (int32_t i = 0; i < w.m; ++i) sum += src[i][p];
        s[ch] = static_cast<float>(sum / static_cast<double>(hw));
      }
      selective_kernel_select(a_, w, s, z, a);
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t p = ch * hw; p < (ch + 1) * hw; ++p) {
          double v = 0;
          for (int32_t i = 0; i < w.m; ++i) v += a[i * c + ch] * src[i][p];
          dst[p] = static_cast<float>(v);
        }
    }
    return Status::Ok();
  }

 private:
  SelectiveKernelAttrs a_;
};

}  // namespace

Status create_selective_kernel(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const SelectiveKernelAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  const std::string why = selective_kernel_attrs_problem(*a);
  if (!why.empty()) return bad_model("SelectiveKernel '" + plan.node->name + "': " + why);
  const SelectiveKernelInputs in{a->branches};
  if (plan.num_src <= in.fc_select_weight() || plan.src_shapes[0].rank != 4 ||
      plan.src_shapes[in.fc_reduce_weight()].rank < 1)
    return bad_model("SelectiveKernel '" + plan.node->name + "': bad planned shapes");
  int64_t floats = 0;
  if (!SelectiveKernelKernel::scratch_floats(plan.src_shapes[0][1], plan.src_shapes[in.fc_reduce_weight()][0],
                                             a->branches, &floats) ||
      !checked_mul(floats, static_cast<int64_t>(sizeof(float)), &floats))
    return bad_model("SelectiveKernel '" + plan.node->name + "': workspace size overflows");
  info->workspace_bytes = static_cast<size_t>(floats);
  *kernel = std::make_unique<SelectiveKernelKernel>(plan, *a);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
