// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// NystromAttention (Nyströmformer, docs/linear_attention.md) on x86, threaded over (batch, head) items. The
// reference kernel (backends/cpu/ref/nystrom_attention.cpp) materialises k1 [N,m] and k3 [m,N]; this one
// never holds more than a block of tokens of either, using out = k1·(Z·(k3·V)), equal to (k1·Z)·(k3·V):
//
//   A. per item, in parallel: the landmark means Q̃, K̃ (sums in double), k2 = softmax(Q̃ K̃ᵀ) and its
//      largest column sum (the first iterate's scale).
//   B. in parallel, once the scale is known (for the global initialisation every item's k2 must exist
//      first), tasks of two kinds: per item, the iterations on Z; per (item, chunk of kChunk tokens), k3·V
//      over the chunk's token blocks with a running softmax (per landmark row the running max, the running
//      sum, and the accumulated rows rescaled when the max grows);
//   C. per item: the chunks' partial k3·V merged in chunk order (each rescaled to the largest maximum),
//      W = Z·(k3·V) [m,d] and K̃, each packed once into the item's GEMM panels;
//   D. per (item, block of tokens): k1 = softmax(Q K̃ᵀ) on the packed GEMM, times W on the packed GEMM, plus
//      the depthwise V conv, written into the merged [B,N,C] output.
// B and D split each item over token ranges, so 3 heads keep 2 threads busy; the chunks are fixed by N, not
// by the thread count, so the thread count changes no bit.
//
// Products on the packed GEMM tiles (packed_gemm.h): the two N-sized ones (Q K̃ᵀ and k1·W), the landmark ×
// token-block ones of k3·V (Q̃ K_blockᵀ, with K_blockᵀ packed straight from the keys, scaled; P·V_block, with
// V_block packed straight from the values) and the four m×m products of each iteration (the right operand
// packed per product). The once-per-item k2 and Z·(k3·V) run on the vectorised row loops of the SOFT kernel
// (linear_attention_simd.h). Both have AVX-512 and AVX2 instances. The exps of both softmaxes run on vectors
// (nystrom_attention_simd.h: xsimd's exp, sums in vector order), so the results equal the reference's to
// rounding. m and d are padded to whole vectors (mp, dp) with zero columns so the row loops run on whole
// vectors. Workspace (floats, every region 64-byte aligned, sized at plan time for the planned threads and
// batch):
//   shared: k2 [B·h][m][mp], the column-sum maxima [B·h]; per item Q̃, K̃ [m][d], K̃ᵀ [d][mp], Z [m][mp],
//   packed K̃ and packed W; per (item, chunk) the partial k3·V [m][dp], running max and sum [m];
//   per thread: KV and two temporaries [m][mp], an m×m right operand packed, a key block Kᵀ and a value
//   block packed, the key block's scores [m][T], k3·V and W [m][dp], a query block [T][d] and its k1
//   [T][mp].
#include <algorithm>
#include <cmath>

#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/x86/aligned_buffer.h"
#include "backends/cpu/x86/linear_attention_simd.h"
#include "backends/cpu/x86/nystrom_attention_simd.h"
#include "backends/cpu/x86/packed_gemm.h"
#include "backends/cpu/x86/x86_internal.h"
#include "backends/operand_check.h"
#include "common/checked_math.h"
#include "ops/nystrom_attention_geometry.h"

namespace vitrt {
namespace x86 {
namespace {

constexpr int64_t kBlock = 64;   // tokens per block (a multiple of every vector width)
constexpr int64_t kChunk = 512;  // tokens per k3·V task (whole blocks)

struct Dims : NystromGeometry {
  int64_t mp, dp;
};

// The GEMM tiles of the packed products, each the one that pads its shape the least (packed_gemm.h).
struct Tiles {
  const GemmKernels* qk;       // Q_block·K̃ᵀ: [T, m] over d
  const GemmKernels* out;      // k1·W: [T, d] over m
  const GemmKernels* scores;   // Q̃·K_blockᵀ: [m, T] over d
  const GemmKernels* values;   // P·V_block: [m, d] over T
  const GemmKernels* inverse;  // the iterations' [m, m] over m
};

Tiles tiles_for(bool avx512, const Dims& s, int tile) {
  return {gemm_kernels_for(avx512, kBlock, s.m, s.d, tile), gemm_kernels_for(avx512, kBlock, s.d, s.m, tile),
          gemm_kernels_for(avx512, s.m, kBlock, s.d, tile), gemm_kernels_for(avx512, s.m, s.d, kBlock, tile),
          gemm_kernels_for(avx512, s.m, s.m, s.m, tile)};
}

struct Layout {
  // shared
  int64_t k2, colmax;
  // per item, relative to item(i) = item0 + i·per_item
  int64_t item0, per_item, ql, kl, klt, z, pkl, pw;
  // per (item, chunk), relative to part(i, c) = part0 + (i·chunks + c)·per_part
  int64_t chunks, part0, per_part, acc, rmax, rsum;
  // per thread, relative to thread(t) = thread0 + t·per_thread
  int64_t thread0, per_thread, kv, t1, t2, pmm, pkb, pvb, s3, macc, w, qb, s1;
  int64_t total;
};

// False when the sizes overflow.
bool layout_of(const Dims& s, const Tiles& g, int threads, Layout* l) {
  int64_t off = 0;
  bool ok = true;
  auto take = [&](std::initializer_list<int64_t> dims) {
    int64_t n = 1;
    for (int64_t x : dims) ok = ok && checked_mul(n, x, &n);
    const int64_t at = off;
    ok = ok && checked_add(off, round16(n), &off);
    return at;
  };
  int64_t items = 0;
  ok = ok && checked_mul(s.batch, s.heads, &items);
  l->k2 = take({items, s.m, s.mp});
  l->colmax = take({items});
  const int64_t shared = off;
  off = 0;
  l->ql = take({s.m, s.d});
  l->kl = take({s.m, s.d});
  l->klt = take({s.d, s.mp});
  l->z = take({s.m, s.mp});
  l->pkl = take({gemm_packed_floats(s.m, s.d, g.qk->nr)});
  l->pw = take({gemm_packed_floats(s.d, s.m, g.out->nr)});
  l->per_item = off;
  off = 0;
  l->chunks = (s.n + kChunk - 1) / kChunk;
  l->acc = take({s.m, s.dp});
  l->rmax = take({s.m});
  l->rsum = take({s.m});
  l->per_part = off;
  off = 0;
  l->kv = take({s.m, s.mp});
  l->t1 = take({s.m, s.mp});
  l->t2 = take({s.m, s.mp});
  l->pmm = take({gemm_packed_floats(s.m, s.m, g.inverse->nr)});
  l->pkb = take({gemm_packed_floats(kBlock, s.d, g.scores->nr)});
  l->pvb = take({gemm_packed_floats(s.d, kBlock, g.values->nr)});
  l->s3 = take({s.m, kBlock});
  l->macc = take({s.m, s.dp});
  l->w = take({s.m, s.dp});
  l->qb = take({kBlock, s.d});
  l->s1 = take({kBlock, s.mp});
  l->per_thread = off;
  int64_t item_part = 0, parts = 0, chunk_part = 0, thread_part = 0;
  l->item0 = shared;
  ok = ok && checked_mul(l->per_item, items, &item_part) && checked_add(l->item0, item_part, &l->part0) &&
       checked_mul(items, l->chunks, &parts) && checked_mul(l->per_part, parts, &chunk_part) &&
       checked_add(l->part0, chunk_part, &l->thread0) &&
       checked_mul(l->per_thread, static_cast<int64_t>(threads), &thread_part) &&
       checked_add(l->thread0, thread_part, &l->total);
  return ok;
}

// Softmax of row[0..valid) in place (max subtracted, vector exp and sums), row[valid..cols) set to 0.
void softmax_row(const NystromSimd* ny, float* row, int64_t valid, int64_t cols) {
  const float sum = ny->exp_sum(row, valid, ny->row_max(row, valid));
  ny->scale(row, valid, 1.0f / sum);
  for (int64_t j = valid; j < cols; ++j) row[j] = 0.0f;
}

// dst[i][j] = diag·[i == j] − src[i][j] for j < m, 0 for m <= j < mp.
void diag_minus(float diag, const float* src, int64_t m, int64_t mp, float* dst) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < m; ++j) dst[i * mp + j] = (i == j ? diag : 0.0f) - src[i * mp + j];
    for (int64_t j = m; j < mp; ++j) dst[i * mp + j] = 0.0f;
  }
}

class NystromAttentionKernel final : public ref::RefKernel {
 public:
  NystromAttentionKernel(const KernelPlan& plan, const LinearAttentionSimd* simd, const NystromSimd* ny,
                         bool avx512, int tile, const NystromAttentionAttrs& a)
      : RefKernel(plan),
        simd_(simd),
        ny_(ny),
        avx512_(avx512),
        tile_(tile),
        a_(a),
        planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {}

 protected:
  Status compute(const KernelArgs& args) override {
    const Shape* shapes[kMaxOpInputs] = {};
    run_src_shapes(args, shapes);
    Run run;
    NystromGeometry g;
    const Status decoded = decode_nystrom_geometry(a_, shapes, args.num_src, &g);
    if (!decoded.ok()) return fail(decoded.message());
    static_cast<NystromGeometry&>(run.s) = g;
    Dims& s = run.s;
    s.mp = (s.m + simd_->width - 1) / simd_->width * simd_->width;
    s.dp = (s.d + simd_->width - 1) / simd_->width * simd_->width;
    if (s.batch == 0) return Status::Ok();
    const int nt = run_threads(args, planned_threads_);
    run.g = tiles_for(avx512_, s, tile_);
    if (!layout_of(s, run.g, nt, &run.l)) return fail("workspace size overflows");
    VITRT_RETURN_IF_ERROR(check_workspace(args, run.l.total));
    run.ws = static_cast<float*>(args.workspace);
    run.q = args.src[0]->f32();
    run.k = args.src[1]->f32();
    run.v = args.src[2]->f32();
    run.vw = s.ks > 0 ? args.src[3]->f32() : nullptr;
    run.out = args.dst[0]->f32();

    const int64_t items = s.batch * s.heads;
    ThreadPool::parallel_for(items, nt, [&](int64_t lo, int64_t hi, int) {
      for (int64_t bh = lo; bh < hi; ++bh) build_k2(run, bh);
    });
    float global = -INFINITY;
    for (int64_t bh = 0; bh < items; ++bh) global = std::max(global, run.ws[run.l.colmax + bh]);
    const int64_t per_item_tasks = 1 + run.l.chunks;  // the iterations, then the chunks
    ThreadPool::parallel_for(items * per_item_tasks, nt, [&](int64_t lo, int64_t hi, int tid) {
      for (int64_t t = lo; t < hi; ++t) {
        const int64_t bh = t / per_item_tasks, c = t % per_item_tasks;
        if (c == 0)
          iterate(run, bh, a_.init == NystromInit::kGlobal ? global : run.ws[run.l.colmax + bh], tid);
        else
          k3_v_chunk(run, bh, c - 1, tid);
      }
    });
    ThreadPool::parallel_for(items, nt, [&](int64_t lo, int64_t hi, int tid) {
      for (int64_t bh = lo; bh < hi; ++bh) merge_k3_v(run, bh, tid);
    });
    const int64_t blocks = (s.n + kBlock - 1) / kBlock;
    ThreadPool::parallel_for(items * blocks, nt, [&](int64_t lo, int64_t hi, int tid) {
      for (int64_t t = lo; t < hi; ++t) output(run, t / blocks, t % blocks * kBlock, tid);
    });
    return Status::Ok();
  }

 private:
  struct Run {
    Dims s;
    Layout l;
    Tiles g;
    float* ws;
    const float *q, *k, *v, *vw;
    float* out;
    float* thread(int t) const { return ws + l.thread0 + t * l.per_thread; }
    float* item(int64_t bh) const { return ws + l.item0 + bh * l.per_item; }
    float* part(int64_t bh, int64_t c) const { return ws + l.part0 + (bh * l.chunks + c) * l.per_part; }
  };

  // Q̃, K̃ [m][d] (segment means of the scaled tokens, summed in double) and K̃ᵀ [d][mp] of item bh.
  void landmarks(const Run& run, int64_t bh) const {
    const Dims& s = run.s;
    const int64_t b = bh / s.heads, h = bh % s.heads;
    float* t = run.item(bh);
    float *ql = t + run.l.ql, *kl = t + run.l.kl, *klt = t + run.l.klt;
    const float* q = run.q + b * s.n * s.c + h * s.d;
    const float* k = run.k + b * s.n * s.c + h * s.d;
    // Token rows in order, kLanes channels at a time (each channel's sum in token order, as one loop per
    // channel would add them, but reading the rows contiguously).
    constexpr int64_t kLanes = 64;
    for (int64_t p = 0; p < s.m; ++p) {
      const NystromSegment seg = nystrom_segment(s.n, s.m, p);
      for (int64_t j0 = 0; j0 < s.d; j0 += kLanes) {
        const int64_t lanes = std::min(kLanes, s.d - j0);
        double sq[kLanes] = {}, sk[kLanes] = {};
        for (int64_t i = seg.start; i < seg.start + seg.count; ++i) {
          ny_->scaled_sum(q + i * s.c + j0, lanes, a_.q_scale, sq);
          ny_->scaled_sum(k + i * s.c + j0, lanes, a_.k_scale, sk);
        }
        for (int64_t j = 0; j < lanes; ++j) {
          ql[p * s.d + j0 + j] = static_cast<float>(sq[j] / static_cast<double>(seg.count));
          kl[p * s.d + j0 + j] = static_cast<float>(sk[j] / static_cast<double>(seg.count));
        }
      }
    }
    for (int64_t j = 0; j < s.d; ++j) {
      for (int64_t p = 0; p < s.m; ++p) klt[j * s.mp + p] = kl[p * s.d + j];
      for (int64_t p = s.m; p < s.mp; ++p) klt[j * s.mp + p] = 0.0f;
    }
  }

  // k2 = softmax(Q̃ K̃ᵀ) of item bh into the shared region, and its largest column sum.
  void build_k2(const Run& run, int64_t bh) const {
    const Dims& s = run.s;
    landmarks(run, bh);
    const float* t = run.item(bh);
    float* k2 = run.ws + run.l.k2 + bh * s.m * s.mp;
    simd_->gemm(t + run.l.ql, s.d, 1, t + run.l.klt, s.mp, s.m, s.d, s.mp, false, k2, s.mp);
    for (int64_t i = 0; i < s.m; ++i) softmax_row(ny_, k2 + i * s.mp, s.m, s.mp);
    float best = -INFINITY;
    for (int64_t j = 0; j < s.m; ++j) {
      float col = 0.0f;
      for (int64_t i = 0; i < s.m; ++i) col += k2[i * s.mp + j];
      best = std::max(best, col);
    }
    run.ws[run.l.colmax + bh] = best;
  }

  // Item bh's Z = k2ᵀ / top, then the iterations KV = k2·Z; Z = (Z/4)·(13I − KV·(15I − KV·(7I − KV))).
  void iterate(const Run& run, int64_t bh, float top, int tid) const {
    const Dims& s = run.s;
    const int64_t m = s.m, mp = s.mp;
    const float* k2 = run.ws + run.l.k2 + bh * m * mp;
    float* t = run.thread(tid);
    float *z = run.item(bh) + run.l.z, *kv = t + run.l.kv, *t1 = t + run.l.t1, *t2 = t + run.l.t2;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < m; ++j) z[i * mp + j] = k2[j * mp + i] / top;
      for (int64_t j = m; j < mp; ++j) z[i * mp + j] = 0.0f;
    }
    // dst[m, m] = a·b on the packed GEMM (b packed first); the padding columns of dst are left as they are.
    const GemmKernels* g = run.g.inverse;
    float* packed = t + run.l.pmm;
    auto product = [&](const float* a, const float* b, float* dst) {
      gemm_pack_rows(b, mp, m, m, g->nr, packed);
      gemm_packed_product(g, a, mp, m, m, packed, m, dst, mp);
    };
    for (int32_t it = 0; it < a_.iterations; ++it) {
      product(k2, z, kv);  // KV = k2·Z
      diag_minus(7.0f, kv, m, mp, t1);
      product(kv, t1, t2);
      diag_minus(15.0f, t2, m, mp, t1);
      product(kv, t1, t2);
      diag_minus(13.0f, t2, m, mp, t1);
      for (int64_t i = 0; i < m * mp; ++i) kv[i] = 0.25f * z[i];
      product(kv, t1, z);
    }
  }

  // Chunk c of item bh's k3·V = softmax(Q̃ Kᵀ)·V: over the chunk's token blocks with a running softmax per
  // landmark row, unnormalised, into the chunk's partial (acc, running max, running sum).
  void k3_v_chunk(const Run& run, int64_t bh, int64_t c, int tid) const {
    const Dims& s = run.s;
    const int64_t b = bh / s.heads, h = bh % s.heads;
    float* t = run.thread(tid);
    float *pkb = t + run.l.pkb, *pvb = t + run.l.pvb, *s3 = t + run.l.s3;
    float* part = run.part(bh, c);
    float *acc = part + run.l.acc, *rmax = part + run.l.rmax, *rsum = part + run.l.rsum;
    const float* k = run.k + b * s.n * s.c + h * s.d;
    const float* v = run.v + b * s.n * s.c + h * s.d;
    const float* ql = run.item(bh) + run.l.ql;
    for (int64_t p = 0; p < s.m; ++p) {
      rmax[p] = -INFINITY;
      rsum[p] = 0.0f;
      // The products store d columns; the merge reads whole vectors (dp).
      std::fill(acc + p * s.dp + s.d, acc + (p + 1) * s.dp, 0.0f);
    }
    const int64_t first = c * kChunk, end = std::min(s.n, first + kChunk);
    for (int64_t i0 = first; i0 < end; i0 += kBlock) {
      const int64_t nb = std::min(kBlock, end - i0);
      // The block's scores Q̃·(k_scale·K_block)ᵀ [m, nb]; the operands packed straight from the [B,N,C] keys
      // and values (no copies of them in between).
      gemm_pack_transposed_scaled(k + i0 * s.c, s.c, nb, s.d, a_.k_scale, run.g.scores->nr, pkb);
      gemm_packed_product(run.g.scores, ql, s.d, s.m, s.d, pkb, nb, s3, kBlock);
      gemm_pack_rows(v + i0 * s.c, s.c, nb, s.d, run.g.values->nr, pvb);
      const bool later = i0 > first;
      for (int64_t p = 0; p < s.m; ++p) {
        float* row = s3 + p * kBlock;
        const float top = std::max(rmax[p], ny_->row_max(row, nb));
        const float rescale = later ? std::exp(rmax[p] - top) : 0.0f;
        const float sum = ny_->exp_sum(row, nb, top);
        rsum[p] = rsum[p] * rescale + sum;
        rmax[p] = top;
        if (later) ny_->scale(acc + p * s.dp, s.dp, rescale);
      }
      // acc = P·V_block (+ the rescaled acc of the earlier blocks, added in registers before each element is
      // stored: nb is one K block of the GEMM, so each element of acc is read before it is written).
      static_assert(kBlock <= kGemmMaxBlockK, "acc is the product's residual: one K block only");
      GemmEpilogue e;
      if (later) {
        e.residual = acc;
        e.ldr = s.dp;
      }
      gemm_packed_product(run.g.values, s3, kBlock, s.m, nb, pvb, s.d, acc, s.dp, e);
    }
  }

  // Item bh's k3·V from its chunks' partials (in chunk order, each rescaled by exp(its max − the largest)),
  // normalised; W = Z·(k3·V) packed into the output GEMM's panels, and K̃ into the first product's.
  void merge_k3_v(const Run& run, int64_t bh, int tid) const {
    const Dims& s = run.s;
    float* t = run.thread(tid);
    float *acc = t + run.l.macc, *w = t + run.l.w;
    for (int64_t p = 0; p < s.m; ++p) {
      float top = -INFINITY;
      for (int64_t c = 0; c < run.l.chunks; ++c) top = std::max(top, run.part(bh, c)[run.l.rmax + p]);
      float* row = acc + p * s.dp;
      std::fill(row, row + s.dp, 0.0f);
      float sum = 0.0f;
      for (int64_t c = 0; c < run.l.chunks; ++c) {
        const float* part = run.part(bh, c);
        const float f = std::exp(part[run.l.rmax + p] - top);
        sum += part[run.l.rsum + p] * f;
        const float* src = part + run.l.acc + p * s.dp;
        for (int64_t j = 0; j < s.dp; ++j) row[j] += src[j] * f;
      }
      ny_->scale(row, s.dp, 1.0f / sum);
    }
    float* item = run.item(bh);
    simd_->gemm(item + run.l.z, s.mp, 1, acc, s.dp, s.m, s.m, s.dp, false, w, s.dp);
    gemm_pack_rows(w, s.dp, s.m, s.d, run.g.out->nr, item + run.l.pw);
    gemm_pack_transposed(item + run.l.kl, s.m, s.d, run.g.qk->nr, item + run.l.pkl);
  }

  // Tokens [i0, i0 + kBlock) of item bh: k1 = softmax(Q_block K̃ᵀ), k1·W stored straight into the head's
  // columns of the output (masked stores past d: other threads write the other heads), plus the depthwise V
  // conv.
  void output(const Run& run, int64_t bh, int64_t i0, int tid) const {
    const Dims& s = run.s;
    const int64_t b = bh / s.heads, h = bh % s.heads;
    float* t = run.thread(tid);
    float *qb = t + run.l.qb, *s1 = t + run.l.s1;
    const float* q = run.q + b * s.n * s.c + h * s.d;
    const float* v = run.v + b * s.n * s.c + h * s.d;
    const float* w = run.vw ? run.vw + h * s.ks : nullptr;
    float* out = run.out + b * s.n * s.c + h * s.d;
    const int64_t half = s.ks / 2;
    const int64_t nb = std::min(kBlock, s.n - i0);
    for (int64_t i = 0; i < nb; ++i) ny_->scaled_copy(q + (i0 + i) * s.c, s.d, a_.q_scale, qb + i * s.d);
    gemm_packed_product(run.g.qk, qb, s.d, nb, s.d, run.item(bh) + run.l.pkl, s.m, s1, s.mp);
    for (int64_t i = 0; i < nb; ++i) softmax_row(ny_, s1 + i * s.mp, s.m, s.mp);
    gemm_packed_product(run.g.out, s1, s.mp, nb, s.m, run.item(bh) + run.l.pw, s.d, out + i0 * s.c, s.c);
    for (int64_t i = 0; i < nb && s.ks > 0; ++i) {
      const int64_t token = i0 + i;
      float* dst = out + token * s.c;
      for (int64_t tap = 0; tap < s.ks; ++tap) {
        const int64_t from = token + tap - half;
        if (from < 0 || from >= s.n) continue;
        const float wt = w[tap];
        const float* vr = v + from * s.c;
        for (int64_t j = 0; j < s.d; ++j) dst[j] += wt * vr[j];
      }
    }
  }

  const LinearAttentionSimd* simd_;
  const NystromSimd* ny_;
  bool avx512_;
  int tile_;
  NystromAttentionAttrs a_;
  int planned_threads_;
};

}  // namespace

// Declines (no kernel: the reference runs and reports) anything the reference factory would reject.
Status create_nystrom_attention(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                                std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const NystromAttentionAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  if (plan.num_dst != 1) return Status::Ok();
  const Shape* shapes[kMaxOpInputs] = {};
  planned_src_shapes(plan, shapes);
  NystromGeometry g;
  if (!decode_nystrom_geometry(*a, shapes, plan.num_src, &g).ok()) return Status::Ok();
  const bool avx512 = ctx->isa == X86Isa::kAvx512;
  const LinearAttentionSimd* simd = avx512 ? linear_attention_simd_avx512() : linear_attention_simd_avx2();
  Dims dims;
  static_cast<NystromGeometry&>(dims) = g;
  dims.mp = (g.m + simd->width - 1) / simd->width * simd->width;
  dims.dp = (g.d + simd->width - 1) / simd->width * simd->width;
  const int threads = plan.num_threads < 1 ? 1 : plan.num_threads;
  const int tile = ctx->options.gemm_tile;
  Layout l;
  int64_t bytes = 0;
  if (!layout_of(dims, tiles_for(avx512, dims, tile), threads, &l) ||
      !checked_mul(l.total, static_cast<int64_t>(sizeof(float)), &bytes))
    return Status::Ok();  // the reference factory reports the overflow
  info->workspace_bytes = static_cast<size_t>(bytes);
  const NystromSimd* ny = avx512 ? nystrom_simd_avx512() : nystrom_simd_avx2();
  *kernel = std::make_unique<NystromAttentionKernel>(plan, simd, ny, avx512, tile, *a);
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
