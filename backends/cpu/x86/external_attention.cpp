// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// ExternalAttention (docs/linear_attention.md, "External Attention") on x86. The softmax runs over the
// TOKENS, so every memory slot's normalisation needs statistics over all N tokens of its (batch, head) before
// any token's slot normalisation. The kernel keeps each item's logits [N][Sp] (S memory slots, padded to Sp)
// in the workspace rather than recomputing them: S is the small external memory (64 in EAMLP), so that is
// the size of the head's own tokens when S = dh, and recomputing would cost a third GEMM. Never N×N.
// Three passes over tasks (item = (batch, head), token block of kTokenBlock rows), each pass threaded, with
// a reduction per item between them:
//   1. L_blk = x_blk·W0ᵀ + b0 on the packed GEMM (packed_gemm.h), read straight from the [B,N,C] input (row
//      stride C); then the block's column maxima.
//      Per item: m = the column maxima over its blocks.
//   2. L_blk = exp(L_blk − m) in place (vector exp) and the block's float column sums.
//      Per item: r = float(1 / z), z the column sums over its blocks in double (the reference: float(1 /
//      sum), the sum in double).
//   3. each token row a = e·r, divided by eps + its double slot sum (the reference's own scalar arithmetic);
//      then dst_blk = a·W1ᵀ + b1 on the packed GEMM, stored into the merged [B,N,C] output (row stride C).
// The per-item reductions run once per item, not once per task: per task they cost blocks·Sp each, which made
// the whole op grow with N² (5.2× the time from 3136 to 12544 tokens, docs/scaling.md).
// The reference sums every logit and output in the same order with separate multiplies and adds where the
// GEMM uses FMA; its exp is std::exp where this one is xsimd's; its column sums are one double sum where
// these are float sums per block: values agree to a few float roundings.
//
// Workspace (floats, every region 64-byte aligned), at the run's batch (never more than planned):
// (W0, b0, W1 and b1 are packed at plan time, in the kernel.)
//   shared: L [B·heads][N][Sp],
//           block maxima and block sums [B·heads][blocks][Sp] each,
//           per item m, then r [B·heads][Sp].
#include <algorithm>
#include <cstring>

#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/x86/aligned_buffer.h"
#include "backends/cpu/x86/external_attention_simd.h"
#include "backends/cpu/x86/packed_gemm.h"
#include "backends/cpu/x86/thread_pool.h"
#include "backends/cpu/x86/x86_internal.h"
#include "backends/operand_check.h"
#include "common/checked_math.h"
#include "ops/external_attention_attrs.h"

namespace vitrt {
namespace x86 {
namespace {

constexpr int64_t kTokenBlock = 64;  // token rows per task: its logits block (64·Sp floats) stays in L1/L2

struct Layout {
  int64_t sp = 0, blocks = 0, items = 0;
  int64_t logits = 0, bmax = 0, bsum = 0, stats = 0;
  int64_t total = 0;  // floats
};

// Offsets of every region for `d`; false when the sizes overflow.
bool layout_of(const ExternalAttentionDims& d, Layout* l) {
  l->sp = round16(d.slots);
  l->blocks = (d.tokens + kTokenBlock - 1) / kTokenBlock;
  int64_t at = 0;
  auto region = [&](int64_t floats, int64_t* offset) {
    *offset = at;
    return floats >= 0 && checked_add(at, round16(floats), &at);
  };
  int64_t lg = 0, st = 0, per_item = 0;
  return checked_mul(d.batch, d.heads, &l->items) && checked_mul(l->items, d.tokens, &lg) &&
         checked_mul(lg, l->sp, &lg) && checked_mul(l->items, l->blocks, &st) &&
         checked_mul(st, l->sp, &st) && checked_mul(l->sp, l->items, &per_item) && region(lg, &l->logits) &&
         region(st, &l->bmax) && region(st, &l->bsum) && region(per_item, &l->stats) &&
         (l->total = at, at < (int64_t{1} << 62) / static_cast<int64_t>(sizeof(float)));
}

// dst[0, n) = b, zero up to `padded` (or all zero without a bias).
void pad_bias(const float* b, int64_t n, int64_t padded, float* dst) {
  for (int64_t i = 0; i < padded; ++i) dst[i] = b && i < n ? b[i] : 0.0f;
}

class ExternalAttentionKernel final : public ref::RefKernel {
 public:
  ExternalAttentionKernel(const KernelPlan& plan, const ExternalAttentionSimd* simd, const GemmKernels* g0,
                          const GemmKernels* g1, const ExternalAttentionAttrs& a,
                          const ExternalAttentionDims& d)
      : RefKernel(plan),
        simd_(simd),
        g0_(g0),
        g1_(g1),
        a_(a),
        planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads),
        w0p_(static_cast<size_t>(gemm_panels(d.slots, g0->nr) * g0->nr * d.head_dim)),
        b0p_(static_cast<size_t>(gemm_panels(d.slots, g0->nr) * g0->nr)),
        w1p_(static_cast<size_t>(gemm_panels(d.head_dim, g1->nr) * g1->nr * d.slots)),
        b1p_(static_cast<size_t>(gemm_panels(d.head_dim, g1->nr) * g1->nr)) {
    // The memory's weights are constants (create_external_attention checks): packed once, here.
    if (!ok()) return;
    gemm_pack_transposed(plan.src_tensors[1]->f32(), d.slots, d.head_dim, g0->nr, w0p_.data());
    gemm_pack_transposed(plan.src_tensors[3]->f32(), d.head_dim, d.slots, g1->nr, w1p_.data());
    pad_bias(d.has_b0 ? plan.src_tensors[2]->f32() : nullptr, d.slots, static_cast<int64_t>(b0p_.size()),
             b0p_.data());
    pad_bias(d.has_b1 ? plan.src_tensors[4]->f32() : nullptr, d.head_dim, static_cast<int64_t>(b1p_.size()),
             b1p_.data());
  }
  bool ok() const { return w0p_ && b0p_ && w1p_ && b1p_; }

 protected:
  Status compute(const KernelArgs& args) override {
    const Shape* shapes[kMaxOpInputs] = {};
    run_src_shapes(args, shapes);
    ExternalAttentionDims d;
    const Status decoded = decode_external_attention(a_, shapes, args.num_src, &d);
    if (!decoded.ok()) return fail(decoded.message());
    if (d.batch == 0 || d.tokens == 0) return Status::Ok();
    const int nt = run_threads(args, planned_threads_);
    Layout l;
    if (!layout_of(d, &l)) return fail("workspace size overflows");
    VITRT_RETURN_IF_ERROR(check_workspace(args, l.total));
    float* ws = static_cast<float*>(args.workspace);
    const float* src = args.src[0]->f32();
    float* dst = args.dst[0]->f32();
    const int64_t tasks = l.items * l.blocks, n = d.tokens, sp = l.sp, s = d.slots;

    // Where task t works: its item, the first token and the number of token rows, and its logits.
    struct Task {
      int64_t item, block, i0, rows;
      float* logits;
    };
    auto task = [&](int64_t t) {
      Task k;
      k.item = t / l.blocks;
      k.block = t % l.blocks;
      k.i0 = k.block * kTokenBlock;
      k.rows = std::min(kTokenBlock, n - k.i0);
      k.logits = ws + l.logits + (k.item * n + k.i0) * sp;
      return k;
    };
    auto token_offset = [&](const Task& k) {  // element offset of the task's first token in src / dst
      return (k.item / d.heads * n + k.i0) * d.channels + k.item % d.heads * d.head_dim;
    };
    // 1. logits, then each block's column maxima.
    ThreadPool::parallel_for(tasks, nt, [&](int64_t lo, int64_t hi, int) {
      for (int64_t t = lo; t < hi; ++t) {
        const Task k = task(t);
        GemmEpilogue e;
        e.bias_cols = b0p_.data();
        gemm_packed_product(g0_, src + token_offset(k), d.channels, k.rows, d.head_dim, w0p_.data(), s,
                            k.logits, sp, e);
        if (sp > s)
          for (int64_t i = 0; i < k.rows; ++i)
            std::memset(k.logits + i * sp + s, 0, (sp - s) * sizeof(float));
        simd_->column_max(k.logits, k.rows, sp, sp, ws + l.bmax + t * sp);
      }
    });
    // m per item: the column maxima over its blocks, in block order.
    ThreadPool::parallel_for(l.items, nt, [&](int64_t lo, int64_t hi, int) {
      for (int64_t item = lo; item < hi; ++item) {
        const float* bmax = ws + l.bmax + item * l.blocks * sp;
        float* m = ws + l.stats + item * sp;
        std::copy(bmax, bmax + sp, m);
        for (int64_t b = 1; b < l.blocks; ++b)
          for (int64_t j = 0; j < sp; ++j) m[j] = bmax[b * sp + j] > m[j] ? bmax[b * sp + j] : m[j];
      }
    });
    // 2. exp(L − m) in place; each block's column sums.
    ThreadPool::parallel_for(tasks, nt, [&](int64_t lo, int64_t hi, int) {
      for (int64_t t = lo; t < hi; ++t) {
        const Task k = task(t);
        simd_->exp_columns(k.logits, k.rows, sp, sp, ws + l.stats + k.item * sp, ws + l.bsum + t * sp);
      }
    });
    // r per item (over m's slots): the softmax's 1/z, z the column sums over its blocks in double, in order.
    ThreadPool::parallel_for(l.items, nt, [&](int64_t lo, int64_t hi, int) {
      for (int64_t item = lo; item < hi; ++item) {
        const float* bsum = ws + l.bsum + item * l.blocks * sp;
        float* r = ws + l.stats + item * sp;
        for (int64_t j = 0; j < s; ++j) {
          double z = 0.0;
          for (int64_t b = 0; b < l.blocks; ++b) z += bsum[b * sp + j];
          r[j] = static_cast<float>(1.0 / z);
        }
      }
    });
    // 3. the slot normalisation per token, then the second product into dst.
    ThreadPool::parallel_for(tasks, nt, [&](int64_t lo, int64_t hi, int) {
      for (int64_t t = lo; t < hi; ++t) {
        const Task k = task(t);
        const float* r = ws + l.stats + k.item * sp;
        for (int64_t i = 0; i < k.rows; ++i) {
          float* row = k.logits + i * sp;
          double sum = 0.0;
          for (int64_t j = 0; j < s; ++j) {
            row[j] *= r[j];
            sum += row[j];
          }
          const float denom = a_.eps + static_cast<float>(sum);
          for (int64_t j = 0; j < s; ++j) row[j] = row[j] / denom;
        }
        GemmEpilogue e;
        e.bias_cols = b1p_.data();
        gemm_packed_product(g1_, k.logits, sp, k.rows, s, w1p_.data(), d.head_dim, dst + token_offset(k),
                            d.channels, e);
      }
    });
    return Status::Ok();
  }

 private:
  const ExternalAttentionSimd* simd_;
  const GemmKernels* g0_;  // the tile for the logits (n = S)
  const GemmKernels* g1_;  // the tile for the output (n = dh)
  ExternalAttentionAttrs a_;
  int planned_threads_;
  AlignedFloats w0p_, b0p_, w1p_, b1p_;  // packed at plan time: W0ᵀ, b0, W1ᵀ, b1 (padded to whole panels)
};

}  // namespace

// Declines (no kernel: the reference runs and reports) anything the reference factory would reject.
Status create_external_attention(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                                 std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const ExternalAttentionAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  if (plan.num_dst != 1) return Status::Ok();
  const Shape* shapes[kMaxOpInputs] = {};
  planned_src_shapes(plan, shapes);
  ExternalAttentionDims d;
  if (!decode_external_attention(*a, shapes, plan.num_src, &d).ok()) return Status::Ok();
  const bool avx512 = ctx->isa == X86Isa::kAvx512;
  const ExternalAttentionSimd* simd =
      avx512 ? external_attention_simd_avx512() : external_attention_simd_avx2();
  const int64_t rows = std::min(kTokenBlock, std::max<int64_t>(d.tokens, 1));
  const GemmKernels* g0 = gemm_kernels_for(avx512, rows, d.slots, d.head_dim, ctx->options.gemm_tile);
  const GemmKernels* g1 = gemm_kernels_for(avx512, rows, d.head_dim, d.slots, ctx->options.gemm_tile);
  Layout l;
  if (!layout_of(d, &l)) return Status::Ok();
  // Memory weights computed at run time: the reference runs (they are initializers in every known model).
  if (!constant_input(plan, 1) || !constant_input(plan, 3) || (d.has_b0 && !constant_input(plan, 2)) ||
      (d.has_b1 && !constant_input(plan, 4)))
    return Status::Ok();
  auto k = std::make_unique<ExternalAttentionKernel>(plan, simd, g0, g1, *a, d);
  if (!k->ok())
    return out_of_memory("ExternalAttention '" + plan.node->name + "': cannot allocate the packed weights");
  info->workspace_bytes = static_cast<size_t>(l.total) * sizeof(float);
  info->copied_srcs = 0b11110;  // the memory's weights and biases, packed and padded at creation
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
