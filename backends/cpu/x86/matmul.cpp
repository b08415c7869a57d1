// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// MatMul (core/ops/matmul.cpp: a [..., M, K] · b [..., K, N], batch axes broadcast numpy-style) on the packed
// GEMM (packed_gemm.h). The GEMM reads A in place, a row-major broadcast per row, and B from column panels,
// so B is the side that is packed, whichever operand is constant:
//   - a constant b (x·W) is packed once at plan time, every batch slice of it;
//   - a run-time b is packed per (batch slice, panel) by the thread that multiplies it, into that thread's
//     workspace slot (k × NR floats), while it stays in cache; nothing is allocated at run time;
//   - a constant a (Linformer's E [k, N] · X[b] [N, C]) needs no packing: it is read in place for every
//   slice.
// When b has no batch (or batch 1) and a is not broadcast, the batch folds into the rows: one GEMM of
// batch·M rows, as Linear. The work is split into (batch slice, panel, row chunk) tasks, enough of them that
// every thread is busy at batch 1. Each output element is summed over k in order with one FMA a step.
#include <algorithm>
#include <cstdio>

#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/x86/aligned_buffer.h"
#include "backends/cpu/x86/packed_gemm.h"
#include "backends/cpu/x86/x86_internal.h"
#include "common/checked_math.h"

namespace vitrt {
namespace x86 {
namespace {

// Only results far beyond the caches are stored non-temporally (their reader would miss anyway).
constexpr int64_t kStreamBytes = int64_t{64} << 20;
// Multiply-adds each thread must have before a product is split over the threads
// (X86Options::matmul_min_macs_per_thread, default 4M): about 40 us of GEMM on one Zen 5 core. Below it,
// waking the other threads and the barrier cost about as much as they save, and on a loaded machine a second
// thread that is not scheduled at once makes the product slower than one thread (DeiT-Tiny's unfused
// attention products, 3 heads × 197 × 197 × 64 = 7.5M multiply-adds, ran 2× slower on 2 threads than on 1).

// The threads worth waking for `macs` multiply-adds: at most `threads`, at least 1.
int threads_for(int threads, double macs, int64_t min_macs_per_thread) {
  const double useful = macs / static_cast<double>(std::max<int64_t>(1, min_macs_per_thread));
  return useful >= threads ? threads : std::max(1, static_cast<int>(useful));
}

// The batch axes of a [..., R, C] shape.
Shape batch_axes(const Shape& s) {
  Shape b = s;
  b.rank = s.rank - 2;
  return b;
}

// Where slice `item` of the output batch `yb` reads its a and b slices (in slices), given the operands'
// broadcast strides over yb.
void slice_offsets(const Shape& yb, const int64_t* sa, const int64_t* sb, int64_t item, int64_t* oa,
                   int64_t* ob) {
  *oa = *ob = 0;
  for (int i = yb.rank - 1; i >= 0; --i) {
    const int64_t idx = item % yb.dims[i];
    item /= yb.dims[i];
    *oa += idx * sa[i];
    *ob += idx * sb[i];
  }
}

class MatMulKernel final : public ref::RefKernel {
 public:
  MatMulKernel(const KernelPlan& plan, std::shared_ptr<Context> ctx)
      : RefKernel(plan),
        ctx_(std::move(ctx)),
        planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads),
        constant_b_(constant_input(plan, 1)) {
    const Shape &as = plan.src_shapes[0], &bs = plan.src_shapes[1];
    k_ = as.dim(-1);
    n_ = bs.dim(-1);
    const bool fold = batch_axes(bs).numel() == 1;  // the usual case for a tile choice: rows of all slices
    const int64_t rows = fold ? as.numel() / k_ : as.dim(-2);
    gemm_ = gemm_kernels_for(ctx_->isa == X86Isa::kAvx512, rows, n_, k_, ctx_->options.gemm_tile);
  }

  // Packs every batch slice of the constant b; false when it cannot be allocated.
  bool pack_constant_b(const KernelPlan& plan) {
    const int64_t slices = batch_axes(plan.src_shapes[1]).numel();
    int64_t floats = 0;
    if (!checked_mul(gemm_packed_floats(n_, k_, gemm_->nr), slices, &floats)) return false;
    packed_b_ = AlignedFloats(static_cast<size_t>(floats));
    if (!packed_b_) return false;
    const float* b = plan.src_tensors[1]->f32();
    for (int64_t s = 0; s < slices; ++s)
      gemm_pack_rows(b + s * k_ * n_, n_, k_, n_, gemm_->nr, packed_b_.data() + s * slice_floats());
    return true;
  }

  // Per planned thread, a run-time b's panel (64-byte aligned slots); nothing for a constant b.
  size_t workspace_bytes() const {
    if (constant_b_) return 0;
    return static_cast<size_t>(planned_threads_) * round16(k_ * gemm_->nr) * sizeof(float) + 64;
  }

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& a = *args.src[0];
    const TensorRef& b = *args.src[1];
    TensorRef& y = *args.dst[0];
    if (a.shape.dim(-1) != k_ || b.shape.dim(-1) != n_)
      return fail("inner sizes " + a.shape.str() + " · " + b.shape.str() + " differ from the plan");
    if (constant_b_ && b.shape != planned_src_[1]) return fail("constant b's shape differs from the plan");
    if (!constant_b_ && args.workspace_bytes < workspace_bytes())
      return fail("workspace smaller than planned");
    const int64_t m = a.shape.dim(-2), k = k_, n = n_;
    if (y.shape.numel() == 0) return Status::Ok();
    const Shape yb = batch_axes(y.shape);
    int64_t sa[kMaxRank] = {}, sb[kMaxRank] = {};
    ref::broadcast_strides(batch_axes(a.shape), yb, sa);
    ref::broadcast_strides(batch_axes(b.shape), yb, sb);
    // b shared by every slice and a not broadcast: the slices are consecutive rows of one product.
    const bool fold = batch_axes(b.shape).numel() == 1 && batch_axes(a.shape).numel() == yb.numel();
    const int64_t slices = fold ? 1 : yb.numel();
    const int64_t rows = fold ? yb.numel() * m : m;
    const int nr = gemm_->nr, mr = gemm_->mr;
    const int threads = threads_for(run_threads(args, planned_threads_),
                                    static_cast<double>(y.shape.numel()) * static_cast<double>(k),
                                    ctx_->options.matmul_min_macs_per_thread);
    const int64_t panels = gemm_panels(n, nr);
    const int64_t row_tiles = (rows + mr - 1) / mr;
    // Row chunks: for a constant b, like Linear, blocks of A that stay in L2 while every panel passes
    // (rows first) when A is the larger operand; then, for every b, enough tasks for each thread to have
    // about four. A run-time b is packed per panel, so its tasks always go panel by panel.
    int64_t chunks = 1;
    bool rows_first = false;
    if (constant_b_) {
      const int64_t chunk_tiles = std::clamp<int64_t>(kGemmRowBlockBytes / (mr * k * 4), 1, row_tiles);
      chunks = (row_tiles + chunk_tiles - 1) / chunk_tiles;
      rows_first = rows > n && row_tiles >= 2 * threads;
    }
    if (threads > 1) chunks = std::max(chunks, (4 * threads + slices * panels - 1) / (slices * panels));
    if (rows_first) chunks = (chunks + threads - 1) / threads * threads;
    chunks = std::min(chunks, row_tiles);
    const GemmKernels* g = gemm_;
    const float* pa = a.f32();
    const float* pb = b.f32();
    float* py = y.f32();
    const float* packed = constant_b_ ? packed_b_.data() : nullptr;
    const int64_t slice = slice_floats();
    float* slots = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(args.workspace) + 63) / 64 * 64);
    const int64_t slot = round16(k * nr);
    const bool stream = y.shape.numel() * 4 > kStreamBytes;
    ThreadPool::parallel_for(slices * panels * chunks, threads, [&](int64_t lo, int64_t hi, int thread) {
      float* own = packed ? nullptr : slots + thread * slot;
      int64_t in_own = -1;  // the (slice, panel) packed in `own`
      for (int64_t t = lo; t < hi; ++t) {
        const int64_t s = t / (panels * chunks), rest = t % (panels * chunks);
        const int64_t p = rows_first ? rest % panels : rest / chunks;
        const int64_t c = rows_first ? rest / panels : rest % chunks;
        const int64_t r0 = std::min(rows, c * row_tiles / chunks * mr),
                      r1 = std::min(rows, (c + 1) * row_tiles / chunks * mr);
        if (r0 >= r1) continue;
        int64_t oa = 0, ob = 0;
        if (!fold) slice_offsets(yb, sa, sb, s, &oa, &ob);
        GemmPanel gp;
        gp.cols = std::min<int64_t>(nr, n - p * nr);
        if (packed) {
          gp.b = packed + ob * slice + p * k * nr;
        } else {
          if (in_own != s * panels + p) {
            gemm_pack_rows(pb + ob * k * n + p * nr, n, k, gp.cols, nr, own);
            in_own = s * panels + p;
          }
          gp.b = own;
        }
        gp.a = pa + (oa * m + r0) * k;
        gp.lda = k;
        gp.m = r1 - r0;
        gp.k = k;
        gp.c = py + (s * m + r0) * n + p * nr;  // folded: s = 0 and r0 counts the rows of every slice
        gp.ldc = n;
        gp.stream = stream;
        g->panel(gp);
      }
    });
    return Status::Ok();
  }

 private:
  int64_t slice_floats() const { return gemm_packed_floats(n_, k_, gemm_->nr); }

  std::shared_ptr<Context> ctx_;
  int planned_threads_;
  bool constant_b_;
  const GemmKernels* gemm_ = nullptr;
  int64_t k_ = 0, n_ = 0;
  AlignedFloats packed_b_;  // constant b: every batch slice, panel after panel
};

}  // namespace

Status create_matmul(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                     std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  if (plan.num_src != 2 || !plan.src_tensors[0] || !plan.src_tensors[1]) return Status::Ok();
  const Shape &as = plan.src_shapes[0], &bs = plan.src_shapes[1];
  if (as.rank < 2 || bs.rank < 2 || as.dim(-1) < 1 || bs.dim(-1) < 1 || plan.dst_shapes[0].numel() == 0)
    return Status::Ok();  // empty products and bad shapes: the reference (which reports the latter)
  // A run-time b's panel slot per thread must be addressable; the constant b's packing is checked below.
  int64_t slot = 0;
  if (!checked_mul(as.dim(-1), 64 * 4, &slot) ||
      !checked_mul(slot, plan.num_threads < 1 ? 1 : plan.num_threads, &slot))
    return Status::Ok();
  auto k = std::make_unique<MatMulKernel>(plan, ctx);
  if (constant_input(plan, 1) && !k->pack_constant_b(plan))
    return out_of_memory("MatMul '" + plan.node->name + "': cannot allocate the packed constant operand " +
                         bs.str());
  info->workspace_bytes = k->workspace_bytes();
  if (constant_input(plan, 1)) info->copied_srcs = 0b10;  // b, packed; a run-time b is packed per run
  if (ctx->options.verbose)
    std::fprintf(stderr, "vitrt x86: MatMul '%s' %s%s · %s%s: packed gemm\n", plan.node->name.c_str(),
                 as.str().c_str(), constant_input(plan, 0) ? " (constant)" : "", bs.str().c_str(),
                 constant_input(plan, 1) ? " (constant, packed once)" : "");
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
