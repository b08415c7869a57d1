// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// ConvTranspose (NCHW, core/ir/op_attrs.h ConvTransposeAttrs) on the packed GEMM, then col2im: per image and
// group, cols[(co_g, ky, kx), p] = Σ_ci W[ci, co_g, ky, kx]·x[ci, p] over the group's input channels, and
// each column p = (iy, ix) is scatter-added onto output (iy·stride − pad + ky·dilation, ...), which starts as
// the bias. The GEMM runs one panel of NR input pixels at a time: the panel of x is packed into the thread's
// workspace (Cin/groups × NR), multiplied by the group's transposed weight (packed once at plan time:
// [Cout/groups·kh·kw, Cin/groups], row-major) into a C block (Cout/groups·kh·kw × NR, workspace too), and
// that block is scattered before the next panel. Tasks are (image, group, chunk of the group's output
// channels): a chunk's channels are a contiguous block of A's rows, and two tasks never write the same output
// channel. Fewer (image, group) pairs than threads split the channels (each chunk repacks the x panel, a
// small cost beside its GEMM). Nothing is allocated at run time.
#include <algorithm>
#include <cstdio>

#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/x86/aligned_buffer.h"
#include "backends/cpu/x86/packed_gemm.h"
#include "backends/cpu/x86/x86_internal.h"

namespace vitrt {
namespace x86 {
namespace {

class GemmConvTransposeKernel final : public ref::RefKernel {
 public:
  GemmConvTransposeKernel(const KernelPlan& plan, std::shared_ptr<Context> ctx, const ConvTransposeAttrs& a)
      : RefKernel(plan),
        ctx_(std::move(ctx)),
        a_(a),
        planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {
    const Shape &x = plan.src_shapes[0], &w = plan.src_shapes[1];
    cin_g_ = x[1] / a.groups;
    taps_ = w[2] * w[3];
    m_ = w[1] * taps_;
    gemm_ = gemm_kernels_for(ctx_->isa == X86Isa::kAvx512, m_, x[2] * x[3], cin_g_, ctx_->options.gemm_tile);
    // A of group g: row r = (co_g·kh + ky)·kw + kx, column c = input channel g·Cin/groups + c; the weight
    // holds W[ci, r] with rows of m floats.
    wt_ = AlignedFloats(static_cast<size_t>(a.groups * m_ * cin_g_));
    if (!wt_) return;
    const float* src = plan.src_tensors[1]->f32();
    for (int64_t g = 0; g < a.groups; ++g)
      for (int64_t r = 0; r < m_; ++r)
        for (int64_t c = 0; c < cin_g_; ++c)
          wt_.data()[(g * m_ + r) * cin_g_ + c] = src[(g * cin_g_ + c) * m_ + r];
  }
  bool ok() const { return static_cast<bool>(wt_); }
  // Workspace, per planned thread: the packed panel of x (Cin/groups × NR) and the C block (m × NR), in
  // 64-byte aligned slots.
  size_t workspace_bytes() const {
    return static_cast<size_t>(planned_threads_) * slot_floats() * sizeof(float) + 64;
  }

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    const TensorRef& w = *args.src[1];
    if (w.shape != planned_src_[1]) return fail("weight shape differs from the plan");
    const float* bias = args.num_src > 2 && args.src[2] ? args.src[2]->f32() : nullptr;
    TensorRef& y = *args.dst[0];
    const int threads = run_threads(args, planned_threads_);
    if (args.workspace_bytes < workspace_bytes()) return fail("workspace smaller than planned");
    float* slots = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(args.workspace) + 63) / 64 * 64);
    const int64_t batch = x.shape[0], cin = x.shape[1], h = x.shape[2], wd = x.shape[3], pix = h * wd;
    const int64_t cout = y.shape[1], ho = y.shape[2], wo = y.shape[3], plane = ho * wo;
    const int64_t cout_g = w.shape[1], kw = w.shape[3];
    const int64_t groups = a_.groups, cin_g = cin_g_, m = m_, taps = taps_;
    const int nr = gemm_->nr;
    const int64_t slot = slot_floats(), packed_floats = round16(cin_g * nr);
    const ConvTransposeAttrs a = a_;
    const GemmKernels* g = gemm_;
    const float* px = x.f32();
    const float* wt = wt_.data();
    float* py = y.f32();
    // Channel chunks: enough tasks for every thread when the images and groups alone are too few.
    const int64_t chunks = std::clamp<int64_t>((threads + batch * groups - 1) / (batch * groups), 1, cout_g);
    ThreadPool::parallel_for(batch * groups * chunks, threads, [&](int64_t lo, int64_t hi, int thread) {
      float* packed = slots + thread * slot;
      float* cbuf = packed + packed_floats;  // m × nr
      for (int64_t t = lo; t < hi; ++t) {
        const int64_t b = t / (groups * chunks), grp = t / chunks % groups, chunk = t % chunks;
        const int64_t c0 = chunk * cout_g / chunks, c1 = (chunk + 1) * cout_g / chunks;
        if (c0 >= c1) continue;
        float* yg = py + (b * cout + grp * cout_g) * plane;
        for (int64_t c = c0; c < c1; ++c)
          std::fill(yg + c * plane, yg + (c + 1) * plane, bias ? bias[grp * cout_g + c] : 0.0f);
        const float* xg = px + (b * cin + grp * cin_g) * pix;
        const int64_t r0 = c0 * taps, r1 = c1 * taps;  // this chunk's rows of A and of the C block
        for (int64_t first = 0; first < pix; first += nr) {
          const int64_t cols = std::min<int64_t>(nr, pix - first);
          gemm_pack_rows(xg + first, pix, cin_g, cols, nr, packed);
          GemmPanel gp;
          gp.a = wt + (grp * m + r0) * cin_g;
          gp.lda = cin_g;
          gp.m = r1 - r0;
          gp.k = cin_g;
          gp.b = packed;
          gp.cols = cols;
          gp.c = cbuf + r0 * nr;
          gp.ldc = nr;
          g->panel(gp);
          // col2im: row r of the block is tap (ky, kx) of output channel co; column j is pixel first + j.
          for (int64_t r = r0; r < r1; ++r) {
            const int64_t co = r / taps, ky = r % taps / kw, kx = r % kw;
            float* yc = yg + co * plane;
            const float* crow = cbuf + r * nr;
            const int64_t dy = ky * a.dilation_h - a.pad_top, dx = kx * a.dilation_w - a.pad_left;
            int64_t iy = first / wd, ix = first % wd;
            for (int64_t j = 0; j < cols; ++j) {
              const int64_t oy = iy * a.stride_h + dy, ox = ix * a.stride_w + dx;
              if (oy >= 0 && oy < ho && ox >= 0 && ox < wo) yc[oy * wo + ox] += crow[j];
              if (++ix == wd) {
                ix = 0;
                ++iy;
              }
            }
          }
        }
      }
    });
    return Status::Ok();
  }

 private:
  int64_t slot_floats() const { return round16(cin_g_ * gemm_->nr) + round16(m_ * gemm_->nr); }

  std::shared_ptr<Context> ctx_;
  ConvTransposeAttrs a_;
  int planned_threads_;
  int64_t cin_g_ = 0, taps_ = 0, m_ = 0;
  const GemmKernels* gemm_ = nullptr;
  AlignedFloats wt_;
};

}  // namespace

Status create_conv_transpose(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                             std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const ConvTransposeAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  const Tensor* w = plan.src_tensors[1];
  const Shape& xs = plan.src_shapes[0];
  const Shape& ws = plan.src_shapes[1];
  if (!w || !w->is_constant || !w->constant.data || ws.rank != 4 || xs.rank != 4 || xs.numel() == 0 ||
      w->constant.size != static_cast<size_t>(ws.numel()) * sizeof(float))
    return Status::Ok();  // a weight computed at run time, or empty: the reference kernel
  auto k = std::make_unique<GemmConvTransposeKernel>(plan, ctx, *a);
  if (!k->ok())
    return out_of_memory("ConvTranspose '" + plan.node->name + "': cannot allocate the transposed weight");
  info->workspace_bytes = k->workspace_bytes();
  info->copied_srcs = 0b10;  // the weight, transposed; the bias is read at run time
  if (ctx->options.verbose)
    std::fprintf(stderr, "vitrt x86: ConvTranspose '%s' %s -> %s: packed gemm panels + col2im\n",
                 plan.node->name.c_str(), xs.str().c_str(), plan.dst_shapes[0].str().c_str());
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
