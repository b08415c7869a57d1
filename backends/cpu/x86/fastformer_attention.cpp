// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// FastformerAttention (docs/linear_attention.md, Fastformer) on x86. The op is O(N·C) per head count, so the
// kernel is three streaming passes over the tokens, each split into blocks of kBlock tokens and threaded
// over (batch item, token block):
//   A. per block of q: the query_att scores [rows][h], their block maximum, e = exp(score − block max), the
//      block's Σ e and its pooled Σ e·q [C];
//      then per item the blocks combine in block order (rescaled to the largest block maximum) into p = α·q;
//   B. per block of k: the same with key_att on k∘p (formed in registers) and Σ e·k; the combination times p
//      gives g = β·(k∘p);
//   C. per block: dst = g∘q.
// q is read twice and k once; every sum runs in an order fixed by the block partition, so the result does not
// depend on the thread count. Vector loops: fastformer_impl.h (AVX-512 and AVX2). Workspace (floats, regions
// 64-byte aligned): per (item, block) max [h], Σ e [h], pooled [C]; per item p [C], g [C]; per thread the
// block's scores [kBlock][h].
#include <algorithm>
#include <cmath>

#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/x86/fastformer_simd.h"
#include "backends/cpu/x86/x86_internal.h"
#include "backends/operand_check.h"
#include "ops/fastformer_attention_geometry.h"

namespace vitrt {
namespace x86 {
namespace {

constexpr int64_t kBlock = 32;  // tokens per task: a block of q or k rows (C ≤ 1024: ≤ 128 KiB) stays in L2

int64_t round16(int64_t x) {
  return (x + 15) / 16 * 16;
}

// Offsets in floats from the workspace start. Every count is bounded by the [B,N,C] input's element count
// (at most kMaxTensorElements), so none overflows.
struct Layout {
  int64_t blocks;               // token blocks per item
  int64_t hp, cp;               // heads and channels rounded to 16 floats
  int64_t per_block, block0;    // per (item, block): max [hp], Σ e [hp], pooled [cp]
  int64_t per_item, item0;      // per item: p [cp], g [cp]
  int64_t per_thread, thread0;  // per thread: scores [kBlock][heads]
  int64_t total;
};

Layout layout_of(const FastformerGeometry& s, int threads) {
  Layout l{};
  l.blocks = (s.n + kBlock - 1) / kBlock;
  l.hp = round16(s.heads);
  l.cp = round16(s.c);
  l.per_block = 2 * l.hp + l.cp;
  l.block0 = 0;
  l.per_item = 2 * l.cp;
  l.item0 = l.block0 + s.batch * l.blocks * l.per_block;
  l.per_thread = round16(kBlock * s.heads);
  l.thread0 = l.item0 + s.batch * l.per_item;
  l.total = l.thread0 + threads * l.per_thread;
  return l;
}

class FastformerAttentionKernel final : public ref::RefKernel {
 public:
  FastformerAttentionKernel(const KernelPlan& plan, std::shared_ptr<Context> ctx, const FastformerSimd* simd,
                            const FastformerAttentionAttrs& a)
      : RefKernel(plan),
        ctx_(std::move(ctx)),
        simd_(simd),
        a_(a),
        planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {}

 protected:
  Status compute(const KernelArgs& args) override {
    Run run;
    const Shape* shapes[kMaxOpInputs] = {};
    run_src_shapes(args, shapes);
    const Status decoded = decode_fastformer_geometry(a_, shapes, args.num_src, &run.s);
    if (!decoded.ok()) return fail(decoded.message());
    const FastformerGeometry& s = run.s;
    const int nt = run_threads(args, planned_threads_);
    run.l = layout_of(s, nt);
    VITRT_RETURN_IF_ERROR(check_workspace(args, run.l.total));
    run.ws = static_cast<float*>(args.workspace);
    run.q = args.src[0]->f32();
    run.k = args.src[1]->f32();
    run.dst = args.dst[0]->f32();
    const float* wq = args.src[2]->f32();
    const float* bq = args.src[3]->f32();
    const float* wk = args.src[4]->f32();
    const float* bk = args.src[5]->f32();
    const int64_t tasks = s.batch * run.l.blocks;

    // A: query scores and pooled query per block, then p per item.
    ThreadPool::parallel_for(tasks, nt, [&](int64_t lo, int64_t hi, int tid) {
      for (int64_t t = lo; t < hi; ++t) pool_block(run, t, run.q, nullptr, wq, bq, tid);
    });
    ThreadPool::parallel_for(s.batch, nt, [&](int64_t lo, int64_t hi, int) {
      for (int64_t b = lo; b < hi; ++b) combine(run, b, nullptr, item(run, b));
    });
    // B: key scores of k∘p and pooled k per block, then g per item.
    ThreadPool::parallel_for(tasks, nt, [&](int64_t lo, int64_t hi, int tid) {
      for (int64_t t = lo; t < hi; ++t) pool_block(run, t, run.k, item(run, t / run.l.blocks), wk, bk, tid);
    });
    ThreadPool::parallel_for(s.batch, nt, [&](int64_t lo, int64_t hi, int) {
      for (int64_t b = lo; b < hi; ++b) {
        float* p = item(run, b);
        combine(run, b, p, p + run.l.cp);
      }
    });
    // C: dst = g∘q.
    ThreadPool::parallel_for(tasks, nt, [&](int64_t lo, int64_t hi, int) {
      for (int64_t t = lo; t < hi; ++t) {
        const int64_t b = t / run.l.blocks, i0 = (t % run.l.blocks) * kBlock;
        const int64_t rows = std::min(kBlock, s.n - i0);
        const int64_t off = (b * s.n + i0) * s.c;
        simd_->scale_rows(run.q + off, rows, s.c, item(run, b) + run.l.cp, run.dst + off);
      }
    });
    return Status::Ok();
  }

 private:
  struct Run {
    FastformerGeometry s;
    Layout l;
    float* ws;
    const float *q, *k;
    float* dst;
  };

  static float* partial(const Run& run, int64_t task) {
    return run.ws + run.l.block0 + task * run.l.per_block;
  }
  static float* item(const Run& run, int64_t b) { return run.ws + run.l.item0 + b * run.l.per_item; }

  // Task t = (item, token block) of x: scores of x∘mul (x when mul is null) with weights w [h][C] and bias,
  // the block's per-head maximum, e = exp(score − maximum), Σ e and the pooled Σ e·x into the task's
  // partials.
  void pool_block(const Run& run, int64_t t, const float* x, const float* mul, const float* w,
                  const float* bias, int tid) const {
    const FastformerGeometry& s = run.s;
    const int64_t b = t / run.l.blocks, i0 = (t % run.l.blocks) * kBlock;
    const int64_t rows = std::min(kBlock, s.n - i0);
    const float* xb = x + (b * s.n + i0) * s.c;
    float* e = run.ws + run.l.thread0 + tid * run.l.per_thread;
    simd_->scores(xb, rows, s.c, mul, w, bias, s.heads, a_.scale, e);
    float* mx = partial(run, t);
    float* sum = mx + run.l.hp;
    float* pooled = sum + run.l.hp;
    for (int64_t h = 0; h < s.heads; ++h) {
      float m = -INFINITY;
      for (int64_t r = 0; r < rows; ++r) m = std::max(m, e[r * s.heads + h]);
      float z = 0.0f;
      for (int64_t r = 0; r < rows; ++r) {
        const float v = std::exp(e[r * s.heads + h] - m);
        e[r * s.heads + h] = v;
        z += v;
      }
      mx[h] = m;
      sum[h] = z;
    }
    std::fill(pooled, pooled + s.c, 0.0f);
    simd_->pool(xb, rows, s.c, s.d, e, s.heads, pooled);
  }

  // out[c] = (times ? times[c] : 1)·Σ_blocks exp(max_blk − max)·pooled_blk[c] / Σ_blocks exp(max_blk − max)·
  // Σe_blk over item b's blocks in order, with max the largest block maximum of c's head: the
  // softmax-weighted sum over all tokens.
  void combine(const Run& run, int64_t b, const float* times, float* out) const {
    const FastformerGeometry& s = run.s;
    const Layout& l = run.l;
    const float* first = partial(run, b * l.blocks);
    for (int64_t h = 0; h < s.heads; ++h) {
      float m = -INFINITY;
      for (int64_t k = 0; k < l.blocks; ++k) m = std::max(m, first[k * l.per_block + h]);
      float z = 0.0f;
      for (int64_t k = 0; k < l.blocks; ++k) {
        const float* blk = first + k * l.per_block;
        z += std::exp(blk[h] - m) * blk[l.hp + h];
      }
      for (int64_t c = h * s.d; c < (h + 1) * s.d; ++c) out[c] = 0.0f;
      for (int64_t k = 0; k < l.blocks; ++k) {
        const float* blk = first + k * l.per_block;
        const float f = std::exp(blk[h] - m);
        const float* pooled = blk + 2 * l.hp;
        for (int64_t c = h * s.d; c < (h + 1) * s.d; ++c) out[c] += f * pooled[c];
      }
      for (int64_t c = h * s.d; c < (h + 1) * s.d; ++c) out[c] = out[c] / z * (times ? times[c] : 1.0f);
    }
  }

  std::shared_ptr<Context> ctx_;
  const FastformerSimd* simd_;
  FastformerAttentionAttrs a_;
  int planned_threads_;
};

}  // namespace

// Declines (no kernel: the reference runs and reports) anything the reference factory would reject.
Status create_fastformer_attention(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                                   std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const FastformerAttentionAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  if (plan.num_dst != 1) return Status::Ok();
  const Shape* shapes[kMaxOpInputs] = {};
  planned_src_shapes(plan, shapes);
  FastformerGeometry g;
  if (!decode_fastformer_geometry(*a, shapes, plan.num_src, &g).ok()) return Status::Ok();
  const FastformerSimd* simd =
      ctx->isa == X86Isa::kAvx512 ? fastformer_simd_avx512() : fastformer_simd_avx2();
  const int threads = plan.num_threads < 1 ? 1 : plan.num_threads;
  info->workspace_bytes = static_cast<size_t>(layout_of(g, threads).total) * sizeof(float);
  *kernel = std::make_unique<FastformerAttentionKernel>(plan, ctx, simd, *a);
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
