// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Conv2d (NCHW, groups 1, constant weight) as the transposed product, for maps whose pixels leave the NCHW
// form's column panels part empty (ResNet-50's 7 × 7 and 14 × 14 stages at batch 1: 49 pixels fill 49 of a
// panel's 64 columns, so 23% of its FMAs would be padding). Per image,
//   out[co, p] = Σ_t A[p, t] · W[co, t] + bias[co],   A[p, t] = im2col(x)[t, p],
// with the pixels as the GEMM's rows (any count: row tiles of near-equal height, GemmPanel::even_rows) and
// the output channels in the vector lanes, the weight packed once into column panels at plan time like a
// Linear weight. A is read in place with a stride (GemmPanel::a_step): the image itself for a pointwise conv
// (A[p, c] = x[c·pix + p]). A stride-1 conv that implicit_tile accepts reads A implicitly
// (GemmPanel::a_offsets) from the image, or from its zero-padded copy when it has padding, which all threads
// write first (split by input channel) into the workspace: tap t = (c, ky, kx) of output pixel (oy, ox) is at
// t's offset plus oy rows plus ox, and a register tile holds pixels of one output row, so no im2col is
// written (ResNet-50's 3 × 3 convs at 14² would write and re-read 1.8 MB per image). Any other conv (strided,
// under 64 output channels, rows too short for the tile) reads the image's im2col, which all threads write
// first (split by input channel too) as K rows of the image's pixels. Each task's C block (its
// rows × one panel's channels) goes to its thread's workspace slot and is transposed out into the NCHW
// planes; bias and activation are applied in registers, or with a residual (fuse_epilogue's conv -> Add ->
// ReLU) while the block is copied out. Each output element is summed over t in order with one FMA a step, as
// in gemm_conv2d.cpp. Nothing is allocated at run time.
#include "backends/cpu/x86/gemm_conv2d_rows.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "backends/cpu/ref/activation.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/x86/aligned_buffer.h"
#include "backends/cpu/x86/im2col.h"
#include "backends/cpu/x86/packed_gemm.h"
#include "common/checked_math.h"

namespace vitrt {
namespace x86 {
namespace {

// The most output rows per image: im2col's run table holds 64 runs, one per output row of the image.
constexpr int64_t kMaxOutputRows = 64;
// The largest im2col of one image kept in the workspace.
constexpr int64_t kMaxColumnBytes = int64_t{8} << 20;
// The transposed product is taken when it needs clearly fewer multiply-adds than the NCHW form, counting its
// transposed copy of C as kTransposeMacs multiply-adds per output element: measured (vitrt_gemm_compare,
// ResNet-50's convs at batch 1, 1 and 2 threads) it lost 4-6% on the 256 -> 1024 1×1 conv at 14² (K = 256,
// 7% fewer multiply-adds) and won 6-35% on the others at 14² and 7² (K >= 512).
constexpr double kRowsGainNeeded = 0.95;
constexpr double kTransposeMacs = 16;
// The implicit product's limits (implicit_tile): output channels, and the C block of one thread.
constexpr int64_t kImplicitMinCout = 64;
constexpr int64_t kMaxSlotBytes = int64_t{1} << 20;

int vec_width(bool avx512) {
  return avx512 ? 16 : 8;
}

// Columns a product of n columns runs on a tile of nr columns: whole panels, and the last one narrowed to
// whole vectors (packed_gemm_impl.h's Narrow).
int64_t computed_columns(int64_t n, int nr, int w) {
  return n / nr * nr + (n % nr + w - 1) / w * w;
}

// The register tile of the implicit product (no im2col: GemmPanel::a_offsets) for this conv, or null where
// it does not apply. It needs a dense stride-1 conv with a kernel larger than 1 × 1 (strided convs keep
// im2col: reading every stride-th float of the input rows takes a tile's K block out of L1 — ResNet-50's
// 1024 -> 2048 1×1 stride-2 conv at 14² went 0.70 -> 0.89 ms at 2 threads), at least 64 output channels
// (the shapes measured), a C block per thread of at most kMaxSlotBytes, a padded input within
// kMaxColumnBytes, and output rows that fill the tile's rows: each output row is cut into near-equal
// tiles, which must hold on average at least 3/4 of the tile's rows. Among the ISA's tiles it takes the one
// with the most accumulators in use (14 × 32 for 14-, 28- and 56-wide rows, 8 × 48 for 7-wide).
const GemmKernels* implicit_tile(const Context& ctx, const KernelPlan& plan, const Conv2dAttrs& a) {
  const Shape &xs = plan.src_shapes[0], &ws = plan.src_shapes[1], &ys = plan.dst_shapes[0];
  if (a.channels_last || a.groups != 1 || xs.rank != 4 || ws.rank != 4 || ys.rank != 4 ||
      !constant_input(plan, 1) || ys.numel() == 0 || ws[1] != xs[1] || ws[2] * ws[3] < 2 || a.stride_h != 1 ||
      a.stride_w != 1 || ws[0] < kImplicitMinCout)
    return nullptr;
  const int64_t cout = ws[0], wo = ys[3];
  int64_t plane = 0, input = 0;
  if (!checked_mul(xs[2] + 2 * a.pad_h, xs[3] + 2 * a.pad_w, &plane) || !checked_mul(plane, xs[1], &input) ||
      input >= (int64_t{1} << 31) || input * 4 > kMaxColumnBytes)
    return nullptr;
  const bool avx512 = ctx.isa == X86Isa::kAvx512;
  const int w = vec_width(avx512);
  const GemmKernels* best = nullptr;
  double best_used = 0;
  for (int i = 0; i < (avx512 ? 3 : 1); ++i) {
    const GemmKernels* g = !avx512
                               ? gemm_kernels_avx2()
                               : gemm_kernels_avx512(ctx.options.gemm_tile >= 0 ? ctx.options.gemm_tile : i);
    const double rows = static_cast<double>(wo) / static_cast<double>((wo + g->mr - 1) / g->mr);
    // Accumulators in use per k, discounted by the columns the last panel computes past cout.
    const double used = rows * (g->nr / w) * static_cast<double>(cout) /
                        static_cast<double>(computed_columns(cout, g->nr, w));
    if (rows >= 0.75 * g->mr && ys[2] * wo * g->nr * 4 <= kMaxSlotBytes && used > best_used)
      best = g, best_used = used;
  }
  return best;
}

class GemmConvRowsKernel final : public ref::RefKernel {
 public:
  GemmConvRowsKernel(const KernelPlan& plan, std::shared_ptr<Context> ctx, const Conv2dAttrs& a)
      : RefKernel(plan),
        ctx_(std::move(ctx)),
        a_(a),
        planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {
    const Shape &ws = plan.src_shapes[1], &ys = plan.dst_shapes[0];
    cout_ = ws[0];
    k_ = ws[1] * ws[2] * ws[3];
    pix_ = ys[2] * ys[3];
    pointwise_ =
        ws[2] == 1 && ws[3] == 1 && a.stride_h == 1 && a.stride_w == 1 && a.pad_h == 0 && a.pad_w == 0;
    lda_ = round16(pix_);
    gemm_ = gemm_kernels_for(ctx_->isa == X86Isa::kAvx512, pix_, cout_, k_, ctx_->options.gemm_tile);
    if (const GemmKernels* tile = implicit_tile(*ctx_, plan, a)) plan_implicit(tile, plan.src_shapes[0], ws);
    packed_ = AlignedFloats(static_cast<size_t>(gemm_packed_floats(cout_, k_, gemm_->nr)));
    bias_ = AlignedFloats(static_cast<size_t>(gemm_panels(cout_, gemm_->nr) * gemm_->nr));
    if (packed_) gemm_pack_transposed(plan.src_tensors[1]->f32(), cout_, k_, gemm_->nr, packed_.data());
  }
  bool ok() const { return packed_ && bias_; }
  bool implicit() const { return implicit_; }
  const char* tile_name() const { return gemm_->name; }
  // Workspace: the image's im2col (none if pointwise; its padded copy if implicit and padded), then per
  // planned thread a C block of pix × NR (64-byte aligned).
  size_t workspace_bytes() const {
    return static_cast<size_t>(column_floats() + planned_threads_ * slot_floats()) * sizeof(float) + 64;
  }

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    if (args.src[1]->shape != planned_src_[1]) return fail("weight shape differs from the plan");
    if (args.workspace_bytes < workspace_bytes()) return fail("workspace smaller than planned");
    const float* bias = args.num_src > 2 && args.src[2] ? args.src[2]->f32() : nullptr;
    const float* residual = args.num_src > 3 && args.src[3] ? args.src[3]->f32() : nullptr;
    TensorRef& y = *args.dst[0];
    if (residual && args.src[3]->shape != y.shape) return fail("residual shape differs from the output's");
    if (y.shape[2] * y.shape[3] != pix_) return fail("output map differs from the plan");
    if (implicit_ && (x.shape[1] != planned_src_[0][1] || x.shape[2] != planned_src_[0][2] ||
                      x.shape[3] != planned_src_[0][3]))
      return fail("input map differs from the plan");
    if (bias) std::copy(bias, bias + cout_, bias_.data());  // zero-padded to whole panels
    const int threads = run_threads(args, planned_threads_);
    const int64_t batch = x.shape[0], cin = x.shape[1], h = x.shape[2], wd = x.shape[3];
    const int64_t kh = planned_src_[1][2], kw = planned_src_[1][3], taps = kh * kw;
    const int64_t pix = pix_, cout = cout_, k = k_, lda = lda_;
    const int nr = gemm_->nr, mr = gemm_->mr;
    const int64_t panels = gemm_panels(cout, nr), row_tiles = (pix + mr - 1) / mr;
    const int64_t out_h = y.shape[2], out_w = y.shape[3];
    // Row chunks only when there are too few panels for the threads: each chunk reads the whole packed
    // weight panel again (at batch 1 it comes from memory).
    const int64_t chunks = std::clamp<int64_t>((2 * threads + panels - 1) / panels, 1, row_tiles);
    float* ws = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(args.workspace) + 63) / 64 * 64);
    float* columns = ws;
    float* slots = ws + column_floats();
    const GemmKernels* g = gemm_;
    const Conv2dAttrs a = a_;
    void (*im2col)(const Im2colPanel&) =
        ctx_->isa == X86Isa::kAvx512 ? &im2col_panel_avx512 : &im2col_panel_avx2;
    const GemmAct act = gemm_act(a.activation);
    const float* packed = packed_.data();
    const float* bias_pad = bias ? bias_.data() : nullptr;
    float* py = y.f32();
    for (int64_t b = 0; b < batch; ++b) {
      const float* image = x.f32() + b * cin * h * wd;
      const float* src = image;  // A: the image in place (pointwise) or its im2col, a_step floats per t
      int64_t a_step = h * wd;
      if (implicit_ && padded_) {
        ThreadPool::parallel_for(
            cin, threads, [&](int64_t c0, int64_t c1, int) { pad_channels(image, h, wd, c0, c1, columns); });
        src = columns;
      } else if (!pointwise_ && !implicit_) {
        ThreadPool::parallel_for(cin, threads, [&](int64_t c0, int64_t c1, int) {
          Im2colPanel ip = im2col_geometry(a, h, wd, kh, kw, y.shape[3], pix);
          ip.x = image + c0 * h * wd;
          ip.image_stride = cin * h * wd;
          ip.cin = c1 - c0;
          ip.first = 0;
          ip.cols = pix;
          ip.nr = lda;
          ip.dst = columns + c0 * taps * lda;
          im2col(ip);
        });
        src = columns;
        a_step = lda;
      }
      ThreadPool::parallel_for(panels * chunks, threads, [&](int64_t lo, int64_t hi, int thread) {
        float* cbuf = slots + thread * slot_floats();
        for (int64_t task = lo; task < hi; ++task) {
          const int64_t panel = task / chunks, chunk = task % chunks;
          // Implicit: chunks of whole output rows, as its row tiles never cross one.
          const int64_t units = implicit_ ? out_h : row_tiles, unit = implicit_ ? out_w : mr;
          const int64_t r0 = chunk * units / chunks * unit,
                        r1 = std::min(pix, (chunk + 1) * units / chunks * unit);
          if (r0 >= r1) continue;
          const int64_t c0 = panel * nr, cols = std::min<int64_t>(nr, cout - c0);
          GemmPanel gp;
          if (implicit_) {
            gp.a = src + r0 / out_w * row_stride_;
            gp.lda = a.stride_w;
            gp.a_offsets = offsets_.data();
            gp.a_row_width = out_w;
            gp.a_row_stride = row_stride_;
          } else {
            gp.a = src + r0;
            gp.lda = 1;
            gp.a_step = a_step;
            gp.even_rows = true;
          }
          gp.m = r1 - r0;
          gp.k = k;
          gp.b = packed + panel * k * nr;
          gp.cols = cols;
          gp.c = cbuf;
          gp.ldc = nr;
          gp.bias_cols = bias_pad ? bias_pad + c0 : nullptr;
          gp.act = residual ? GemmAct::kNone : act;  // with a residual: act(C + R), applied below
          g->panel(gp);
          // C[r, j] -> out[b, c0 + j, r0 + r].
          for (int64_t j = 0; j < cols; ++j) {
            const int64_t at = (b * cout + c0 + j) * pix + r0, len = r1 - r0;
            float* dst = py + at;
            const float* from = cbuf + j;
            if (!residual) {
              for (int64_t r = 0; r < len; ++r) dst[r] = from[r * nr];
              continue;
            }
            const float* res = residual + at;
            for (int64_t r = 0; r < len; ++r) dst[r] = from[r * nr] + res[r];
            ref::apply_activation(a.activation, dst, len);
          }
        }
      });
    }
    return Status::Ok();
  }

 private:
  // The implicit product on `tile` (implicit_tile), with the taps' offsets into the (padded) input.
  void plan_implicit(const GemmKernels* tile, const Shape& xs, const Shape& ws) {
    implicit_ = true;
    gemm_ = tile;
    padded_ = a_.pad_h > 0 || a_.pad_w > 0;
    hp_ = xs[2] + 2 * a_.pad_h;
    wp_ = xs[3] + 2 * a_.pad_w;
    row_stride_ = a_.stride_h * wp_;
    offsets_.resize(static_cast<size_t>(k_));
    const int64_t plane = hp_ * wp_, kh = ws[2], kw = ws[3];
    for (int64_t c = 0, t = 0; c < xs[1]; ++c)
      for (int64_t ky = 0; ky < kh; ++ky)
        for (int64_t kx = 0; kx < kw; ++kx, ++t)
          offsets_[t] = static_cast<int32_t>(c * plane + ky * a_.dilation_h * wp_ + kx * a_.dilation_w);
  }
  // Channels [c0, c1) of the image into the workspace's padded copy: hp_ × wp_ planes, zero around.
  void pad_channels(const float* image, int64_t h, int64_t w, int64_t c0, int64_t c1, float* dst) const {
    const int64_t ph = a_.pad_h, pw = a_.pad_w;
    for (int64_t c = c0; c < c1; ++c) {
      float* plane = dst + c * hp_ * wp_;
      const float* from = image + c * h * w;
      std::fill(plane, plane + ph * wp_, 0.0f);
      for (int64_t r = 0; r < h; ++r) {
        float* row = plane + (ph + r) * wp_;
        std::fill(row, row + pw, 0.0f);
        std::copy(from + r * w, from + r * w + w, row + pw);
        std::fill(row + pw + w, row + wp_, 0.0f);
      }
      std::fill(plane + (ph + h) * wp_, plane + hp_ * wp_, 0.0f);
    }
  }
  int64_t column_floats() const {
    if (implicit_) return padded_ ? round16(planned_src_[0][1] * hp_ * wp_) : 0;
    return pointwise_ ? 0 : round16(k_ * lda_);
  }
  int64_t slot_floats() const { return round16(pix_ * gemm_->nr); }

  std::shared_ptr<Context> ctx_;
  Conv2dAttrs a_;
  int planned_threads_;
  const GemmKernels* gemm_ = nullptr;
  int64_t cout_ = 0, k_ = 0, pix_ = 0, lda_ = 0;
  bool pointwise_ = false;
  // The implicit product: the taps' offsets into the (padded) input, its planes' size and the floats from
  // one output row's first pixel to the next's.
  bool implicit_ = false, padded_ = false;
  int64_t hp_ = 0, wp_ = 0, row_stride_ = 0;
  std::vector<int32_t> offsets_;
  AlignedFloats packed_, bias_;
};

}  // namespace

bool conv2d_rows_preferred(const Context& ctx, const KernelPlan& plan, const Conv2dAttrs& a) {
  // With no im2col to write and re-read, this form won everywhere it applies (vitrt_gemm_compare --cold 2,
  // ResNet-50's 3 × 3 convs at 56² to 7², batch 1, Zen 5: 10-20% at 1 thread, 6-14% at 2).
  if (implicit_tile(ctx, plan, a)) return true;
  const Shape &xs = plan.src_shapes[0], &ws = plan.src_shapes[1], &ys = plan.dst_shapes[0];
  if (a.channels_last || a.groups != 1 || xs.rank != 4 || ws.rank != 4 || ys.rank != 4 ||
      !constant_input(plan, 1) || ys.numel() == 0 || ws[1] != xs[1] || ys[2] > kMaxOutputRows)
    return false;
  const bool avx512 = ctx.isa == X86Isa::kAvx512;
  const int64_t batch = xs[0], cout = ws[0], pix = ys[2] * ys[3];
  int64_t k = 0, column_bytes = 0;
  if (!checked_mul(ws[1], ws[2] * ws[3], &k) || !checked_mul(k, round16(pix) * 4, &column_bytes) ||
      column_bytes > kMaxColumnBytes)
    return false;
  const int w = vec_width(avx512);
  // The NCHW form (gemm_conv2d.cpp): output channels as rows on its tile, the pixels as columns, run on
  // across the images when an image does not fill whole panels.
  const GemmKernels* g = gemm_kernels_for(avx512, cout, pix, 1, ctx.options.gemm_tile);
  const int64_t nchw_cols = pix % g->nr != 0 ? computed_columns(batch * pix, g->nr, w) : batch * pix;
  const double nchw =
      static_cast<double>((cout + g->mr - 1) / g->mr * g->mr) * static_cast<double>(nchw_cols);
  // This form: every pixel a row, the output channels as columns.
  const GemmKernels* t = gemm_kernels_for(avx512, pix, cout, k, ctx.options.gemm_tile);
  const double rows = static_cast<double>(batch * pix) *
                      static_cast<double>(computed_columns(cout, t->nr, w)) *
                      (1.0 + kTransposeMacs / static_cast<double>(k));
  return rows < kRowsGainNeeded * nchw;
}

Status create_conv2d_rows(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                          std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const Conv2dAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  auto k = std::make_unique<GemmConvRowsKernel>(plan, ctx, *a);
  if (!k->ok()) return out_of_memory("Conv2d '" + plan.node->name + "': cannot allocate the packed weight");
  info->workspace_bytes = k->workspace_bytes();
  info->reentrant = true;    // compute keeps no state; its scratch is the workspace it is given
  info->copied_srcs = 0b10;  // the weight, packed
  if (ctx->options.verbose)
    std::fprintf(stderr, "vitrt x86: Conv2d '%s' %s -> %s: pixel-row packed gemm (weight %s, %s%s)\n",
                 plan.node->name.c_str(), plan.src_shapes[0].str().c_str(), plan.dst_shapes[0].str().c_str(),
                 plan.src_shapes[1].str().c_str(), k->tile_name(), k->implicit() ? ", implicit" : "");
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
