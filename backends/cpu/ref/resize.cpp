// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Resize (core/ir/op_attrs.h, ResizeAttrs): every output element blends the taps of its first resized axis
// over the blended values of the next axes (resize_taps.h), as PyTorch's kernels nest them. The leading axes
// are planes resized independently.
#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/ref/resize_taps.h"

namespace vitrt {
namespace ref {
namespace {

class ResizeKernel final : public RefKernel {
 public:
  ResizeKernel(const KernelPlan& plan, const ResizeAttrs& a) : RefKernel(plan), a_(a) {
    axes_.resize(a_.sizes.size());
  }

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    TensorRef& y = *args.dst[0];
    const int k = static_cast<int>(a_.sizes.size()), lead = x.shape.rank - k;
    // The tables follow the input (only a resized batch axis can change between runs).
    for (int i = 0; i < k; ++i)
      if (axes_[i].in != x.shape[lead + i] || axes_[i].index.empty())
        resize_axis_taps(a_, i, x.shape[lead + i], &axes_[i]);
    int64_t in_plane = 1, out_plane = 1;
    for (int i = 0; i < k; ++i) {
      in_stride_[i] = 1;
      for (int j = i + 1; j < k; ++j) in_stride_[i] *= x.shape[lead + j];
      in_plane *= x.shape[lead + i];
      out_plane *= a_.sizes[static_cast<size_t>(i)];
    }
    const int64_t planes = out_plane ? y.shape.numel() / out_plane : 0;
    const float* src = x.f32();
    float* dst = y.f32();
    int64_t pos[kMaxResizeAxes] = {};
    for (int64_t p = 0; p < planes; ++p) {
      const float* plane = src + p * in_plane;
      for (int64_t e = 0; e < out_plane; ++e) {
        int64_t rest = e;  // e's position along each resized axis, the last fastest
        for (int i = k - 1; i >= 0; --i) {
          pos[i] = rest % axes_[i].out;
          rest /= axes_[i].out;
        }
        *dst++ = blend(plane, 0, pos);
      }
    }
    return Status::Ok();
  }

 private:
  // The value of resized axis `level` onwards at output position `pos`, reading from `src`.
  float blend(const float* src, int level, const int64_t* pos) const {
    if (level >= static_cast<int>(axes_.size()) || level >= kMaxResizeAxes) return *src;
    const ResizeAxisTaps& t = axes_[level];
    const int64_t* idx = t.index.data() + pos[level] * t.taps;
    float v[4] = {};
    for (int j = 0; j < t.taps; ++j) v[j] = blend(src + idx[j] * in_stride_[level], level + 1, pos);
    return resize_blend(v, t.weight.data() + pos[level] * t.taps, t.taps);
  }

  ResizeAttrs a_;
  std::vector<ResizeAxisTaps> axes_;
  int64_t in_stride_[kMaxResizeAxes] = {};
};

}  // namespace

Status create_resize(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo*) {
  const ResizeAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  *kernel = std::make_unique<ResizeKernel>(plan, *a);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
