// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// KernelizedAttention on x86 (core/ir/op_attrs.h; docs/linear_attention.md): the reference kernel's
// arithmetic (backends/cpu/ref/kernelized_attention.cpp, the same feature maps as kernelized_features.h) with
// the two products on the packed GEMM (packed_gemm.h) and the elu feature maps on vectors
// (kernelized_attention_impl.h). Three passes, each threaded over (batch·head item, piece) tasks, so that 3
// heads keep 2 threads busy at batch 1:
//   1. keys: φk(K)ᵀ [dk][N] of each item (elementwise per token block, written transposed; the softmax over
//      the tokens per channel for kSoftmaxPair) and V packed into GEMM panels [N][NR] per token block;
//   2. context: per item and chunk of dk rows, KV rows = φk(K)ᵀ·V on the GEMM, written straight into the
//      panels the output product reads, and for kEluNormalized the key sum Σ_s φk(K_s) of those rows;
//   3. output: per item and block of kBlock tokens, φq [kBlock][dk], φq·KV on the GEMM into the merged
//      [B,N,h·dv] output, then for kEluNormalized each row scaled by 1/(φq·Σφk + eps).
// Nothing is N×N. Every element is computed by one task however the tasks fall on the threads, so the result
// does not depend on the thread count. The GEMM sums each product over its index in order with FMA, the key
// sum and the normaliser's dot product run in vector order, and the vector expm1 is xsimd's: the values equal
// the reference's to rounding, not bit for bit.
//
// Workspace (floats, every region 64-byte aligned), at the run's batch (never more than planned):
//   per item: φk(K)ᵀ [dk][N], packed V [panels][N][NR], the key sum [dk], packed KV [panels][dk][NR];
//   per thread: φq [kBlock][dk] and the normalisers [kBlock].
#include <algorithm>
#include <cmath>

#include "backends/cpu/ref/kernelized_features.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/x86/kernelized_attention_simd.h"
#include "backends/cpu/x86/packed_gemm.h"
#include "backends/cpu/x86/thread_pool.h"
#include "backends/cpu/x86/x86_internal.h"
#include "common/checked_math.h"
#include "ops/kernelized_attention_attrs.h"

namespace vitrt {
namespace x86 {
namespace {

constexpr int64_t kBlock = 64;  // tokens per key / output task: φ of the block stays in L1

// Offsets in floats, each region rounded up to 16; false when a size overflows.
struct Layout {
  int64_t panels = 0;  // of V and of KV (dv columns)
  int64_t per_item = 0, kt = 0, pv = 0, ksum = 0, pkv = 0;
  int64_t thread0 = 0, per_thread = 0, fq = 0, z = 0;
  int64_t total = 0;
};

bool layout_of(const KernelizedGeometry& g, const GemmKernels* gkv, int64_t items, int threads, Layout* l) {
  l->panels = gemm_panels(g.dv, gkv->nr);
  int64_t off = 0;
  bool ok = true;
  auto take = [&](int64_t a, int64_t b, int64_t c = 1) {
    int64_t n = 0;
    ok = ok && checked_mul(a, b, &n) && checked_mul(n, c, &n) && checked_add(n, int64_t{15}, &n);
    const int64_t at = off;
    ok = ok && checked_add(off, n / 16 * 16, &off);
    return at;
  };
  l->kt = take(g.dk, g.n);
  l->pv = take(l->panels, g.n, gkv->nr);
  l->ksum = take(g.dk, 1);
  l->pkv = take(l->panels, g.dk, gkv->nr);
  l->per_item = off;
  off = 0;
  l->fq = take(kBlock, g.dk);
  l->z = take(kBlock, 1);
  l->per_thread = off;
  int64_t all_items = 0, all_threads = 0;
  return ok && checked_mul(l->per_item, items, &all_items) &&
         checked_mul(l->per_thread, int64_t{threads}, &all_threads) &&
         (l->thread0 = all_items, checked_add(all_items, all_threads, &l->total));
}

class KernelizedAttentionKernel final : public ref::RefKernel {
 public:
  KernelizedAttentionKernel(const KernelPlan& plan, const KernelizedSimd* simd, const GemmKernels* gkv,
                            const KernelizedAttentionAttrs& a)
      : RefKernel(plan),
        simd_(simd),
        gkv_(gkv),
        a_(a),
        planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {}

 protected:
  Status compute(const KernelArgs& args) override {
    Run r;
    const Status s =
        decode_kernelized_geometry(a_, args.src[0]->shape, args.src[1]->shape, args.src[2]->shape, &r.g);
    if (!s.ok()) return fail(s.message());
    const KernelizedGeometry& g = r.g;
    if (g.batch == 0 || g.n == 0) return Status::Ok();
    const int nt = run_threads(args, planned_threads_);
    const int64_t items = g.batch * g.heads;
    if (!layout_of(g, gkv_, items, nt, &r.l)) return fail("workspace size overflows");
    VITRT_RETURN_IF_ERROR(check_workspace(args, r.l.total));
    r.ws = static_cast<float*>(args.workspace);
    r.q = args.src[0]->f32();
    r.k = args.src[1]->f32();
    r.v = args.src[2]->f32();
    r.out = args.dst[0]->f32();
    const int64_t blocks = (g.n + kBlock - 1) / kBlock;
    const bool softmax = a_.kind == KernelizedKind::kSoftmaxPair;
    // 1. φk(K)ᵀ and packed V.
    if (softmax)
      ThreadPool::parallel_for(items * g.dk, nt, [&](int64_t lo, int64_t hi, int) {
        for (int64_t t = lo; t < hi; ++t) softmax_key_channel(r, t / g.dk, t % g.dk);
      });
    ThreadPool::parallel_for(items * blocks, nt, [&](int64_t lo, int64_t hi, int tid) {
      for (int64_t t = lo; t < hi; ++t) key_block(r, t / blocks, t % blocks * kBlock, !softmax, tid);
    });
    // 2. KV rows (and the key sum), each item's in two chunks of whole row tiles: few enough that the GEMM
    // reuses each block of packed V over many row tiles, enough that 3 heads keep 2 threads busy.
    const int64_t tiles = (g.dk + gkv_->mr - 1) / gkv_->mr, chunk_rows = (tiles + 1) / 2 * gkv_->mr;
    const int64_t row_chunks = (g.dk + chunk_rows - 1) / chunk_rows;
    ThreadPool::parallel_for(items * row_chunks, nt, [&](int64_t lo, int64_t hi, int) {
      for (int64_t t = lo; t < hi; ++t) {
        const int64_t d0 = t % row_chunks * chunk_rows;
        context_rows(r, t / row_chunks, d0, std::min(g.dk, d0 + chunk_rows));
      }
    });
    // 3. the output, per block of tokens.
    ThreadPool::parallel_for(items * blocks, nt, [&](int64_t lo, int64_t hi, int tid) {
      for (int64_t t = lo; t < hi; ++t) output_block(r, t / blocks, t % blocks * kBlock, tid);
    });
    return Status::Ok();
  }

 private:
  struct Run {
    KernelizedGeometry g;
    Layout l;
    float* ws = nullptr;
    const float *q = nullptr, *k = nullptr, *v = nullptr;
    float* out = nullptr;
    float* item(int64_t i) const { return ws + i * l.per_item; }
    float* thread(int t) const { return ws + l.thread0 + t * l.per_thread; }
  };

  bool key_sum() const { return a_.kind == KernelizedKind::kEluNormalized; }

  // Row d of item i's φk(K)ᵀ for kSoftmaxPair: the softmax over the tokens of channel d (as the reference).
  void softmax_key_channel(const Run& r, int64_t i, int64_t d) const {
    const KernelizedGeometry& g = r.g;
    const float* k = r.k + (i / g.heads) * g.n * g.cq() + (i % g.heads) * g.dk + d;
    ref::softmax_strided(k, g.cq(), g.n, r.item(i) + r.l.kt + d * g.n, 1);
  }

  // Tokens [t0, t0 + kBlock) of item i: V into the packed panels, and with `features` φk(K) into φk(K)ᵀ (the
  // block computed on vectors in thread tid's φq slot, then stored transposed).
  void key_block(const Run& r, int64_t i, int64_t t0, bool features, int tid) const {
    const KernelizedGeometry& g = r.g;
    const int64_t b = i / g.heads, h = i % g.heads, nb = std::min(kBlock, g.n - t0);
    const int nr = gkv_->nr;
    float* item = r.item(i);
    const float* v = r.v + (b * g.n + t0) * g.cv() + h * g.dv;
    for (int64_t p = 0; p < r.l.panels; ++p) {
      const int64_t c0 = p * nr, cols = std::min<int64_t>(nr, g.dv - c0);
      float* dst = item + r.l.pv + (p * g.n + t0) * nr;
      for (int64_t t = 0; t < nb; ++t) {
        std::copy(v + t * g.cv() + c0, v + t * g.cv() + c0 + cols, dst + t * nr);
        std::fill(dst + t * nr + cols, dst + (t + 1) * nr, 0.0f);
      }
    }
    if (!features) return;
    float* f = r.thread(tid) + r.l.fq;
    simd_->elu_rows(r.k + (b * g.n + t0) * g.cq() + h * g.dk, g.cq(), nb, g.dk, a_.scale, f, g.dk);
    float* kt = item + r.l.kt + t0;
    for (int64_t d = 0; d < g.dk; ++d)
      for (int64_t t = 0; t < nb; ++t) kt[d * g.n + t] = f[t * g.dk + d];
  }

  // Rows [d0, d1) of item i's KV = φk(K)ᵀ·V, stored into the panels of packed KV (zero past dv), and of the
  // key sum.
  void context_rows(const Run& r, int64_t i, int64_t d0, int64_t d1) const {
    const KernelizedGeometry& g = r.g;
    const int nr = gkv_->nr;
    float* item = r.item(i);
    const float* kt = item + r.l.kt;
    for (int64_t p = 0; p < r.l.panels; ++p) {
      GemmPanel gp;
      gp.a = kt + d0 * g.n;
      gp.lda = g.n;
      gp.m = d1 - d0;
      gp.k = g.n;
      gp.b = item + r.l.pv + p * g.n * nr;
      gp.cols = std::min<int64_t>(nr, g.dv - p * nr);
      gp.c = item + r.l.pkv + (p * g.dk + d0) * nr;
      gp.ldc = nr;
      gkv_->panel(gp);
      for (int64_t d = 0; d < d1 - d0; ++d) std::fill(gp.c + d * nr + gp.cols, gp.c + (d + 1) * nr, 0.0f);
    }
    if (key_sum())
      for (int64_t d = d0; d < d1; ++d) item[r.l.ksum + d] = simd_->sum(kt + d * g.n, g.n);
  }

  // Output tokens [t0, t0 + kBlock) of item i, with thread tid's block scratch.
  void output_block(const Run& r, int64_t i, int64_t t0, int tid) const {
    const KernelizedGeometry& g = r.g;
    const int64_t b = i / g.heads, h = i % g.heads, nb = std::min(kBlock, g.n - t0);
    float* fq = r.thread(tid) + r.l.fq;
    const float* q = r.q + (b * g.n + t0) * g.cq() + h * g.dk;
    if (a_.kind == KernelizedKind::kSoftmaxPair)
      for (int64_t t = 0; t < nb; ++t) ref::softmax_strided(q + t * g.cq(), 1, g.dk, fq + t * g.dk, 1);
    else
      simd_->elu_rows(q, g.cq(), nb, g.dk, a_.scale, fq, g.dk);
    float* dst = r.out + (b * g.n + t0) * g.cv() + h * g.dv;
    const float* item = r.item(i);
    gemm_packed_product(gkv_, fq, g.dk, nb, g.dk, item + r.l.pkv, g.dv, dst, g.cv());
    if (!key_sum()) return;
    float* z = r.thread(tid) + r.l.z;
    for (int64_t t = 0; t < nb; ++t)
      z[t] = 1.0f / (simd_->dot(fq + t * g.dk, item + r.l.ksum, g.dk) + a_.eps);
    simd_->scale_rows(dst, g.cv(), nb, g.dv, z);
  }

  const KernelizedSimd* simd_;
  // Both products, KV = φk(K)ᵀ·V (dk rows, N deep) and φq·KV (kBlock rows, dk deep): dv columns, and the
  // output product reads KV in the panels the first one writes.
  const GemmKernels* gkv_;
  KernelizedAttentionAttrs a_;
  int planned_threads_;
};

}  // namespace

// Declines (no kernel: the reference runs and reports) anything the reference factory would reject.
Status create_kernelized_attention(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                                   std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const KernelizedAttentionAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  if (plan.num_src != 3 || plan.num_dst != 1) return Status::Ok();
  KernelizedGeometry g;
  if (!decode_kernelized_geometry(*a, plan.src_shapes[0], plan.src_shapes[1], plan.src_shapes[2], &g).ok())
    return Status::Ok();
  const bool avx512 = ctx->isa == X86Isa::kAvx512;
  const KernelizedSimd* simd = avx512 ? kernelized_simd_avx512() : kernelized_simd_avx2();
  const GemmKernels* gkv = gemm_kernels_for(avx512, g.dk, g.dv, g.n, ctx->options.gemm_tile);
  Layout l;
  int64_t items = 0, bytes = 0;
  const int threads = plan.num_threads < 1 ? 1 : plan.num_threads;
  if (!checked_mul(g.batch, g.heads, &items) || !layout_of(g, gkv, items, threads, &l) ||
      !checked_mul(l.total, static_cast<int64_t>(sizeof(float)), &bytes))
    return bad_model("KernelizedAttention '" + plan.node->name + "': workspace size overflows");
  info->workspace_bytes = static_cast<size_t>(bytes);
  *kernel = std::make_unique<KernelizedAttentionKernel>(plan, simd, gkv, *a);
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
