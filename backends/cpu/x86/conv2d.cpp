// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Depthwise NCHW Conv2d (groups = Cin = Cout), any kernel size, stride, padding and dilation (MobileNet's and
// EfficientNet's 3×3 and 5×5 at strides 1 and 2, ConvNeXt's 7×7): (image, channel, row block) tasks over the
// threads, each on the register-blocked plane kernel of depthwise_nchw_impl.h. The other NCHW convolutions
// run on the packed GEMM (gemm_conv2d.cpp), channels-last ones in gemm_conv2d_nhwc.cpp and
// depthwise_conv_nhwc.cpp.
#include <algorithm>
#include <string>

#include "backends/cpu/ref/activation.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/x86/aligned_buffer.h"
#include "backends/cpu/x86/depthwise_nchw.h"
#include "backends/cpu/x86/x86_internal.h"

namespace vitrt {
namespace x86 {
namespace {

// Output rows per task: enough tasks per image for every planned thread to have about four, and a task's
// padded input rows within kScratchBudget floats (256 KiB, in L2) unless one output row alone needs more.
// Past kScratchLimit floats (64 MiB; a huge dilation or padding, which a file may hold) the shape is
// declined: the reference kernel runs it without scratch.
constexpr int64_t kScratchBudget = 64 * 1024;
constexpr int64_t kScratchLimit = int64_t{16} << 20;

bool plan_depthwise_layout(const Conv2dAttrs& a, int64_t c, int64_t kh, int64_t kw, int64_t ho, int64_t wo,
                           int threads, DepthwisePlaneLayout* layout) {
  const int64_t blocks = std::clamp<int64_t>((4 * threads + c - 1) / c, 1, ho);
  int64_t rows = (ho + blocks - 1) / blocks;
  for (;;) {
    if (!depthwise_plane_layout(kh, kw, a.stride_h, a.stride_w, a.dilation_h, a.dilation_w, wo, rows, layout))
      return false;
    if (layout->scratch_floats <= kScratchBudget) return true;
    if (rows == 1) return layout->scratch_floats <= kScratchLimit;
    rows = (rows + 1) / 2;
  }
}

// Tasks are (image, channel, block of output rows), each computed by the ISA's plane kernel
// (depthwise_nchw_impl.h) in the thread's scratch slot of the workspace.
class DepthwiseKernel final : public ref::RefKernel {
 public:
  DepthwiseKernel(const KernelPlan& plan, std::shared_ptr<Context> ctx, const Conv2dAttrs& a,
                  const DepthwisePlaneLayout& layout)
      : RefKernel(plan),
        ctx_(std::move(ctx)),
        a_(a),
        layout_(layout),
        planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {}

  size_t workspace_bytes() const {
    return static_cast<size_t>(planned_threads_) * static_cast<size_t>(round16(layout_.scratch_floats)) *
               sizeof(float) +
           64;
  }

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    const TensorRef& w = *args.src[1];
    const float* bias = args.num_src > 2 && args.src[2] ? args.src[2]->f32() : nullptr;
    TensorRef& y = *args.dst[0];
    const int64_t batch = x.shape[0], c = x.shape[1], h = x.shape[2], wd = x.shape[3];
    const int64_t ho = y.shape[2], wo = y.shape[3], kh = w.shape[2], kw = w.shape[3];
    if (w.shape != planned_src_[1] || c != planned_src_[0][1] || h != planned_src_[0][2] ||
        wd != planned_src_[0][3] || ho != planned_dst_[2] || wo != planned_dst_[3])
      return fail("input " + x.shape.str() + " or weight " + w.shape.str() + " differs from the plan");
    if (args.workspace_bytes < workspace_bytes()) return fail("workspace smaller than planned");
    float* slots = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(args.workspace) + 63) / 64 * 64);
    const int64_t slot = round16(layout_.scratch_floats), rows = layout_.rows_per_task;
    const int64_t blocks = (ho + rows - 1) / rows;
    auto plane_rows = ctx_->isa == X86Isa::kAvx512 ? depthwise_nchw_rows_avx512 : depthwise_nchw_rows_avx2;
    DepthwisePlane base;
    base.h = h;
    base.w = wd;
    base.kh = kh;
    base.kw = kw;
    base.stride_h = a_.stride_h;
    base.stride_w = a_.stride_w;
    base.pad_h = a_.pad_h;
    base.pad_w = a_.pad_w;
    base.dilation_h = a_.dilation_h;
    base.dilation_w = a_.dilation_w;
    base.act = gemm_act(a_.activation);
    base.wo = wo;
    base.phase_floats = layout_.phase_floats;
    const float* px = x.f32();
    const float* pw = w.f32();
    float* py = y.f32();
    ThreadPool::parallel_for(batch * c * blocks, run_threads(args, planned_threads_),
                             [&](int64_t lo, int64_t hi, int t) {
                               DepthwisePlane p = base;
                               p.scratch = slots + t * slot;
                               for (int64_t i = lo; i < hi; ++i) {
                                 const int64_t bc = i / blocks, blk = i % blocks, ch = bc % c;
                                 p.src = px + bc * h * wd;
                                 p.wt = pw + ch * kh * kw;
                                 p.bias = bias ? bias[ch] : 0.0f;
                                 p.dst = py + bc * ho * wo;
                                 p.oy0 = blk * rows;
                                 p.oy1 = std::min(ho, p.oy0 + rows);
                                 plane_rows(p);
                               }
                             });
    return Status::Ok();
  }

 private:
  std::shared_ptr<Context> ctx_;
  Conv2dAttrs a_;
  DepthwisePlaneLayout layout_;
  int planned_threads_;
};

}  // namespace

Status create_conv2d_depthwise(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                               std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const Conv2dAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  const Shape& xs = plan.src_shapes[0];
  const Shape& ws = plan.src_shapes[1];
  if (!ref::activation_valid(a->activation) || xs.rank != 4 || ws.rank != 4 || plan.dst_shapes[0].rank != 4 ||
      a->groups < 1 || a->stride_h < 1 || a->stride_w < 1 || a->dilation_h < 1 || a->dilation_w < 1 ||
      a->pad_h < 0 || a->pad_w < 0 || xs.numel() == 0 || plan.dst_shapes[0].numel() == 0)
    return Status::Ok();  // the reference handles (or reports) it
  if (a->groups != xs[1] || ws[0] != xs[1] || ws[1] != 1) return Status::Ok();
  const Shape& ys = plan.dst_shapes[0];
  DepthwisePlaneLayout layout;
  if (!plan_depthwise_layout(*a, xs[1], ws[2], ws[3], ys[2], ys[3],
                             plan.num_threads < 1 ? 1 : plan.num_threads, &layout))
    return Status::Ok();  // scratch past kScratchLimit (or sizes past int64): the reference kernel
  auto k = std::make_unique<DepthwiseKernel>(plan, ctx, *a, layout);
  info->workspace_bytes = k->workspace_bytes();
  info->reentrant = true;  // compute keeps no state; its scratch is the workspace it is given
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
