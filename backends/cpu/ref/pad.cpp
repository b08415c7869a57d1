// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Pad (core/ir/op_attrs.h, PadAttrs): each output index o along an axis reads the input at o - pad_before;
// outside the input, kConstant writes `value`, kReflect mirrors about the edge element (never repeating it,
// as PyTorch's reflect: shape inference keeps each pad below the axis size), kEdge repeats the edge element.
#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"

namespace vitrt {
namespace ref {
namespace {

class PadKernel final : public RefKernel {
 public:
  PadKernel(const KernelPlan& plan, const PadAttrs& a) : RefKernel(plan), a_(a) {}

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    TensorRef& y = *args.dst[0];
    const int rank = y.shape.rank;
    if (rank == 0) {
      y.f32()[0] = x.f32()[0];
      return Status::Ok();
    }
    int64_t sx[kMaxRank];
    contiguous_strides(x.shape, sx);
    const int last = rank - 1;
    const int64_t row = y.shape[last], rows = y.shape.numel() / row;
    int64_t idx[kMaxRank] = {};  // the output row's index along every axis but the last
    float* dst = y.f32();
    for (int64_t r = 0; r < rows; ++r, dst += row) {
      int64_t base = 0;
      bool inside = true;
      for (int d = 0; d < last && inside; ++d) {
        int64_t i;
        inside = source_index(d, idx[d], x.shape[d], &i);
        base += i * sx[d];
      }
      const float* src = x.f32() + base;
      for (int64_t j = 0; j < row; ++j) {
        int64_t i;
        dst[j] = inside && source_index(last, j, x.shape[last], &i) ? src[i] : a_.value;
      }
      for (int d = last - 1; d >= 0; --d) {  // next row
        if (++idx[d] < y.shape[d]) break;
        idx[d] = 0;
      }
    }
    return Status::Ok();
  }

 private:
  // The input index output index `o` of axis `d` (size n) reads; false where kConstant writes its value.
  bool source_index(int d, int64_t o, int64_t n, int64_t* i) const {
    int64_t v = o - a_.pads[static_cast<size_t>(d)];
    if (v >= 0 && v < n) {
      *i = v;
      return true;
    }
    switch (a_.mode) {
      case PadMode::kConstant:
        return false;
      case PadMode::kReflect:
        v = v < 0 ? -v : 2 * (n - 1) - v;
        break;
      case PadMode::kEdge:
        v = v < 0 ? 0 : n - 1;
        break;
    }
    *i = v;
    return true;
  }

  PadAttrs a_;
};

}  // namespace

Status create_pad(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo*) {
  const PadAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  *kernel = std::make_unique<PadKernel>(plan, *a);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
