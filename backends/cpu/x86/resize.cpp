// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Resize of the last two axes on x86 (core/ir/op_attrs.h, ResizeAttrs), one (batch, channel) plane per
// task: the input rows the output reads are first blended along the width into the thread's workspace
// ([in_h, out_w]), then each output row blends its taps of those rows. Each value is the same float
// expression as the reference kernel's nested blend (resize_taps.h), so the results are identical bit for
// bit; a blended row is only computed once for all the output rows that read it. Other forms (one or three
// resized axes, the batch axis resized) decline to the reference kernel.
#include <algorithm>

#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/ref/resize_taps.h"
#include "backends/cpu/x86/x86_internal.h"
#include "common/checked_math.h"
#include "ops/resize_attrs.h"

namespace vitrt {
namespace x86 {
namespace {

// Threads pay off from about 64K output taps.
constexpr int64_t kThreadedTaps = 65536;

class ResizeKernel final : public ref::RefKernel {
 public:
  ResizeKernel(const KernelPlan& plan, const ResizeAttrs& a)
      : RefKernel(plan), a_(a), planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {
    const Shape& x = plan.src_shapes[0];
    ref::resize_axis_taps(a_, 0, x[x.rank - 2], &rows_);
    ref::resize_axis_taps(a_, 1, x[x.rank - 1], &cols_);
    row_used_.assign(static_cast<size_t>(rows_.in), 0);
    for (int64_t i : rows_.index) row_used_[static_cast<size_t>(i)] = 1;
  }

  static int64_t workspace_floats(const Shape& x, const ResizeAttrs& a, int threads) {
    int64_t floats = 0;
    if (!checked_mul(x[x.rank - 2], a.sizes[1], &floats) || !checked_mul(floats, threads, &floats)) return -1;
    return floats;
  }

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    const int64_t in_h = rows_.in, in_w = cols_.in, out_h = rows_.out, out_w = cols_.out;
    if (x.shape[x.shape.rank - 2] != in_h || x.shape[x.shape.rank - 1] != in_w)
      return fail("input " + x.shape.str() + " is not the planned image size");
    const int threads = run_threads(args, planned_threads_);
    VITRT_RETURN_IF_ERROR(check_workspace(args, in_h * out_w * threads));
    const int64_t planes = x.shape.numel() / (in_h * in_w);
    const int64_t taps = planes * out_h * out_w * rows_.taps * cols_.taps;
    const int nt = taps >= kThreadedTaps ? threads : 1;
    const float* src = x.f32();
    float* dst = args.dst[0]->f32();
    float* workspace = static_cast<float*>(args.workspace);
    ThreadPool::parallel_for(planes, nt, [&](int64_t lo, int64_t hi, int thread) {
      float* blended = workspace + thread * in_h * out_w;  // [in_h, out_w]
      for (int64_t p = lo; p < hi; ++p) resize_plane(src + p * in_h * in_w, blended, dst + p * out_h * out_w);
    });
    return Status::Ok();
  }

 private:
  void resize_plane(const float* src, float* blended, float* dst) const {
    const int64_t in_w = cols_.in, out_h = rows_.out, out_w = cols_.out;
    const int ct = cols_.taps, rt = rows_.taps;
    const int64_t* ci = cols_.index.data();
    const float* cw = cols_.weight.data();
    float v[4] = {};
    for (int64_t h = 0; h < rows_.in; ++h) {
      if (!row_used_[static_cast<size_t>(h)]) continue;
      const float* row = src + h * in_w;
      float* b = blended + h * out_w;
      if (ct == 1) {
        for (int64_t ox = 0; ox < out_w; ++ox) b[ox] = row[ci[ox]];
        continue;
      }
      for (int64_t ox = 0; ox < out_w; ++ox) {
        for (int j = 0; j < ct; ++j) v[j] = row[ci[ox * ct + j]];
        b[ox] = ref::resize_blend(v, cw + ox * ct, ct);
      }
    }
    for (int64_t oy = 0; oy < out_h; ++oy) {
      const int64_t* ri = rows_.index.data() + oy * rt;
      const float* rw = rows_.weight.data() + oy * rt;
      float* d = dst + oy * out_w;
      if (rt == 1) {
        std::copy(blended + ri[0] * out_w, blended + (ri[0] + 1) * out_w, d);
        continue;
      }
      const float* r[4];
      for (int j = 0; j < rt; ++j) r[j] = blended + ri[j] * out_w;
      for (int64_t ox = 0; ox < out_w; ++ox) {
        for (int j = 0; j < rt; ++j) v[j] = r[j][ox];
        d[ox] = ref::resize_blend(v, rw, rt);
      }
    }
  }

  ResizeAttrs a_;
  int planned_threads_;
  ref::ResizeAxisTaps rows_, cols_;
  std::vector<char> row_used_;  // the input rows some output row reads
};

}  // namespace

Status create_resize(const std::shared_ptr<Context>&, const KernelPlan& plan, std::unique_ptr<Kernel>* kernel,
                     KernelInfo* info) {
  const ResizeAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  const Shape& x = plan.src_shapes[0];
  // Two resized axes behind at least the batch axis; anything else (or malformed) runs on the reference.
  if (!resize_attrs_problem(*a).empty() || a->sizes.size() != 2 || x.rank < 3) return Status::Ok();
  const int threads = plan.num_threads < 1 ? 1 : plan.num_threads;
  int64_t floats = ResizeKernel::workspace_floats(x, *a, threads), bytes = 0;
  if (floats < 0 || !checked_mul(floats, static_cast<int64_t>(sizeof(float)), &bytes))
    return bad_model("Resize '" + plan.node->name + "': workspace size overflows");
  info->workspace_bytes = static_cast<size_t>(bytes);
  *kernel = std::make_unique<ResizeKernel>(plan, *a);
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
