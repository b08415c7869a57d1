// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// ConvMlp (the planner's fused PVT v2 / LaViT MLP) row-pipelined: per image, a band of output rows at a time,
// fc1 on the band's token rows (plus pad_h halo rows each side; the halo rows already computed for the
// previous band are kept: fc1's rows live in a ring of rows_ + 2·pad_h rows, image row y in slot y mod the
// ring, and the conv reads them through a row table, so nothing is moved), the depthwise conv rows, then fc2
// (+ residual) straight into dst. The hidden
// activations (4-8x the width of the tokens) then live only in a per-thread band that stays in L2, instead
// of going through memory twice as [B,N,Ch] tensors: 0.72-0.74x the op-by-op time at the 56x56 stages
// (bench/mlp_pipeline.cpp). Same kernels as the op-by-op path (packed GEMM panels, the depthwise row kernel).
// Threads take whole images when the batch divides evenly, otherwise images are cut into row segments
// (each recomputing its own halo rows). Under session precision bf16 (ctx->bf16, docs/architecture.md §7.1)
// fc1 and fc2 run on the AVX512-BF16 packed GEMM (packed_linear_bf16.h): weights in bf16 pairs at plan time,
// each band's rows rounded into pairs in the thread's workspace; the depthwise conv, the activations, the
// biases and the residual stay fp32. The depthwise conv then stores its outputs already rounded into fc2's
// pairs (depthwise_nhwc_row_bf16_avx512bf16: the same bits as rounding an fp32 row), which saves the fp32
// output band and a pass over it.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <optional>

#include "backends/cpu/ref/activation.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/x86/aligned_buffer.h"
#include "backends/cpu/x86/depthwise_nhwc.h"
#include "backends/cpu/x86/packed_gemm.h"
#include "backends/cpu/x86/packed_linear.h"
#include "backends/cpu/x86/packed_linear_bf16.h"
#include "backends/cpu/x86/x86_internal.h"

namespace vitrt {
namespace x86 {
namespace {

class ConvMlpKernel final : public ref::RefKernel {
 public:
  ConvMlpKernel(const KernelPlan& plan, std::shared_ptr<Context> ctx, const ConvMlpAttrs& a,
                int64_t band_rows, std::vector<float> dw)
      : RefKernel(plan),
        ctx_(std::move(ctx)),
        a_(a),
        rows_(band_rows),
        planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads),
        ch_(plan.src_shapes[1][0]),
        c_(plan.src_shapes[1][1]),
        co_(plan.src_shapes[5][0]),
        dw_(std::move(dw)) {
    const float *w1 = plan.src_tensors[1]->f32(), *w2 = plan.src_tensors[5]->f32();
    const int64_t rows = band_rows * a.width;
    const int tile = ctx_->options.gemm_tile;
    if (ctx_->bf16) {
      fc1b_.emplace(w1, ch_, c_, rows, tile, ctx_->amx);
      fc2b_.emplace(w2, co_, ch_, rows, tile, ctx_->amx);
    } else {
      const bool avx512 = ctx_->isa == X86Isa::kAvx512;
      fc1_.emplace(avx512, w1, ch_, c_, rows, tile);
      fc2_.emplace(avx512, w2, co_, ch_, rows, tile);
    }
  }
  bool ok() const { return fc1b_ ? fc1b_->ok() && fc2b_->ok() : fc1_->ok() && fc2_->ok(); }

  // Per thread: the fc1 ring (rows + 2·pad_h rows), then in fp32 the conv's output band (rows), in bf16 the
  // larger of the two GEMMs' inputs in pairs (fc1's rounded rows, then the conv's output band in pairs), then
  // the conv's row table (a pointer per ring row). The three regions' sizes in floats, each a multiple of 16.
  struct ThreadRegions {
    int64_t ring, out, table;
  };
  static ThreadRegions thread_regions(const ConvMlpAttrs& a, int64_t rows, int64_t c, int64_t ch, bool bf16) {
    const int64_t ring_rows = rows + 2 * a.pad_h, in_rows = ring_rows * a.width;
    const int64_t out = bf16 ? std::max(in_rows * gemm_bf16_pairs(c), rows * a.width * gemm_bf16_pairs(ch))
                             : rows * a.width * ch;
    constexpr int64_t kPointerFloats = static_cast<int64_t>(sizeof(void*) / sizeof(float));
    return {round16(in_rows * ch), round16(out), round16(ring_rows * kPointerFloats)};
  }
  static int64_t thread_floats(const ConvMlpAttrs& a, int64_t rows, int64_t c, int64_t ch, bool bf16) {
    const ThreadRegions t = thread_regions(a, rows, c, ch, bf16);
    return t.ring + t.out + t.table;
  }

 protected:
  Status compute(const KernelArgs& args) override {
    for (int i : {1, 5})
      if (args.src[i]->shape != planned_src_[i]) return fail("weight shapes differ from the plan");
    auto in = [&](int i) { return i < args.num_src && args.src[i] ? args.src[i]->f32() : nullptr; };
    const int threads = run_threads(args, planned_threads_);
    const ThreadRegions regions = thread_regions(a_, rows_, c_, ch_, ctx_->bf16);
    const int64_t per_thread = regions.ring + regions.out + regions.table;
    VITRT_RETURN_IF_ERROR(check_workspace(args, per_thread * threads));
    const float* b1 = in(2);
    const float* b2 = in(6);
    if (b1) std::copy(b1, b1 + ch_, fc1b_ ? fc1b_->bias.data() : fc1_->bias.data());  // zero-padded to panels
    if (b2) std::copy(b2, b2 + co_, fc2b_ ? fc2b_->bias.data() : fc2_->bias.data());
    const int64_t batch = args.src[0]->shape[0], h = a_.height;
    // Row segments per image: enough that the (image, segment) tasks split evenly over the threads.
    const int64_t segments =
        std::min<int64_t>(h, threads / std::gcd<int64_t>(std::max<int64_t>(batch, 1), threads));
    DepthwiseRow conv;
    conv.w = conv.wo = a_.width;
    conv.c = ch_;
    conv.wt = dw_.data();
    conv.kh = 2 * a_.pad_h + 1;
    conv.kw = 2 * a_.pad_w + 1;
    conv.pad_h = a_.pad_h;
    conv.pad_w = a_.pad_w;
    conv.bias = in(4);
    conv.act = gemm_act(a_.dw_activation);
    const Band band{in(0), in(7), args.dst[0]->f32(), b1 != nullptr, b2 != nullptr, conv};
    float* workspace = static_cast<float*>(args.workspace);
    ThreadPool::parallel_for(batch * segments, threads, [&](int64_t lo, int64_t hi, int t) {
      float* rows_in = workspace + t * per_thread;
      float* rows_out = rows_in + regions.ring;  // fp32; in bf16 the pairs
      const float** table = reinterpret_cast<const float**>(rows_out + regions.out);
      for (int64_t task = lo; task < hi; ++task) {
        const int64_t s = task % segments;
        run_segment(band, task / segments, s * h / segments, (s + 1) * h / segments, rows_in, rows_out,
                    table);
      }
    });
    return Status::Ok();
  }

 private:
  struct Band {
    const float* src;
    const float* residual;
    float* dst;
    bool bias1, bias2;
    DepthwiseRow conv;
  };

  // Output rows [y0, y1) of image b, a band of rows_ rows at a time. The ring `rows_in` holds fc1 rows
  // [lo, hi) of the image (row y in slot y mod ring); the conv sees them through `table` as an image of
  // hi - lo rows, whose edges are the real image's edges exactly where the band touches them.
  // `rows_out`: the conv's output band in fp32; in bf16 the GEMMs' rounded inputs (fc1's rows in pairs, then
  // the conv's output band in pairs, which fc2 reads).
  void run_segment(const Band& band, int64_t b, int64_t y0, int64_t y1, float* rows_in, float* rows_out,
                   const float** table) const {
    const int64_t w = a_.width, h = a_.height, n = h * w, c = c_, co = co_, row = w * ch_;
    const float* src = band.src + b * n * c;
    const bool bf16 = fc1b_.has_value();
    // Rows of pairs, in bf16 values (2 per pair).
    const int64_t ld_bf16 = 2 * gemm_bf16_pairs(ch_);
    auto dw_row = bf16                           ? depthwise_nhwc_row_bf16_avx512bf16
                  : ctx_->isa == X86Isa::kAvx512 ? depthwise_nhwc_row_avx512
                                                 : depthwise_nhwc_row_avx2;
    const int64_t ring = rows_ + 2 * a_.pad_h;  // need_hi - need_lo <= ring: a band's rows never collide
    int64_t hi = 0;
    for (int64_t r0 = y0; r0 < y1; r0 += rows_) {
      const int64_t r1 = std::min(y1, r0 + rows_);
      const int64_t need_lo = std::max<int64_t>(0, r0 - a_.pad_h), need_hi = std::min(h, r1 + a_.pad_h);
      // fc1 on the rows not kept from the previous band, in runs of slots up to the ring's end.
      for (int64_t y = std::max(hi, need_lo); y < need_hi;) {
        const int64_t slot = y % ring, n_rows = std::min(need_hi - y, ring - slot);
        linear(fc1_, fc1b_, src + y * w * c, n_rows * w, band.bias1, a_.fc1_activation, nullptr,
               rows_in + slot * row, ch_, rows_out);
        y += n_rows;
      }
      const int64_t lo = need_lo;
      hi = need_hi;
      for (int64_t y = lo; y < hi; ++y) table[y - lo] = rows_in + (y % ring) * row;
      DepthwiseRow r = band.conv;
      r.src_rows = table;
      r.h = hi - lo;
      r.ld_bf16 = ld_bf16;
      for (int64_t oy = r0; oy < r1; ++oy) {
        r.oy = oy - lo;
        if (bf16)
          r.dst_bf16 = reinterpret_cast<uint16_t*>(rows_out) + (oy - r0) * w * ld_bf16;
        else
          r.dst = rows_out + (oy - r0) * row;
        dw_row(r);
      }
      const int64_t at = (b * n + r0 * w) * co;
      const GemmAct act2 = gemm_act(a_.fc2_activation);
      const float* residual = band.residual ? band.residual + at : nullptr;
      if (bf16)
        fc2b_->run_pairs(rows_out, (r1 - r0) * w, band.bias2, act2, residual, band.dst + at, co);
      else
        fc2_->run(rows_out, (r1 - r0) * w, band.bias2, act2, residual, band.dst + at, co);
    }
  }

  // fc1 on whichever GEMM the precision chose (`pairs`: its input rounded, in bf16).
  static void linear(const std::optional<PackedLinear>& f32, const std::optional<PackedLinearBf16>& bf16,
                     const float* src, int64_t m, bool bias, Activation act, const float* residual,
                     float* dst, int64_t ldc, float* pairs) {
    if (bf16)
      bf16->run(src, m, bias, gemm_act(act), residual, dst, ldc, pairs);
    else
      f32->run(src, m, bias, gemm_act(act), residual, dst, ldc);
  }

  std::shared_ptr<Context> ctx_;
  ConvMlpAttrs a_;
  int64_t rows_;
  int planned_threads_;
  int64_t ch_, c_, co_;                          // hidden, input and output widths
  std::optional<PackedLinear> fc1_, fc2_;        // fp32
  std::optional<PackedLinearBf16> fc1b_, fc2b_;  // session precision bf16
  std::vector<float> dw_;                        // [kh][kw][Ch]
};

}  // namespace

Status create_conv_mlp(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                       std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const ConvMlpAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  if (!ref::activation_valid(a->fc1_activation) || !ref::activation_valid(a->dw_activation) ||
      !ref::activation_valid(a->fc2_activation))
    return Status::Ok();  // the reference reports it
  const Shape& xs = plan.src_shapes[0];
  if (xs.rank != 3 || xs.numel() == 0 || plan.num_src < 6 || !constant_input(plan, 1) ||
      !constant_input(plan, 3) || !constant_input(plan, 5) || plan.src_shapes[1].rank != 2 ||
      plan.src_shapes[5].rank != 2 || plan.src_shapes[3].rank != 4)
    return Status::Ok();  // weights computed at run time, or malformed: the reference (which reports it)
  const int64_t ch = plan.src_shapes[1][0], kh = plan.src_shapes[3][2], kw = plan.src_shapes[3][3];
  if (plan.src_shapes[3][0] != ch || plan.src_shapes[3][1] != 1) return Status::Ok();
  // Band rows: enough tokens per band (2·max(C, Co)) that the weights, read once per band, cost less traffic
  // than the hidden band itself (lavit b8, 2 threads: 4 rows at 56x56xC=64 and 8-16 at 28x28xC=128 measured
  // best; 2 rows cost 3% and 6% more); options.conv_mlp_rows (VITRT_CONV_MLP_ROWS) overrides it for
  // measurements.
  const int64_t width_in = std::max(plan.src_shapes[1][1], plan.src_shapes[5][0]);
  int64_t rows = std::max<int64_t>(1, (2 * width_in + a->width - 1) / a->width);
  if (ctx->options.conv_mlp_rows > 0) rows = ctx->options.conv_mlp_rows;
  rows = std::min<int64_t>(rows, a->height);
  std::vector<float> dw(static_cast<size_t>(ch * kh * kw));
  const float* w = plan.src_tensors[3]->f32();
  for (int64_t c = 0; c < ch; ++c)
    for (int64_t k = 0; k < kh * kw; ++k) dw[static_cast<size_t>(k * ch + c)] = w[c * kh * kw + k];
  auto k = std::make_unique<ConvMlpKernel>(plan, ctx, *a, rows, std::move(dw));
  if (!k->ok()) return out_of_memory("ConvMlp '" + plan.node->name + "': cannot allocate the packed weights");
  const int threads = plan.num_threads < 1 ? 1 : plan.num_threads;
  info->copied_srcs = 0b101010;  // fc1's and fc2's weights packed, the depthwise weight reordered into dw_
  info->workspace_bytes =
      static_cast<size_t>(ConvMlpKernel::thread_floats(*a, rows, plan.src_shapes[1][1], ch, ctx->bf16) *
                          threads) *
      4;
  if (ctx->options.verbose)
    std::fprintf(stderr, "vitrt x86: ConvMlp '%s' %s, hidden %lld: bands of %lld rows%s\n",
                 plan.node->name.c_str(), xs.str().c_str(), static_cast<long long>(ch),
                 static_cast<long long>(rows), ctx->bf16 ? ", fc1/fc2 in bf16" : "");
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
