// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// SqueezeExcite: per image, the channel means, the gate through two fully connected layers
// (squeeze_excite_gate.h), then every plane scaled by its channel's gate. May run in place: an image's means
// are all taken before any of its planes is written.
#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/ref/squeeze_excite_gate.h"
#include "common/checked_math.h"
#include "ops/squeeze_excite_attrs.h"

namespace vitrt {
namespace ref {
namespace {

class SqueezeExciteKernel final : public RefKernel {
 public:
  SqueezeExciteKernel(const KernelPlan& plan, const SqueezeExciteAttrs& a) : RefKernel(plan), a_(a) {}

  // Workspace floats: the means s [C], the hidden layer [Cr] and the gate g [C] of one image.
  static int64_t scratch_floats(int64_t c, int64_t cr) { return 2 * c + cr; }

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    const float* b1 = args.num_src > 2 && args.src[2] ? args.src[2]->f32() : nullptr;
    const float* b2 = args.num_src > 4 && args.src[4] ? args.src[4]->f32() : nullptr;
    const int64_t batch = x.shape[0], c = x.shape[1], hw = x.shape[2] * x.shape[3];
    const int64_t cr = args.src[1]->shape[0];
    VITRT_RETURN_IF_ERROR(check_workspace(args, scratch_floats(c, cr)));
    float* s = static_cast<float*>(args.workspace);
    float* g = s + c;
    float* hidden = g + c;
    for (int64_t b = 0; b < batch; ++b) {
      const float* src = x.f32() + b * c * hw;
      float* dst = args.dst[0]->f32() + b * c * hw;
      for (int64_t ch = 0; ch < c; ++ch) s[ch] = plane_mean(src + ch * hw, hw);
      squeeze_excite_gate(a_, s, c, args.src[1]->f32(), b1, cr, args.src[3]->f32(), b2, hidden, g);
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t i = 0; i < hw; ++i) dst[ch * hw + i] = src[ch * hw + i] * g[ch];
    }
    return Status::Ok();
  }

 private:
  SqueezeExciteAttrs a_;
};

}  // namespace

Status create_squeeze_excite(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const SqueezeExciteAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  const std::string why = squeeze_excite_attrs_problem(*a);
  if (!why.empty()) return bad_model("SqueezeExcite '" + plan.node->name + "': " + why);
  const Shape& x = plan.src_shapes[0];
  const Shape& w1 = plan.src_shapes[1];
  if (x.rank != 4 || w1.rank < 1)
    return bad_model("SqueezeExcite '" + plan.node->name + "': bad planned shapes");
  int64_t bytes = 0;  // scratch_floats(C, Cr) floats
  if (!checked_mul(x[1], int64_t{2}, &bytes) || !checked_add(bytes, w1[0], &bytes) ||
      !checked_mul(bytes, static_cast<int64_t>(sizeof(float)), &bytes))
    return bad_model("SqueezeExcite '" + plan.node->name + "': workspace size overflows");
  info->workspace_bytes = static_cast<size_t>(bytes);
  info->may_inplace = true;
  *kernel = std::make_unique<SqueezeExciteKernel>(plan, *a);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
