// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// ScatterND (core/ir/op_attrs.h, ScatterNDAttrs): dst = data, then for each index tuple in order its slice of
// dst combined with the tuple's slice of updates (replaced, added, multiplied, max or min; a later tuple that
// repeats an earlier one sees its result, as ONNX's reference loop). Every index is checked before anything
// is written: one that is not an integer in [0, the axis' length) fails the run, naming the op (the importer
// wraps ONNX's negative indices and refuses out-of-range ones; a model file is not trusted).
#include <cstring>
#include <string>

#include "backends/cpu/ref/kernels.h"
#include "backends/cpu/ref/ref_kernel.h"

namespace vitrt {
namespace ref {
namespace {

// Max and min propagate NaN from either side, as numpy.maximum / minimum (ONNX's reference).
inline float combine(ScatterReduction r, float d, float u) {
  switch (r) {
    case ScatterReduction::kAdd:
      return d + u;
    case ScatterReduction::kMul:
      return d * u;
    case ScatterReduction::kMax:
      return u > d || u != u ? u : d;
    case ScatterReduction::kMin:
      return u < d || u != u ? u : d;
    case ScatterReduction::kNone:
      break;
  }
  return u;
}

class ScatterNDKernel final : public RefKernel {
 public:
  ScatterNDKernel(const KernelPlan& plan, const ScatterNDAttrs& a) : RefKernel(plan), a_(a) {}

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef &x = *args.src[0], &ix = *args.src[1], &upd = *args.src[2];
    TensorRef& y = *args.dst[0];
    const int r = x.shape.rank;
    const int64_t k = ix.shape.dim(-1);
    if (k < 1 || k > r)
      return fail("index tuples of " + std::to_string(k) + " for data of rank " + std::to_string(r));
    int64_t stride[kMaxRank];
    contiguous_strides(x.shape, stride);
    const int64_t slice = stride[k - 1];  // elements one tuple addresses
    const int64_t tuples = ix.shape.numel() / k;
    const float* idx = ix.f32();
    for (int64_t e = 0; e < tuples * k; ++e) {
      const float v = idx[e];
      const int64_t len = x.shape[static_cast<int>(e % k)];
      if (!(v >= 0.0f && v < static_cast<float>(len)) || v != static_cast<float>(static_cast<int64_t>(v)))
        return fail("index " + std::to_string(v) + " (tuple " + std::to_string(e / k) + ", axis " +
                    std::to_string(e % k) + ") is not an integer in [0, " + std::to_string(len) + ")");
    }
    float* dst = y.f32();
    if (dst != x.f32()) std::memcpy(dst, x.f32(), static_cast<size_t>(x.shape.numel()) * sizeof(float));
    const float* u = upd.f32();
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t off = 0;
      for (int64_t j = 0; j < k; ++j) off += static_cast<int64_t>(idx[t * k + j]) * stride[j];
      float* d = dst + off;
      const float* s = u + t * slice;
      if (a_.reduction == ScatterReduction::kNone) {
        std::memcpy(d, s, static_cast<size_t>(slice) * sizeof(float));
        continue;
      }
      for (int64_t e = 0; e < slice; ++e) d[e] = combine(a_.reduction, d[e], s[e]);
    }
    return Status::Ok();
  }

 private:
  ScatterNDAttrs a_;
};

}  // namespace

Status create_scatter_nd(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo*) {
  const ScatterNDAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(get_attrs(plan, &a));
  *kernel = std::make_unique<ScatterNDKernel>(plan, *a);
  return Status::Ok();
}

}  // namespace ref
}  // namespace vitrt
