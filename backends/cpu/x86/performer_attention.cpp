// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// PerformerAttention (Performer / FAVOR+; docs/linear_attention.md, Performer) on x86: the reference kernel's
// steps (backends/cpu/ref/performer_attention.cpp) with every product on the packed GEMM and the feature maps
// on vectors (performer_attention_impl.h). Nothing of size N×N exists: per (batch, head) item
//   K. keys, in blocks of kBlock tokens: dn·k rows and ‖k‖², u = (dn·k)·Wᵀ [Nk][m] against Wᵀ packed once per
//      run; the key max (the item's, or for the global stabiliser every item's, taken in a first pass);
//      φ(k) in place, stored transposed [m][Nk]; Σ_n φ(k) [m]; v packed and φ(k)ᵀ·v [m][d], packed for Q.
//   Q. queries, in blocks of kBlock tokens: u = (dn·q)·Wᵀ, φ(q) per row with its own max, the row's
//      denominator φ(q)·Σφ(k), the block's φ(q)·(φ(k)ᵀ·v) on the GEMM, scaled by 1/denominator into [B,N,C].
// With at least as many items as threads each thread runs whole items with its own buffers (group = thread);
// otherwise the items run one after another on group 0's buffers and each step is split over the threads
// (key and query blocks, rows of φ(k)ᵀ·v). Sums run in float (GEMM and vector order), so the results equal
// the reference's to rounding, not bit for bit.
//
// Workspace (floats, every region 64-byte aligned), sized at plan time for the planned threads:
//   shared: the per-thread key maxes [threads] (Wᵀ is packed at plan time, in the kernel);
//   per group: φ(k) rows [Nk][m], φ(k)ᵀ [m][Nk], ‖k‖² terms [Nk], packed v, φ(k)ᵀ·v [m][d] and packed, Σφ(k)
//   [m]; per thread: a block of scaled rows [kBlock][d], their ‖x‖² [kBlock], u [kBlock][m], output
//   [kBlock][d].
#include <algorithm>
#include <cmath>

#include "backends/cpu/ref/performer_features.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/x86/aligned_buffer.h"
#include "backends/cpu/x86/packed_gemm.h"
#include "backends/cpu/x86/performer_attention_simd.h"
#include "backends/cpu/x86/thread_pool.h"
#include "backends/cpu/x86/x86_internal.h"
#include "backends/operand_check.h"
#include "common/checked_math.h"
#include "ops/performer_attention_geometry.h"

namespace vitrt {
namespace x86 {
namespace {

constexpr int64_t kBlock = 64;  // tokens per projection / output block: u [64][m] stays in L2

struct Layout {
  int64_t tmax;                                                  // shared
  int64_t group0, per_group, uk, kt, diag, pv, ctx, pctx, ksum;  // per group
  int64_t thread0, per_thread, xs, sq, uq, ob;                   // per thread
  int64_t total;
};

// Offsets in floats, each region rounded up to 16; false when a size overflows.
struct Taker {
  int64_t off = 0;
  bool ok = true;
  int64_t take(int64_t a, int64_t b = 1) {
    int64_t floats = 0;
    const int64_t at = off;
    if (!checked_mul(a, b, &floats) || !checked_add(floats, int64_t{15}, &floats) ||
        !checked_add(off, floats / 16 * 16, &off))
      ok = false;
    return at;
  }
};

bool layout_of(const PerformerGeometry& g, const GemmKernels* gf, const GemmKernels* gc, int threads,
               Layout* out) {
  Layout l{};
  Taker s;
  l.tmax = s.take(threads);
  l.group0 = s.off;
  Taker p;
  l.uk = p.take(g.nk, g.m);
  l.kt = p.take(g.m, g.nk);
  l.diag = p.take(g.nk);
  l.pv = p.take(gemm_panels(g.d, gc->nr) * gc->nr, g.nk);
  l.ctx = p.take(g.m, g.d);
  l.pctx = p.take(gemm_panels(g.d, gc->nr) * gc->nr, g.m);
  l.ksum = p.take(g.m);
  l.per_group = p.off;
  Taker t;
  l.xs = t.take(kBlock, g.d);
  l.sq = t.take(kBlock);
  l.uq = t.take(kBlock, g.m);
  l.ob = t.take(kBlock, g.d);
  l.per_thread = t.off;
  int64_t groups = 0, threads_all = 0;
  if (!s.ok || !p.ok || !t.ok || !checked_mul(l.per_group, int64_t{threads}, &groups) ||
      !checked_add(l.group0, groups, &l.thread0) ||
      !checked_mul(l.per_thread, int64_t{threads}, &threads_all) ||
      !checked_add(l.thread0, threads_all, &l.total))
    return false;
  *out = l;
  return true;
}

class PerformerAttentionKernel final : public ref::RefKernel {
 public:
  PerformerAttentionKernel(const KernelPlan& plan, const PerformerSimd* simd, const GemmKernels* gf,
                           const GemmKernels* gc, const PerformerAttentionAttrs& a)
      : RefKernel(plan),
        simd_(simd),
        gf_(gf),
        gc_(gc),
        a_(a),
        planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads),
        wp_(static_cast<size_t>(gemm_packed_floats(g_m(plan), g_d(plan), gf->nr))) {
    // The projection is a constant (create_performer_attention checks): packed once, here.
    if (wp_) gemm_pack_transposed(plan.src_tensors[3]->f32(), g_m(plan), g_d(plan), gf->nr, wp_.data());
  }
  bool ok() const { return static_cast<bool>(wp_); }

 protected:
  Status compute(const KernelArgs& args) override {
    const Shape* shapes[kMaxOpInputs] = {};
    run_src_shapes(args, shapes);
    Run run;
    const Status decoded = decode_performer_geometry(a_, shapes, args.num_src, &run.g);
    if (!decoded.ok()) return fail(decoded.message());
    const PerformerGeometry& g = run.g;
    if (g.batch == 0 || g.nq == 0) return Status::Ok();
    const int nt = run_threads(args, planned_threads_);
    if (!layout_of(g, gf_, gc_, nt, &run.l)) return fail("workspace size overflows");
    VITRT_RETURN_IF_ERROR(check_workspace(args, run.l.total));
    run.ws = static_cast<float*>(args.workspace);
    run.q = args.src[0]->f32();
    run.k = args.src[1]->f32();
    run.v = args.src[2]->f32();
    run.out = args.dst[0]->f32();
    run.sc = ref::performer_scalars(g.d, g.m);
    run.softmax = a_.kernel == PerformerKernel::kSoftmax;

    const int64_t items = g.batch * g.heads;
    const int64_t key_blocks = (g.nk + kBlock - 1) / kBlock, query_blocks = (g.nq + kBlock - 1) / kBlock;
    run.global = run.softmax && a_.key_max == PerformerKeyMax::kGlobal;
    if (run.global) {  // one max over every item's keys: a pass of its own before any feature
      float* tmax = run.ws + run.l.tmax;
      for (int t = 0; t < nt; ++t) tmax[t] = -INFINITY;
      ThreadPool::parallel_for(items * key_blocks, nt, [&](int64_t lo, int64_t hi, int tid) {
        float* uq = run.thread(tid) + run.l.uq;
        for (int64_t task = lo; task < hi; ++task) {
          const int64_t bh = task / key_blocks, n0 = task % key_blocks * kBlock;
          const int64_t nb = std::min(kBlock, g.nk - n0);
          project(run, key_row(run, bh, n0), nb, tid, uq, nullptr);
          tmax[tid] = std::max(tmax[tid], simd_->row_max(uq, nb * g.m));
        }
      });
      run.kmax = -INFINITY;
      for (int t = 0; t < nt; ++t) run.kmax = std::max(run.kmax, tmax[t]);
    }

    if (items >= nt) {
      ThreadPool::parallel_for(items, nt, [&](int64_t lo, int64_t hi, int tid) {
        for (int64_t bh = lo; bh < hi; ++bh) {
          key_rows(run, bh, 0, g.nk, tid, tid);
          const float kmax = key_max(run, tid);
          key_features(run, 0, g.nk, kmax, tid);
          key_sums(run, bh, tid);
          context_rows(run, 0, g.m, tid);
          pack_context(run, tid);
          query_rows(run, bh, 0, g.nq, tid, tid);
        }
      });
    } else {
      const int64_t ctx_tasks = (g.m + gc_->mr - 1) / gc_->mr;
      for (int64_t bh = 0; bh < items; ++bh) {  // the items share group 0's buffers
        ThreadPool::parallel_for(key_blocks, nt, [&](int64_t lo, int64_t hi, int tid) {
          key_rows(run, bh, lo * kBlock, std::min(hi * kBlock, g.nk), 0, tid);
        });
        const float kmax = key_max(run, 0);
        ThreadPool::parallel_for(key_blocks, nt, [&](int64_t lo, int64_t hi, int) {
          key_features(run, lo * kBlock, std::min(hi * kBlock, g.nk), kmax, 0);
        });
        key_sums(run, bh, 0);
        ThreadPool::parallel_for(ctx_tasks, nt, [&](int64_t lo, int64_t hi, int) {
          context_rows(run, lo * gc_->mr, std::min(hi * gc_->mr, g.m), 0);
        });
        pack_context(run, 0);
        ThreadPool::parallel_for(query_blocks, nt, [&](int64_t lo, int64_t hi, int tid) {
          query_rows(run, bh, lo * kBlock, std::min(hi * kBlock, g.nq), 0, tid);
        });
      }
    }
    return Status::Ok();
  }

 private:
  struct Run {
    PerformerGeometry g;
    Layout l;
    float* ws;
    const float *q, *k, *v;
    float* out;
    ref::PerformerScalars sc;
    bool softmax, global;
    float kmax = 0.0f;  // the global key max
    float* group(int G) const { return ws + l.group0 + G * l.per_group; }
    float* thread(int t) const { return ws + l.thread0 + t * l.per_thread; }
  };

  static const float* key_row(const Run& run, int64_t bh, int64_t n) {
    const PerformerGeometry& g = run.g;
    return run.k + ((bh / g.heads) * g.nk + n) * g.c + (bh % g.heads) * g.d;
  }

  // u [rows][m] of `rows` token rows from src (stride C) with thread tid's block scratch; the rows' g terms
  // into diag when given.
  void project(const Run& run, const float* src, int64_t rows, int tid, float* u, float* diag) const {
    const PerformerGeometry& g = run.g;
    float* xs = run.thread(tid) + run.l.xs;
    float* sq = run.thread(tid) + run.l.sq;
    simd_->scale_rows(src, g.c, rows, g.d, run.sc.dn, xs, sq);
    gemm_packed_product(gf_, xs, g.d, rows, g.d, wp_.data(), g.m, u, g.m);
    if (diag)
      for (int64_t r = 0; r < rows; ++r) diag[r] = ref::performer_diag(sq[r], run.sc);
  }

  // Keys [n0, n1) of item bh: u and g terms into group G.
  void key_rows(const Run& run, int64_t bh, int64_t n0, int64_t n1, int G, int tid) const {
    float* uk = run.group(G) + run.l.uk;
    float* diag = run.group(G) + run.l.diag;
    for (int64_t n = n0; n < n1; n += kBlock) {
      const int64_t nb = std::min(kBlock, n1 - n);
      project(run, key_row(run, bh, n), nb, tid, uk + n * run.g.m, diag + n);
    }
  }

  // The max the keys' features subtract: the global one, or the largest u of group G's item.
  float key_max(const Run& run, int G) const {
    if (!run.softmax) return 0.0f;
    if (run.global) return run.kmax;
    return simd_->row_max(run.group(G) + run.l.uk, run.g.nk * run.g.m);
  }

  // φ(k) of rows [n0, n1) in place, and transposed into φ(k)ᵀ.
  void key_features(const Run& run, int64_t n0, int64_t n1, float kmax, int G) const {
    const PerformerGeometry& g = run.g;
    float* uk = run.group(G) + run.l.uk;
    float* kt = run.group(G) + run.l.kt;
    const float* diag = run.group(G) + run.l.diag;
    for (int64_t n = n0; n < n1; ++n) {
      float* row = uk + n * g.m;
      if (run.softmax)
        simd_->softmax_features(row, g.m, diag[n], kmax, run.sc);
      else
        simd_->relu_features(row, g.m);
      for (int64_t j = 0; j < g.m; ++j) kt[j * g.nk + n] = row[j];
    }
  }

  // Σ_n φ(k) over group G's rows, and item bh's v packed for φ(k)ᵀ·v.
  void key_sums(const Run& run, int64_t bh, int G) const {
    const PerformerGeometry& g = run.g;
    float* ksum = run.group(G) + run.l.ksum;
    const float* uk = run.group(G) + run.l.uk;
    for (int64_t j = 0; j < g.m; ++j) ksum[j] = 0.0f;
    for (int64_t n = 0; n < g.nk; ++n) simd_->add_row(uk + n * g.m, g.m, ksum);
    const float* v = run.v + (bh / g.heads) * g.nk * g.c + (bh % g.heads) * g.d;
    gemm_pack_rows(v, g.c, g.nk, g.d, gc_->nr, run.group(G) + run.l.pv);
  }

  // Rows [j0, j1) of φ(k)ᵀ·v [m][d].
  void context_rows(const Run& run, int64_t j0, int64_t j1, int G) const {
    const PerformerGeometry& g = run.g;
    if (j1 <= j0) return;
    gemm_packed_product(gc_, run.group(G) + run.l.kt + j0 * g.nk, g.nk, j1 - j0, g.nk,
                        run.group(G) + run.l.pv, g.d, run.group(G) + run.l.ctx + j0 * g.d, g.d);
  }

  void pack_context(const Run& run, int G) const {
    gemm_pack_rows(run.group(G) + run.l.ctx, run.g.d, run.g.m, run.g.d, gc_->nr, run.group(G) + run.l.pctx);
  }

  // Output tokens [i0, i1) of item bh from group G's key results, with thread tid's block scratch.
  void query_rows(const Run& run, int64_t bh, int64_t i0, int64_t i1, int G, int tid) const {
    const PerformerGeometry& g = run.g;
    const int64_t b = bh / g.heads, h = bh % g.heads;
    float* uq = run.thread(tid) + run.l.uq;
    float* ob = run.thread(tid) + run.l.ob;
    float* diag = run.thread(tid) + run.l.sq;  // the ‖q‖² slots become the g terms
    const float* ksum = run.group(G) + run.l.ksum;
    for (int64_t i = i0; i < i1; i += kBlock) {
      const int64_t nb = std::min(kBlock, i1 - i);
      project(run, run.q + (b * g.nq + i) * g.c + h * g.d, nb, tid, uq, diag);
      float d_inv[kBlock];
      for (int64_t r = 0; r < nb; ++r) {
        float* row = uq + r * g.m;
        if (run.softmax)
          simd_->softmax_features(row, g.m, diag[r], simd_->row_max(row, g.m), run.sc);
        else
          simd_->relu_features(row, g.m);
        d_inv[r] = 1.0f / simd_->dot(row, ksum, g.m);
      }
      gemm_packed_product(gc_, uq, g.m, nb, g.m, run.group(G) + run.l.pctx, g.d, ob, g.d);
      for (int64_t r = 0; r < nb; ++r) {
        float* dst = run.out + (b * g.nq + i + r) * g.c + h * g.d;
        for (int64_t e = 0; e < g.d; ++e) dst[e] = ob[r * g.d + e] * d_inv[r];
      }
    }
  }

  const PerformerSimd* simd_;
  const GemmKernels* gf_;  // u = (dn·x)·Wᵀ: n = m
  const GemmKernels* gc_;  // φ(k)ᵀ·v and φ(q)·(φ(k)ᵀ·v): n = d
  PerformerAttentionAttrs a_;
  int planned_threads_;
  AlignedFloats wp_;  // the projection [m,d], packed transposed at plan time

  static int64_t g_m(const KernelPlan& plan) { return plan.src_shapes[3][0]; }
  static int64_t g_d(const KernelPlan& plan) { return plan.src_shapes[3][1]; }
};

}  // namespace

// Declines (no kernel: the reference runs and reports) anything the reference factory would reject.
Status create_performer_attention(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                                  std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const PerformerAttentionAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  const Shape* shapes[kMaxOpInputs] = {};
  planned_src_shapes(plan, shapes);
  PerformerGeometry g;
  if (plan.num_dst != 1 || !decode_performer_geometry(*a, shapes, plan.num_src, &g).ok() || g.nq < 0)
    return Status::Ok();
  const bool avx512 = ctx->isa == X86Isa::kAvx512;
  const PerformerSimd* simd = avx512 ? performer_simd_avx512() : performer_simd_avx2();
  const int threads = plan.num_threads < 1 ? 1 : plan.num_threads;
  const GemmKernels* gf = gemm_kernels_for(avx512, std::max(g.nq, g.nk), g.m, g.d, ctx->options.gemm_tile);
  const GemmKernels* gc = gemm_kernels_for(avx512, std::max(g.nq, g.m), g.d, g.m, ctx->options.gemm_tile);
  Layout l;
  int64_t bytes = 0;
  if (!layout_of(g, gf, gc, threads, &l) ||
      !checked_mul(l.total, static_cast<int64_t>(sizeof(float)), &bytes))
    return bad_model("PerformerAttention '" + plan.node->name + "': workspace size overflows");
  if (!constant_input(plan, 3)) return Status::Ok();  // a projection computed at run time: reference
  auto k = std::make_unique<PerformerAttentionKernel>(plan, simd, gf, gc, *a);
  if (!k->ok())
    return out_of_memory("PerformerAttention '" + plan.node->name +
                         "': cannot allocate the packed projection");
  info->workspace_bytes = static_cast<size_t>(bytes);
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
