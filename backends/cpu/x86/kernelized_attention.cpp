// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// KernelizedAttention on x86 (core/ir/op_attrs.h; docs/linear_attention.md): the reference kernel's
// arithmetic (backends/cpu/ref/kernelized_attention.cpp, the same feature maps from kernelized_features.h),
// with the two products on LinearAttention's FMA row loops (linear_attention_simd.h: AVX-512 or AVX2, each
// element summed in the reference's order with one FMA per term). Per (image, head) item:
//   1. φk(K) [N][dk] and V copied to [N][dvp] (dv padded to whole vectors with zeros);
//   2. KV = φk(K)ᵀ·V [dk][dvp] summed over the tokens in order. For kEluNormalized V's copy carries a column
//      of ones at dv, so KV's column dv is the key sum Σ_s φk(K_s) (a product with 1 is exact);
//   3. per block of kBlock tokens, φq [kBlock][dk] and φq·KV [kBlock][dvp] (column dv: the normaliser's dot
//      product), scaled by 1/(dot + eps) for kEluNormalized and written to the merged [B,N,h·dv] output.
// Nothing is N×N. With at least as many items as threads the items run in parallel on per-thread scratch;
// with fewer, the items run one after another and each step is split over the threads (tokens, KV rows,
// output blocks), every element still summed over all its terms in order, so both give the same bits.
#include <algorithm>
#include <cmath>

#include "backends/cpu/ref/kernelized_features.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/x86/linear_attention_simd.h"
#include "backends/cpu/x86/thread_pool.h"
#include "backends/cpu/x86/x86_internal.h"
#include "common/checked_math.h"
#include "ops/kernelized_attention_attrs.h"

namespace vitrt {
namespace x86 {
namespace {

constexpr int64_t kBlock = 32;     // tokens per output block: φq and φq·KV stay in L1
constexpr int64_t kRowBlock = 64;  // tokens per task when one item is split over the threads
constexpr int64_t kKvRows = 6;     // KV rows per task (the row loop's tile)

// Floats of one thread's scratch, and the offsets in it (each region 64-byte aligned).
struct Layout {
  int64_t dvp = 0;  // dv (+1 for the key-sum column) rounded up to whole vectors
  int64_t vpad = 0, fk = 0, kv = 0, fq = 0, ob = 0, colmax = 0, colsum = 0, per_thread = 0;
};

bool layout_of(const KernelizedGeometry& g, bool key_sum, int width, Layout* l) {
  const int64_t cols = g.dv + (key_sum ? 1 : 0);
  l->dvp = (cols + width - 1) / width * width;
  int64_t off = 0;
  bool ok = true;
  auto take = [&](int64_t rows, int64_t cols_, int64_t* at) {
    int64_t floats = 0;
    ok = ok && checked_mul(rows, cols_, &floats) && checked_add(floats, int64_t{15}, &floats);
    *at = off;
    ok = ok && checked_add(off, floats / 16 * 16, &off);
  };
  take(g.n, l->dvp, &l->vpad);
  take(g.n, g.dk, &l->fk);
  take(g.dk, l->dvp, &l->kv);
  take(kBlock, g.dk, &l->fq);
  take(kBlock, l->dvp, &l->ob);
  take(1, g.dk, &l->colmax);
  take(1, g.dk, &l->colsum);
  l->per_thread = off;
  return ok;
}

class KernelizedAttentionKernel final : public ref::RefKernel {
 public:
  KernelizedAttentionKernel(const KernelPlan& plan, const LinearAttentionSimd* simd,
                            const KernelizedAttentionAttrs& a)
      : RefKernel(plan), simd_(simd), a_(a), planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {}

 protected:
  Status compute(const KernelArgs& args) override {
    Run r;
    const Status s =
        decode_kernelized_geometry(a_, args.src[0]->shape, args.src[1]->shape, args.src[2]->shape, &r.g);
    if (!s.ok()) return fail(s.message());
    if (!layout_of(r.g, key_sum(), simd_->width, &r.l)) return fail("workspace size overflows");
    const int nt = run_threads(args, planned_threads_);
    int64_t floats = 0;
    if (!checked_mul(r.l.per_thread, static_cast<int64_t>(nt), &floats))
      return fail("workspace size overflows");
    VITRT_RETURN_IF_ERROR(check_workspace(args, floats));
    r.ws = static_cast<float*>(args.workspace);
    r.q = args.src[0]->f32();
    r.k = args.src[1]->f32();
    r.v = args.src[2]->f32();
    r.out = args.dst[0]->f32();
    const KernelizedGeometry& g = r.g;
    const int64_t items = g.batch * g.heads;
    if (items >= nt) {
      ThreadPool::parallel_for(items, nt, [&](int64_t lo, int64_t hi, int tid) {
        for (int64_t item = lo; item < hi; ++item) {
          copy_values(r, item, 0, g.n, tid);
          key_features(r, item, 0, g.dk, tid);
          kv_rows(r, 0, g.dk, tid);
          output_rows(r, item, 0, g.n, tid, tid);
        }
      });
      return Status::Ok();
    }
    const int64_t row_tasks = (g.n + kRowBlock - 1) / kRowBlock;
    const int64_t kv_tasks = (g.dk + kKvRows - 1) / kKvRows;
    const int64_t out_tasks = (g.n + kBlock - 1) / kBlock;
    for (int64_t item = 0; item < items; ++item) {  // the steps share thread 0's V copy, φk(K) and KV
      ThreadPool::parallel_for(row_tasks, nt, [&](int64_t lo, int64_t hi, int) {
        copy_values(r, item, lo * kRowBlock, std::min(hi * kRowBlock, g.n), 0);
      });
      ThreadPool::parallel_for(g.dk, nt,
                               [&](int64_t lo, int64_t hi, int) { key_features(r, item, lo, hi, 0); });
      ThreadPool::parallel_for(kv_tasks, nt, [&](int64_t lo, int64_t hi, int) {
        kv_rows(r, lo * kKvRows, std::min(hi * kKvRows, g.dk), 0);
      });
      ThreadPool::parallel_for(out_tasks, nt, [&](int64_t lo, int64_t hi, int tid) {
        output_rows(r, item, lo * kBlock, std::min(hi * kBlock, g.n), 0, tid);
      });
    }
    return Status::Ok();
  }

 private:
  struct Run {
    KernelizedGeometry g;
    Layout l;
    float* ws = nullptr;
    const float *q = nullptr, *k = nullptr, *v = nullptr;
    float* out = nullptr;
    float* thread(int t) const { return ws + t * l.per_thread; }
  };

  bool key_sum() const { return a_.kind == KernelizedKind::kEluNormalized; }

  // Tokens [t0, t1) of the item's V into group s's [N][dvp] copy: zeros beyond dv, a 1 at dv for the key sum.
  void copy_values(const Run& r, int64_t item, int64_t t0, int64_t t1, int s) const {
    const KernelizedGeometry& g = r.g;
    const int64_t b = item / g.heads, h = item % g.heads, cv = g.cv();
    float* vpad = r.thread(s) + r.l.vpad;
    for (int64_t t = t0; t < t1; ++t) {
      const float* src = r.v + (b * g.n + t) * cv + h * g.dv;
      float* dst = vpad + t * r.l.dvp;
      std::copy(src, src + g.dv, dst);
      std::fill(dst + g.dv, dst + r.l.dvp, 0.0f);
      if (key_sum()) dst[g.dv] = 1.0f;
    }
  }

  // Channels [d0, d1) of the item's φk(K) into group s's [N][dk]: elementwise, or the softmax over the tokens
  // of each channel (row by row: the maxima, then exp and the sums in token order, then the divisions; each
  // element as ref::softmax_strided computes it).
  void key_features(const Run& r, int64_t item, int64_t d0, int64_t d1, int s) const {
    const KernelizedGeometry& g = r.g;
    const int64_t b = item / g.heads, h = item % g.heads, cq = g.cq();
    const float* k = r.k + b * g.n * cq + h * g.dk;
    float* fk = r.thread(s) + r.l.fk;
    if (a_.kind != KernelizedKind::kSoftmaxPair) {
      for (int64_t t = 0; t < g.n; ++t)
        for (int64_t d = d0; d < d1; ++d) fk[t * g.dk + d] = ref::elu_feature(k[t * cq + d], a_.scale);
      return;
    }
    float* mx = r.thread(s) + r.l.colmax;
    float* sum = r.thread(s) + r.l.colsum;
    for (int64_t d = d0; d < d1; ++d) {
      mx[d] = -INFINITY;
      sum[d] = 0.0f;
    }
    for (int64_t t = 0; t < g.n; ++t)
      for (int64_t d = d0; d < d1; ++d) mx[d] = std::fmax(mx[d], k[t * cq + d]);
    for (int64_t t = 0; t < g.n; ++t)
      for (int64_t d = d0; d < d1; ++d) {
        const float e = std::exp(k[t * cq + d] - mx[d]);
        fk[t * g.dk + d] = e;
        sum[d] += e;
      }
    for (int64_t t = 0; t < g.n; ++t)
      for (int64_t d = d0; d < d1; ++d) fk[t * g.dk + d] /= sum[d];
  }

  // Rows [d0, d1) of group s's KV = φk(K)ᵀ·V over all tokens in order.
  void kv_rows(const Run& r, int64_t d0, int64_t d1, int s) const {
    const KernelizedGeometry& g = r.g;
    float* base = r.thread(s);
    simd_->gemm(base + r.l.fk + d0, 1, g.dk, base + r.l.vpad, r.l.dvp, d1 - d0, g.n, r.l.dvp, false,
                base + r.l.kv + d0 * r.l.dvp, r.l.dvp);
  }

  // Output tokens [t0, t1) of the item from group s's KV, with thread tid's block scratch.
  void output_rows(const Run& r, int64_t item, int64_t t0, int64_t t1, int s, int tid) const {
    const KernelizedGeometry& g = r.g;
    const int64_t b = item / g.heads, h = item % g.heads, cq = g.cq(), cv = g.cv();
    const float* kv = r.thread(s) + r.l.kv;
    float* fq = r.thread(tid) + r.l.fq;
    float* ob = r.thread(tid) + r.l.ob;
    const bool softmax = a_.kind == KernelizedKind::kSoftmaxPair;
    for (int64_t i = t0; i < t1; i += kBlock) {
      const int64_t nb = std::min(kBlock, t1 - i);
      for (int64_t t = 0; t < nb; ++t) {
        const float* q = r.q + (b * g.n + i + t) * cq + h * g.dk;
        float* f = fq + t * g.dk;
        if (softmax)
          ref::softmax_strided(q, 1, g.dk, f, 1);
        else
          for (int64_t d = 0; d < g.dk; ++d) f[d] = ref::elu_feature(q[d], a_.scale);
      }
      simd_->gemm(fq, g.dk, 1, kv, r.l.dvp, nb, g.dk, r.l.dvp, false, ob, r.l.dvp);
      for (int64_t t = 0; t < nb; ++t) {
        const float* src = ob + t * r.l.dvp;
        float* dst = r.out + (b * g.n + i + t) * cv + h * g.dv;
        const float z = key_sum() ? 1.0f / (src[g.dv] + a_.eps) : 1.0f;
        for (int64_t m = 0; m < g.dv; ++m) dst[m] = src[m] * z;
      }
    }
  }

  const LinearAttentionSimd* simd_;
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
  const LinearAttentionSimd* simd =
      ctx->isa == X86Isa::kAvx512 ? linear_attention_simd_avx512() : linear_attention_simd_avx2();
  Layout l;
  int64_t floats = 0, bytes = 0;
  const int threads = plan.num_threads < 1 ? 1 : plan.num_threads;
  if (!layout_of(g, a->kind == KernelizedKind::kEluNormalized, simd->width, &l) ||
      !checked_mul(l.per_thread, static_cast<int64_t>(threads), &floats) ||
      !checked_mul(floats, static_cast<int64_t>(sizeof(float)), &bytes))
    return bad_model("KernelizedAttention '" + plan.node->name + "': workspace size overflows");
  info->workspace_bytes = static_cast<size_t>(bytes);
  *kernel = std::make_unique<KernelizedAttentionKernel>(plan, simd, *a);
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
