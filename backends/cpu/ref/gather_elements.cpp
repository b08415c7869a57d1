// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// GatherElements (core/ir/op_attrs.h, GatherElementsAttrs), one output element at a time: out[i0..ir-1] =
// data[i0.., indices[i0..], ..ir-1] with the index in place of coordinate `axis`. An index that is not an
// integer in [0, data's axis) fails the run, naming the op (the importer wraps negative ONNX indices and
// refuses out-of-range ones; a model file is not trusted).
#include <string>

#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "ops/op_registry.h"

namespace vitrt {
namespace ref {
namespace {

class GatherElementsKernel final : public RefKernel {
 public:
  GatherElementsKernel(const KernelPlan& plan, const GatherElementsAttrs& a) : RefKernel(plan), a_(a) {}

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef &x = *args.src[0], &ix = *args.src[1];
    const int r = x.shape.rank;
    int ax = 0;
    if (!normalize_axis(a_.axis, r, &ax) || ix.shape.rank != r) return fail("axis or rank out of range");
    int64_t stride[kMaxRank];
    int64_t s = 1;
    for (int d = r - 1; d >= 0; --d) {
      stride[d] = s;
      s *= x.shape[d];
    }
    const float* src = x.f32();
    const float* idx = ix.f32();
    float* dst = args.dst[0]->f32();
    const int64_t n = ix.shape.numel(), len = x.shape[ax];
    int64_t coord[kMaxRank] = {};
    for (int64_t e = 0; e < n; ++e) {
      const float v = idx[e];
      if (!(v >= 0.0f && v < static_cast<float>(len)) || v != static_cast<float>(static_cast<int64_t>(v)))
        return fail("index " + std::to_string(v) + " is not an integer in [0, " + std::to_string(len) + ")");
      int64_t off = 0;
      for (int d = 0; d < r; ++d) off += (d == ax ? static_cast<int64_t>(v) : coord[d]) * stride[d];
      dst[e] = src[off];
      for (int d = r - 1; d >= 0; --d) {  // next coordinate of the indices' shape, row-major
        if (++coord[d] < ix.shape[d]) break;
        coord[d] = 0;
      }
    }
    return Status::Ok();
  }

 private:
  GatherElementsAttrs a_;
};

}  // namespace

Status create_gather_elements(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo*) {
  const GatherElementsAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  *kernel = std::make_unique<GatherElementsKernel>(plan, *a);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
