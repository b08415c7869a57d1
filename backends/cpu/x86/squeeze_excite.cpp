// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// SqueezeExcite on x86 (core/ir/op_attrs.h, SqueezeExciteAttrs). The cost is two passes over x: the channel
// means, then the scale. Where the images divide evenly over the threads, each thread takes whole images
// (mean, gate, scale) in one parallel region with no barrier, so an image is scaled right after it was
// summed, while it is in that thread's cache. With fewer images, the batch's planes are split over the
// threads in the same static chunks for both passes (each thread scales the planes it has just summed), with
// the gate between. The gate is two small fully connected layers as vector dot products over the weights'
// rows (split over the threads when large), the activations as the reference computes them.
#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/ref/squeeze_excite_gate.h"
#include "backends/cpu/x86/x86_internal.h"
#include "common/checked_math.h"
#include "ops/squeeze_excite_attrs.h"

namespace vitrt {
namespace x86 {
namespace {

// Elements of x from which the passes are split over the threads: one thread sums and scales [64,56,56]
// (200K floats) in about 15 us, so below ~1M a parallel region's start and barrier cost more than they save.
constexpr int64_t kThreadedElements = int64_t{1} << 20;
// Multiply-adds of one gate layer from which its rows are split over the threads.
constexpr int64_t kThreadedMacs = int64_t{1} << 18;

class SqueezeExciteKernel final : public ref::RefKernel {
 public:
  SqueezeExciteKernel(const KernelPlan& plan, std::shared_ptr<Context> ctx, const SqueezeExciteAttrs& a)
      : RefKernel(plan),
        ctx_(std::move(ctx)),
        a_(a),
        planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {}

  // Workspace floats at `batch` images: the means [B,C], the hidden layer [B,Cr] and the gate [B,C].
  static bool scratch_floats(int64_t batch, int64_t c, int64_t cr, int64_t* floats) {
    int64_t per_image = 0;
    return checked_mul(c, int64_t{2}, &per_image) && checked_add(per_image, cr, &per_image) &&
           checked_mul(per_image, batch, floats);
  }

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    const float* w1 = args.src[1]->f32();
    const float* w2 = args.src[3]->f32();
    const float* b1 = args.num_src > 2 && args.src[2] ? args.src[2]->f32() : nullptr;
    const float* b2 = args.num_src > 4 && args.src[4] ? args.src[4]->f32() : nullptr;
    const int64_t batch = x.shape[0], c = x.shape[1], hw = x.shape[2] * x.shape[3];
    const int64_t cr = args.src[1]->shape[0];
    int64_t floats = 0;
    if (!scratch_floats(batch, c, cr, &floats)) return fail("workspace size overflows");
    VITRT_RETURN_IF_ERROR(check_workspace(args, floats));
    float* s = static_cast<float*>(args.workspace);  // [B,C]
    float* g = s + batch * c;                        // [B,C]
    float* hidden = g + batch * c;                   // [B,Cr]
    const float* src = x.f32();
    float* dst = args.dst[0]->f32();
    const int threads = run_threads(args, planned_threads_);
    const int nt = batch * c * hw >= kThreadedElements ? threads : 1;
    if (nt == 1 || batch % nt == 0 || batch >= 4 * nt) {
      // Whole images per thread: one parallel region, and each image's planes are summed and scaled by the
      // same thread, one image (about C·H·W floats) apart.
      ThreadPool::parallel_for(batch, nt, [&](int64_t lo, int64_t hi, int) {
        for (int64_t b = lo; b < hi; ++b) {
          means(src, b * c, (b + 1) * c, hw, s);
          gate_rows(b, b + 1, 0, cr, c, cr, w1, b1, s, hidden, /*fc2=*/false);
          gate_rows(b, b + 1, 0, c, c, cr, w2, b2, hidden, g, /*fc2=*/true);
          scale(src, b * c, (b + 1) * c, hw, g, dst);
        }
      });
      return Status::Ok();
    }
    // Fewer images than threads would balance: the planes of the batch split over the threads, the same
    // static split for the means and for the scale, so each thread scales the planes it has just summed.
    const int64_t planes = batch * c;
    ThreadPool::parallel_for(planes, nt, [&](int64_t lo, int64_t hi, int) { means(src, lo, hi, hw, s); });
    // The gate: the weights' rows split over the threads when the layers are large.
    const int nt_fc = batch * c * cr >= kThreadedMacs ? nt : 1;
    ThreadPool::parallel_for(cr, nt_fc, [&](int64_t lo, int64_t hi, int) {
      gate_rows(0, batch, lo, hi, c, cr, w1, b1, s, hidden, /*fc2=*/false);
    });
    ThreadPool::parallel_for(c, nt_fc, [&](int64_t lo, int64_t hi, int) {
      gate_rows(0, batch, lo, hi, c, cr, w2, b2, hidden, g, /*fc2=*/true);
    });
    ThreadPool::parallel_for(planes, nt,
                             [&](int64_t lo, int64_t hi, int) { scale(src, lo, hi, hw, g, dst); });
    return Status::Ok();
  }

 private:
  // s[p] = the mean of plane p of src, for planes [lo, hi).
  void means(const float* src, int64_t lo, int64_t hi, int64_t hw, float* s) const {
    const double count = static_cast<double>(hw);
    for (int64_t p = lo; p < hi; ++p) s[p] = static_cast<float>(ctx_->simd->sum(src + p * hw, hw) / count);
  }

  // One fully connected layer of the gate for images [b0, b1), output rows [lo, hi): out[b, j] =
  // f(bias[j] + w[j, :]·in[b, :]) with f the activation (fc1) or the gate (fc2); in has `cols` values per
  // image, out `rows`.
  void gate_rows(int64_t b0, int64_t b1, int64_t lo, int64_t hi, int64_t c, int64_t cr, const float* w,
                 const float* bias, const float* in, float* out, bool fc2) const {
    const int64_t cols = fc2 ? cr : c, rows = fc2 ? c : cr;
    for (int64_t b = b0; b < b1; ++b)
      for (int64_t j = lo; j < hi; ++j) {
        const float v = (bias ? bias[j] : 0.0f) + ctx_->simd->dot(w + j * cols, in + b * cols, cols);
        out[b * rows + j] = fc2 ? ref::excite_gate(a_, v) : ref::squeeze_activation(a_.activation, v);
      }
  }

  // Planes [lo, hi) of dst = src scaled by their gate.
  void scale(const float* src, int64_t lo, int64_t hi, int64_t hw, const float* g, float* dst) const {
    for (int64_t p = lo; p < hi; ++p)
      ctx_->simd->binary(BinaryOp::kMul, src + p * hw, 1, g + p, 0, dst + p * hw, hw);
  }

  std::shared_ptr<Context> ctx_;
  SqueezeExciteAttrs a_;
  int planned_threads_;
};

}  // namespace

Status create_squeeze_excite(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                             std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const SqueezeExciteAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  const Shape& x = plan.src_shapes[0];
  const Shape& w1 = plan.src_shapes[1];
  if (!squeeze_excite_attrs_problem(*a).empty() || x.rank != 4 || w1.rank < 1)
    return Status::Ok();  // malformed: the reference kernel reports it
  int64_t floats = 0;
  if (!SqueezeExciteKernel::scratch_floats(x[0], x[1], w1[0], &floats) ||
      !checked_mul(floats, static_cast<int64_t>(sizeof(float)), &floats))
    return bad_model("SqueezeExcite '" + plan.node->name + "': workspace size overflows");
  info->workspace_bytes = static_cast<size_t>(floats);
  info->reentrant = true;  // compute keeps no state; its scratch is the workspace it is given
  info->may_inplace = true;
  *kernel = std::make_unique<SqueezeExciteKernel>(plan, ctx, *a);
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
