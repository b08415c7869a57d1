// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Linear: y[m, :] = x[m, :]·Wᵀ + b, weight [N,K] (PyTorch layout), then the epilogue activation, then the
// residual (when fused in by the planner).
// The arithmetic is linear_rows (linear_rows.h); Wt is made once at create time when the weight is a
// constant, otherwise into the workspace on each run.
#include <cstring>
#include <vector>

#include "backends/cpu/ref/activation.h"
#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/linear_rows.h"
#include "backends/cpu/ref/ref_kernel.h"

namespace vitrt {
namespace ref {
namespace {

class LinearKernel final : public RefKernel {
 public:
  LinearKernel(const KernelPlan& plan, Activation act, std::vector<float> packed)
      : RefKernel(plan), act_(act), packed_(std::move(packed)) {}

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    const TensorRef& w = *args.src[1];
    const float* bias = args.num_src > 2 && args.src[2] ? args.src[2]->f32() : nullptr;
    const float* residual = args.num_src > 3 && args.src[3] ? args.src[3]->f32() : nullptr;
    const int64_t n = w.shape[0], k = w.shape[1];
    const int64_t m = k > 0 ? x.numel() / k : 0;
    const float* wt;
    if (!packed_.empty()) {
      if (w.shape != planned_src_[1]) return fail("weight shape " + w.shape.str() + " differs from the plan");
      wt = packed_.data();
    } else {
      VITRT_RETURN_IF_ERROR(check_workspace(args, n * k));
      float* scratch = static_cast<float*>(args.workspace);
      transpose_weight(w.f32(), n, k, scratch);
      wt = scratch;
    }
    linear_rows(x.f32(), m, k, wt, n, bias, act_, residual, args.dst[0]->f32());
    return Status::Ok();
  }

 private:
  Activation act_;
  std::vector<float> packed_;  // Wt [K,N], empty when the weight is not a constant
};

}  // namespace

Status create_linear(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const LinearAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  if (!activation_valid(a->activation))
    return bad_model("Linear '" + plan.node->name + "': unknown activation");
  const Shape& ws = plan.src_shapes[1];
  if (ws.rank != 2) return bad_model("Linear '" + plan.node->name + "': weight must be [N,K]");
  const int64_t n = ws[0], k = ws[1];
  std::vector<float> packed;
  const Tensor* w = plan.src_tensors[1];
  if (w && w->is_constant && w->constant.data && n * k > 0) {
    if (w->constant.size != static_cast<size_t>(n * k) * sizeof(float))
      return bad_model("Linear '" + plan.node->name + "': weight data size does not match " + ws.str());
    packed.resize(static_cast<size_t>(n * k));
    transpose_weight(w->f32(), n, k, packed.data());
  } else {
    info->workspace_bytes = static_cast<size_t>(n * k) * sizeof(float);
  }
  *kernel = std::make_unique<LinearKernel>(plan, a->activation, std::move(packed));
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
