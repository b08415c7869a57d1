// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Conv2d (NCHW, not depthwise) on the packed GEMM: per group, out[co, p] = W[co, :]·col[:, p] + bias[co],
// where each task packs the im2col columns of one panel of output pixels straight into the panel layout (k ×
// NR in its thread's workspace slot) and multiplies the output channels' weights against it while it is in
// cache (a pointwise conv's whole panels inside one image are read in place, with no copy). Bias and
// activation are applied in registers; nothing is allocated at run time.
//
// When an image's pixels do not fill whole panels (7 × 7 and 14 × 14 maps), the panels run on across the
// images of the batch, so no columns are wasted; the C block of a panel that spans two images then goes to
// the thread's workspace and is copied out to each image. When there are few panels for the threads, the
// output channels are split too. A constant weight is packed into the GEMM's row tiles at plan time.
//
// A residual input (fuse_epilogue's: ResNet's conv -> Add -> ReLU) is added in registers before the
// activation; in a panel that spans two images, while its C block is copied out. Where the pixels would leave
// the panels part empty and the transposed product wastes clearly less, gemm_conv2d_rows.cpp runs it instead.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "backends/cpu/ref/activation.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/x86/aligned_buffer.h"
#include "backends/cpu/x86/gemm_conv2d_rows.h"
#include "backends/cpu/x86/im2col.h"
#include "backends/cpu/x86/packed_gemm.h"
#include "backends/cpu/x86/x86_internal.h"

namespace vitrt {
namespace x86 {
namespace {

// The largest weight (per group) packed at plan time: 1 MiB, what stays in L2 between panels.
constexpr int64_t kPackedWeightMaxFloats = int64_t{1} << 18;
// The input size from which each panel's GEMM prefetches the next panel's input (L2's size).
constexpr int64_t kPrefetchMinInputBytes = int64_t{1} << 20;

class GemmConvKernel final : public ref::RefKernel {
 public:
  GemmConvKernel(const KernelPlan& plan, std::shared_ptr<Context> ctx, const Conv2dAttrs& a)
      : RefKernel(plan),
        ctx_(std::move(ctx)),
        a_(a),
        planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {
    const Shape &w = plan.src_shapes[1], &y = plan.dst_shapes[0];
    cout_g_ = w[0] / a.groups;
    k_ = w[1] * w[2] * w[3];
    pix_ = y[2] * y[3];
    // A constant weight is packed once (gemm_pack_a), group by group: every register tile then streams its
    // rows' weights from one contiguous run instead of MR rows k floats apart. That pays where the weight is
    // read again for several panels from L2; read once per run, or from L3 (over 1 MiB), in place measured
    // faster (Zen 5, per-step CPU time in ResNet-50, MobileNetV3-L and EfficientNet-B0: packed 10-35% faster
    // on the 56² to 14² 1×1 convs, 12-24% slower on 7² maps at batch 1 and on 2-4 MiB weights).
    const bool avx512 = ctx_->isa == X86Isa::kAvx512;
    gemm_ = gemm_kernels_for(avx512, cout_g_, pix_, 1, ctx_->options.gemm_tile);
    const int64_t batch = plan.src_shapes[0][0];
    const int64_t panels =
        pix_ % gemm_->nr != 0 ? gemm_panels(batch * pix_, gemm_->nr) : batch * gemm_panels(pix_, gemm_->nr);
    const bool pack = constant_input(plan, 1) && cout_g_ * k_ <= kPackedWeightMaxFloats && panels >= 2;
    if (!pack) gemm_ = gemm_kernels_for(avx512, cout_g_, pix_, k_, ctx_->options.gemm_tile);
    fold_ = pix_ % gemm_->nr != 0;
    if (pack) {
      group_floats_ = gemm_packed_a_floats(cout_g_, k_, gemm_->mr);
      packed_w_ = AlignedFloats(static_cast<size_t>(a.groups * group_floats_));
      if (packed_w_)
        for (int64_t g = 0; g < a.groups; ++g)
          gemm_pack_a(plan.src_tensors[1]->f32() + g * cout_g_ * k_, k_, cout_g_, k_, gemm_->mr,
                      packed_w_.data() + g * group_floats_);
    }
  }
  const char* tile_name() const { return gemm_->name; }
  bool weight_packed() const { return group_floats_ > 0; }
  // False when the packed weight could not be allocated.
  bool ok() const { return group_floats_ == 0 || packed_w_; }
  // Workspace, per planned thread: the k × NR im2col panel, and with folded panels the cout/groups × NR block
  // of C (64-byte aligned slots).
  size_t workspace_bytes() const {
    return static_cast<size_t>(planned_threads_) * slot_floats() * sizeof(float) + 64;
  }

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    const TensorRef& w = *args.src[1];
    if (w.shape != planned_src_[1]) return fail("weight shape differs from the plan");
    const float* bias = args.num_src > 2 && args.src[2] ? args.src[2]->f32() : nullptr;
    const float* residual = args.num_src > 3 && args.src[3] ? args.src[3]->f32() : nullptr;
    TensorRef& y = *args.dst[0];
    if (residual && args.src[3]->shape != y.shape) return fail("residual shape differs from the output's");
    const int threads = run_threads(args, planned_threads_);
    if (args.workspace_bytes < workspace_bytes()) return fail("workspace smaller than planned");
    float* slots = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(args.workspace) + 63) / 64 * 64);
    const int64_t batch = x.shape[0], cin = x.shape[1], h = x.shape[2], wd = x.shape[3];
    const int64_t cout = w.shape[0], cin_g = w.shape[1], kh = w.shape[2], kw = w.shape[3];
    const int64_t wo = y.shape[3], pix = pix_, k = k_, cout_g = cout_g_;
    const int64_t groups = a_.groups;
    const int nr = gemm_->nr, mr = gemm_->mr;
    const bool fold = fold_;
    // The next panel's input is prefetched only when the input is larger than L2: a smaller one is mostly
    // still in L2 from the conv that wrote it, and the prefetches (which land in L1 on Zen 5) then only evict
    // the GEMM's B block (measured per conv with hot inputs: 3-14% slower with them, the 7×7 stem the most).
    const bool prefetch = x.shape.numel() * static_cast<int64_t>(sizeof(float)) > kPrefetchMinInputBytes;
    // A pointwise conv's panel of NR pixels of one image is read in place: NR consecutive floats of each
    // input channel's plane, a plane apart, are the panel's rows (GemmPanel::ldb); no im2col copy.
    const bool pointwise = kh == 1 && kw == 1 && a_.stride_h == 1 && a_.stride_w == 1 && a_.pad_h == 0 &&
                           a_.pad_w == 0 && h * wd == pix;
    // Panels per group: over the whole batch when folded, else per image.
    const int64_t panels = fold ? gemm_panels(batch * pix, nr) : batch * gemm_panels(pix, nr);
    const int64_t image_panels = gemm_panels(pix, nr);
    // Row chunks: enough tasks for every thread to have about four.
    const int64_t row_tiles = (cout_g + mr - 1) / mr;
    int64_t chunks =
        std::clamp<int64_t>((4 * threads + groups * panels - 1) / (groups * panels), 1, row_tiles);
    // Tasks that the threads cannot share evenly leave one thread a whole task longer than the others (a 14²
    // map at batch 8 on 32-pixel panels: 49 panels, 25 and 24 on two threads; a 28² map of one image on
    // 48-pixel panels: 17, 9 and 8): more row chunks per panel even that out where a thread's share is under
    // 32 tasks, i.e. the extra task is over 3% of it.
    while (chunks < row_tiles && (groups * panels * chunks) % threads != 0 &&
           groups * panels * chunks < 32 * threads)
      ++chunks;
    const int64_t slot = slot_floats(), col_floats = round16(k * nr);
    const Conv2dAttrs a = a_;
    const GemmKernels* g = gemm_;
    void (*im2col)(const Im2colPanel&) =
        ctx_->isa == X86Isa::kAvx512 ? &im2col_panel_avx512 : &im2col_panel_avx2;
    const float* px = x.f32();
    const float* pw = w.f32();
    const float* pw_packed = group_floats_ ? packed_w_.data() : nullptr;
    const int64_t group_floats = group_floats_, packed_rows = gemm_packed_a_rows(cout_g_, gemm_->mr);
    float* py = y.f32();
    // The im2col panel of (group, panel) index gp_index, written to dst.
    auto im2col_panel = [&](int64_t gp_index, float* dst) {
      const int64_t grp = gp_index / panels, panel = gp_index % panels;
      // The panel's first column over the batch, and its columns.
      const int64_t first = fold ? panel * nr : panel / image_panels * pix + panel % image_panels * nr;
      Im2colPanel ip = im2col_geometry(a, h, wd, kh, kw, wo, pix);
      ip.x = px + grp * cin_g * h * wd;
      ip.image_stride = cin * h * wd;
      ip.cin = cin_g;
      ip.first = first;
      ip.cols = fold ? std::min<int64_t>(nr, batch * pix - first)
                     : std::min<int64_t>(nr, pix - panel % image_panels * nr);
      ip.nr = nr;
      ip.dst = dst;
      return ip;
    };
    ThreadPool::parallel_for(groups * panels * chunks, threads, [&](int64_t lo, int64_t hi, int thread) {
      float* col = slots + thread * slot;
      float* cbuf = col + col_floats;  // folded panels' C block: cout_g × nr
      int64_t packed = -1;             // the (group, panel) whose columns are in `col`
      for (int64_t t = lo; t < hi; ++t) {
        const int64_t gp_index = t / chunks, chunk = t % chunks;
        const int64_t grp = gp_index / panels;
        const Im2colPanel ip = im2col_panel(gp_index, col);
        const int64_t first = ip.first, cols = ip.cols;
        const bool in_place = pointwise && cols == nr && first / pix == (first + cols - 1) / pix;
        if (!in_place && packed != gp_index) {
          im2col(ip);
          packed = gp_index;
        }
        const int64_t r0 = chunk * row_tiles / chunks * mr,
                      r1 = std::min(cout_g, (chunk + 1) * row_tiles / chunks * mr);
        if (r0 >= r1) continue;
        GemmPanel gp;
        if (pw_packed) {  // r0 is a whole number of row tiles
          gp.a = pw_packed + grp * group_floats;
          gp.a_packed = true;
          gp.a_rows = packed_rows;
          gp.a_row0 = r0;
        } else {
          gp.a = pw + (grp * cout_g + r0) * k;
          gp.lda = k;
        }
        gp.m = r1 - r0;
        gp.k = k;
        gp.b = in_place ? ip.x + first / pix * ip.image_stride + first % pix : col;
        gp.ldb = in_place ? pix : 0;
        gp.cols = cols;
        // Only a panel that runs from one image into the next needs the C block: the others are stored in
        // place, a partial last panel of an image with masked stores.
        const bool spans_images = fold && first / pix != (first + cols - 1) / pix;
        if (spans_images) {
          gp.c = cbuf + r0 * nr;
          gp.ldc = nr;
        } else {
          const int64_t b = first / pix, q = first % pix;
          gp.c = py + (b * cout + grp * cout_g + r0) * pix + q;
          gp.ldc = pix;
        }
        gp.bias_rows = bias ? bias + grp * cout_g + r0 : nullptr;
        gp.act = gemm_act(a.activation);
        if (residual && !spans_images) {
          gp.residual = residual + (gp.c - py);  // the residual has the output's layout
          gp.ldr = pix;
          gp.residual_before_act = true;
        } else if (residual) {
          gp.act = GemmAct::kNone;  // applied after the residual, below
        }
        // The last task of this panel in the thread's range prefetches the input of the next one's panel.
        if (prefetch && t + 1 < hi && (t + 1) / chunks != gp_index)
          gp.prefetches =
              im2col_footprint(im2col_panel((t + 1) / chunks, col), gp.prefetch, kGemmMaxPrefetch);
        g->panel(gp);
        if (!spans_images) continue;
        // Copy the block out, one run of consecutive pixels of one image at a time.
        for (int64_t j = 0; j < cols;) {
          const int64_t b = (first + j) / pix, q = (first + j) % pix, len = std::min(cols - j, pix - q);
          for (int64_t r = r0; r < r1; ++r) {
            const int64_t at = (b * cout + grp * cout_g + r) * pix + q;
            if (!residual) {
              std::memcpy(py + at, cbuf + r * nr + j, len * sizeof(float));
              continue;
            }
            for (int64_t i = 0; i < len; ++i) py[at + i] = cbuf[r * nr + j + i] + residual[at + i];
            ref::apply_activation(a.activation, py + at, len);
          }
          j += len;
        }
      }
    });
    return Status::Ok();
  }

 private:
  int64_t slot_floats() const { return round16(k_ * gemm_->nr) + (fold_ ? round16(cout_g_ * gemm_->nr) : 0); }

  std::shared_ptr<Context> ctx_;
  Conv2dAttrs a_;
  int planned_threads_;
  int64_t cout_g_ = 0, k_ = 0, pix_ = 0;
  bool fold_ = false;
  const GemmKernels* gemm_ = nullptr;
  int64_t group_floats_ = 0;  // one group's packed weight (0: the weight is not constant, used in place)
  AlignedFloats packed_w_;
};

}  // namespace

Status create_conv2d_gemm(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                          std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const Conv2dAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  const Shape& xs = plan.src_shapes[0];
  const Shape& ws = plan.src_shapes[1];
  if (a->channels_last || !ref::activation_valid(a->activation) || xs.rank != 4 || ws.rank != 4 ||
      plan.dst_shapes[0].rank != 4 || xs.numel() == 0)
    return Status::Ok();
  if (conv2d_rows_preferred(*ctx, plan, *a)) return create_conv2d_rows(ctx, plan, kernel, info);
  auto k = std::make_unique<GemmConvKernel>(plan, ctx, *a);
  if (!k->ok()) return out_of_memory("Conv2d '" + plan.node->name + "': cannot allocate the packed weight");
  info->workspace_bytes = k->workspace_bytes();
  info->reentrant = true;  // compute keeps no state; its scratch is the workspace it is given
  if (k->weight_packed()) info->copied_srcs = 0b10;  // else the weight is read in place at every run
  if (ctx->options.verbose)
    std::fprintf(stderr, "vitrt x86: Conv2d '%s' %s -> %s: im2col panels + packed gemm (weight %s, %s%s)\n",
                 plan.node->name.c_str(), xs.str().c_str(), plan.dst_shapes[0].str().c_str(),
                 ws.str().c_str(), k->tile_name(), k->weight_packed() ? ", packed" : "");
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
