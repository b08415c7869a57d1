// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Fused SoftmaxAttention, reading Q, K and V in place in any of the three AttentionInputs layouts. Where Q, K
// and V are comes from the op's layout decoder (ops/softmax_attention_layout.h).
// - Plain: flash attention (flash_attention.h). Items (batch, head, block of 32 query rows), split over the
//   threads, each run against all keys, kb at a time with an online softmax. No Nq x Nk matrix: the
//   per-thread scratch is one (batch, head)'s K (and V where the head dim is not a multiple of 16), packed
//   once per head by the thread, one score block and the output accumulators. Under session precision bf16
//   with AVX512-BF16 (ctx->bf16), the bf16 block instead (attention_bf16.h): both products with bf16 operands
//   and fp32 sums, the softmax in fp32; its scratch holds the head's Kᵀ and V in pairs.
// - With score terms (bias, mask), the scores output, the scale on q or cosine attention (LaViT's VA layers
//   and Swin's window attention, V1 and V2, few keys: N' = 49 at 224): the whole score block [32, Nk] is
//   computed at once (lavit_attention_impl.h score_block), the bias and mask added, the scores written out,
//   then softmax·V. Per thread: the head's Kᵀ (transposed once per head, not per block; with qk_norm each key
//   divided by its clamped norm as it is), the score block and, with the scale on q or qk_norm, the block's
//   scaled or normalised q rows (ops/softmax_attention_cosine.h).
#include <limits>

#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/x86/attention_bf16.h"
#include "backends/cpu/x86/flash_attention.h"
#include "backends/cpu/x86/lavit_attention_simd.h"
#include "backends/cpu/x86/x86_internal.h"
#include "backends/operand_check.h"
#include "common/checked_math.h"
#include "ops/softmax_attention_cosine.h"
#include "ops/softmax_attention_layout.h"

namespace vitrt {
namespace x86 {
namespace {

constexpr int64_t kQueryBlock = 32;
constexpr int64_t kKeyBlock = 512;

int64_t up16(int64_t x) {
  return (x + 15) / 16 * 16;
}

// The query blocks of each (batch, head): at most kQueryBlock rows each, near-equal (block j starts at row
// j·nq/count). With few items per thread, as many blocks as make the items a multiple of the threads:
// DeiT-Tiny at batch 1 has 3 heads of 197 queries, 21 blocks of 32 on 2 threads split 325 : 266 rows (the
// attention ran 1.22× faster on two threads than on one); 24 blocks of 24-25 rows split evenly.
struct QueryBlocks {
  int64_t nq = 0, count = 0;
  int64_t start(int64_t j) const { return j * nq / count; }
  int64_t rows(int64_t j) const { return start(j + 1) - start(j); }
};

QueryBlocks query_blocks(int64_t heads, int64_t nq, int threads) {
  QueryBlocks q{nq, (nq + kQueryBlock - 1) / kQueryBlock};
  constexpr int64_t kBalancedItemsPerThread = 16;  // past this, one item more is a few percent at most
  if (threads < 2 || heads * q.count >= kBalancedItemsPerThread * threads) return q;
  for (int64_t more = q.count; more <= 2 * q.count && more <= nq; ++more)
    if (heads * more % threads == 0) {
      q.count = more;
      break;
    }
  return q;
}

// Q, K and V of a run, located by the op's layout decoder (ops/softmax_attention_layout.h).
struct Operands {
  SoftmaxAttentionLayout l;
  const float *q = nullptr, *k = nullptr, *v = nullptr;
};

Status locate(const SoftmaxAttentionAttrs& a, const KernelArgs& args, Operands* o) {
  const Shape* shapes[kMaxOpInputs] = {};
  run_src_shapes(args, shapes);
  VITRT_RETURN_IF_ERROR(decode_softmax_attention_layout(a, shapes, args.num_src, &o->l));
  o->q = args.src[o->l.q_src]->f32() + o->l.q_off;
  o->k = args.src[o->l.k_src]->f32() + o->l.k_off;
  o->v = args.src[o->l.v_src]->f32() + o->l.v_off;
  return Status::Ok();
}

// The plain path's workspace, in floats: per thread, the packed K and V of one (batch, head)
// (flash_attention.h) and the block scratch. False when a size overflows.
struct FlashSizes {
  int64_t kb = 0;          // keys per online-softmax step
  int64_t head_k = 0;      // one head's packed Kᵀ
  int64_t per_thread = 0;  // the head's packed Kᵀ and V (if packed), then the block scratch
  int64_t total = 0;
};

bool flash_sizes(int64_t nk, int64_t d, int threads, FlashSizes* z) {
  const int64_t nkp = flash_up(nk, 16);
  z->kb = nkp < kKeyBlock ? nkp : kKeyBlock;  // a multiple of every ISA's Kᵀ panel width
  int64_t dp = 0, vf = 0;
  // nkp·dp bounds the packed Kᵀ too (d <= dp, and nkp·d is rounded up to 16 only).
  if (!checked_add(d, int64_t{15}, &dp) || !checked_mul(nkp, dp, &vf) || !checked_add(vf, vf, &vf))
    return false;
  z->head_k = flash_k_floats(nk, d);
  const int64_t pack = z->head_k + flash_v_floats(nk, d);
  return checked_add(pack, flash_scratch_floats(kQueryBlock, z->kb, d), &z->per_thread) &&
         checked_mul(z->per_thread, int64_t{threads}, &z->total) &&
         z->total <= std::numeric_limits<int64_t>::max() / 4;
}

// The bf16 path's keys per step and workspace floats (per thread: attn_bf16_scratch_floats); false on
// overflow.
bool bf16_sizes(int64_t nk, int64_t d, int threads, int64_t* kb, int64_t* per_thread, int64_t* total) {
  const int64_t nkp = flash_up(nk, 16);
  *kb = nkp < kKeyBlock ? nkp : kKeyBlock;
  int64_t dpad = 0, bound = 0;  // every term of attn_bf16_scratch_floats is at most a few kb·dpad
  if (!checked_add(d, int64_t{16}, &dpad) || !checked_mul(*kb + 64, dpad, &bound) ||
      !checked_mul(bound, int64_t{8}, &bound))
    return false;
  *per_thread = attn_bf16_scratch_floats(kQueryBlock, *kb, d);
  return checked_mul(*per_thread, int64_t{threads}, total) &&
         *total <= std::numeric_limits<int64_t>::max() / 4;
}

// The plain path (see the top of the file).
class AttentionKernel final : public ref::RefKernel {
 public:
  AttentionKernel(const KernelPlan& plan, const FlashSimd* simd, bool bf16, const SoftmaxAttentionAttrs& a)
      : RefKernel(plan),
        simd_(simd),
        bf16_(bf16),
        a_(a),
        planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {}

 protected:
  Status compute(const KernelArgs& args) override {
    Operands o;
    const Status located = locate(a_, args, &o);
    if (!located.ok()) return fail(located.message());
    const SoftmaxAttentionLayout& l = o.l;
    const int64_t heads = l.heads, d = l.head_dim, batch = l.batch, nq = l.nq, nk = l.nk, c = l.c;
    if (nq == 0 || batch == 0 || c == 0) return Status::Ok();
    float* out = args.dst[0]->f32();
    if (nk == 0) {
      for (int64_t i = 0; i < batch * nq * c; ++i)
        out[i] = std::numeric_limits<float>::quiet_NaN();  // 0/0, as torch
      return Status::Ok();
    }
    const int nt = run_threads(args, planned_threads_);
    if (bf16_) return compute_bf16(o, out, nt, args);
    FlashSizes z;
    if (!flash_sizes(nk, d, nt, &z) || !args.workspace ||
        args.workspace_bytes < static_cast<size_t>(z.total) * sizeof(float))
      return fail("workspace smaller than these shapes need (larger than planned?)");
    const FlashSimd* t = simd_;
    float* ws = static_cast<float*>(args.workspace);
    const QueryBlocks qb = query_blocks(batch * heads, nq, nt);
    const int64_t qblocks = qb.count;
    const bool packs_v = flash_packs_v(d);
    // One parallel loop (its barrier is costly on a loaded machine): each thread packs the heads its items
    // need; its items are consecutive, so it packs each (batch, head) it touches once.
    ThreadPool::parallel_for(batch * heads * qblocks, nt, [&](int64_t lo, int64_t hi, int tid) {
      float* kp = ws + tid * z.per_thread;
      FlashPack p;
      p.k_stride = l.k_stride;
      p.v_stride = l.v_stride;
      p.nk = nk;
      p.nkp = flash_up(nk, 16);
      p.d = d;
      p.j1 = p.nkp;
      p.kp = kp;
      p.vp = packs_v ? kp + z.head_k : nullptr;
      FlashBlock f;
      f.q_stride = l.q_stride;
      f.kp = kp;
      f.v_stride = packs_v ? flash_up(d, 16) : l.v_stride;
      f.nk = nk;
      f.d = d;
      f.kb = z.kb;
      f.scale = a_.scale;
      f.out_stride = c;
      f.scratch = kp + (z.per_thread - flash_scratch_floats(kQueryBlock, z.kb, d));
      int64_t have = -1;  // the (batch, head) packed in kp
      for (int64_t it = lo; it < hi; ++it) {
        const int64_t qbk = it % qblocks, bh = it / qblocks, h = bh % heads, b = bh / heads;
        if (bh != have) {
          p.k = o.k + b * l.k_batch + h * d;
          p.v = o.v + b * l.v_batch + h * d;
          t->pack(p);
          have = bh;
        }
        const int64_t i0 = qb.start(qbk);
        f.rows = qb.rows(qbk);
        f.q = o.q + b * l.q_batch + i0 * l.q_stride + h * d;
        f.v = packs_v ? p.vp : o.v + b * l.v_batch + h * d;
        f.out = out + (b * nq + i0) * c + h * d;
        t->block(f);
      }
    });
    return Status::Ok();
  }

  // Items (batch, head, block of 32 query rows) as above, each through attention_block_bf16, which packs the
  // head's Kᵀ and V in pairs into the thread's scratch for its first block of that head.
  Status compute_bf16(const Operands& o, float* out, int nt, const KernelArgs& args) {
    const SoftmaxAttentionLayout& l = o.l;
    const int64_t heads = l.heads, d = l.head_dim, batch = l.batch, nq = l.nq, nk = l.nk, c = l.c;
    int64_t kb = 0, per = 0, total = 0;
    if (!bf16_sizes(nk, d, nt, &kb, &per, &total) || !args.workspace ||
        args.workspace_bytes < static_cast<size_t>(total) * sizeof(float))
      return fail("workspace smaller than these shapes need (larger than planned?)");
    float* ws = static_cast<float*>(args.workspace);
    const QueryBlocks qb = query_blocks(batch * heads, nq, nt);
    const int64_t qblocks = qb.count;
    ThreadPool::parallel_for(batch * heads * qblocks, nt, [&](int64_t lo, int64_t hi, int tid) {
      AttnBf16Block blk;
      blk.q_stride = l.q_stride;
      blk.k_stride = l.k_stride;
      blk.v_stride = l.v_stride;
      blk.nk = nk;
      blk.d = d;
      blk.kb = kb;
      blk.scale = a_.scale;
      blk.out_stride = c;
      blk.scratch = ws + tid * per;
      int64_t have = -1;  // the (batch, head) whose pairs are in scratch when one key block holds all keys
      for (int64_t it = lo; it < hi; ++it) {
        const int64_t qbk = it % qblocks, bh = it / qblocks, h = bh % heads, b = bh / heads;
        blk.kt_ready = nk <= kb && bh == have;
        have = bh;
        const int64_t i0 = qb.start(qbk);
        blk.nq = qb.rows(qbk);
        blk.q = o.q + b * l.q_batch + i0 * l.q_stride + h * d;
        blk.k = o.k + b * l.k_batch + h * d;
        blk.v = o.v + b * l.v_batch + h * d;
        blk.out = out + (b * nq + i0) * c + h * d;
        attention_block_bf16(blk);
      }
    });
    return Status::Ok();
  }

 private:
  const FlashSimd* simd_;
  bool bf16_;
  SoftmaxAttentionAttrs a_;
  int planned_threads_;
};

// The score-bias / scores-output path (see the top of the file).
class ScoredAttentionKernel final : public ref::RefKernel {
 public:
  ScoredAttentionKernel(const KernelPlan& plan, const LavitSimd* simd, const SoftmaxAttentionAttrs& a)
      : RefKernel(plan), simd_(simd), a_(a), planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {}

  // Kᵀ [d][nkp], the score block [32][nkp] and the scaled q block [32][d].
  static int64_t thread_floats(int64_t nk, int64_t d) {
    const int64_t nkp = up16(nk);
    return up16(d * nkp) + kQueryBlock * nkp + up16(kQueryBlock * d);
  }

 protected:
  Status compute(const KernelArgs& args) override {
    Operands o;
    const Status located = locate(a_, args, &o);
    if (!located.ok()) return fail(located.message());
    const SoftmaxAttentionLayout& l = o.l;
    const int64_t heads = l.heads, d = l.head_dim, batch = l.batch, nq = l.nq, nk = l.nk, c = l.c;
    const int nb = softmax_attention_layout_inputs(a_.inputs);
    const Shape* shapes[kMaxOpInputs] = {};
    run_src_shapes(args, shapes);
    SoftmaxAttentionTerms terms;
    const Status decoded = decode_softmax_attention_terms(l, nb, shapes, args.num_src, &terms);
    if (!decoded.ok()) return fail(decoded.message());
    const float* bias = terms.bias ? args.src[nb]->f32() : nullptr;
    const float* mask = terms.mask_windows > 0 ? args.src[nb + 1]->f32() : nullptr;
    float* scores = args.num_dst > 1 && args.dst[1] ? args.dst[1]->f32() : nullptr;
    if (nq == 0 || batch == 0 || c == 0) return Status::Ok();
    float* out = args.dst[0]->f32();
    if (nk == 0) {
      for (int64_t i = 0; i < batch * nq * c; ++i)
        out[i] = std::numeric_limits<float>::quiet_NaN();  // 0/0, as torch
      return Status::Ok();
    }
    const int nt = run_threads(args, planned_threads_);
    const int64_t per = thread_floats(nk, d), nkp = up16(nk);
    if (!args.workspace || args.workspace_bytes < static_cast<size_t>(per * nt) * sizeof(float))
      return fail("workspace smaller than these shapes need (larger than planned?)");
    const QueryBlocks qb = query_blocks(batch * heads, nq, nt);
    const int64_t qblocks = qb.count;
    float* ws = static_cast<float*>(args.workspace);
    const LavitSimd* t = simd_;
    ThreadPool::parallel_for(batch * heads * qblocks, nt, [&](int64_t lo, int64_t hi, int tid) {
      float* kt = ws + tid * per;
      ScoreBlock sb;
      sb.q_stride = l.q_stride;
      sb.kt = kt;
      float* qs = kt + up16(d * nkp) + kQueryBlock * nkp;  // scaled or normalised q rows [32][d]
      sb.pv.v_stride = l.v_stride;
      sb.pv.nk = nk;
      sb.pv.d = d;
      sb.pv.out_stride = c;
      sb.pv.p = kt + up16(d * nkp);
      sb.pv.nkp = nkp;
      int64_t have = -1;  // the (b, h) whose Kᵀ is in kt: a thread's items run head by head
      for (int64_t it = lo; it < hi; ++it) {
        const int64_t qbk = it % qblocks, bh = it / qblocks, h = bh % heads, b = bh / heads;
        if (bh != have) {
          const float* kb = o.k + b * l.k_batch + h * d;
          for (int64_t tt = 0; tt < d; ++tt) {
            float* row = kt + tt * nkp;
            for (int64_t j = 0; j < nk; ++j) row[j] = kb[j * l.k_stride + tt];
            for (int64_t j = nk; j < nkp; ++j) row[j] = 0.0f;
          }
          if (a_.qk_norm)
            for (int64_t j = 0; j < nk; ++j) {
              const float denom = l2_norm_clamped(kb + j * l.k_stride, d, a_.qk_norm_eps);
              for (int64_t tt = 0; tt < d; ++tt) kt[tt * nkp + j] /= denom;
            }
          have = bh;
        }
        const int64_t i0 = qb.start(qbk);
        const int64_t row = (bh * nq + i0) * nk;  // of scores [B,h,Nq,Nk]
        const int64_t rows = qb.rows(qbk);
        sb.q = o.q + b * l.q_batch + i0 * l.q_stride + h * d;
        sb.q_stride = l.q_stride;
        sb.scale = a_.scale_on_q ? 1.0f : softmax_attention_head_scale(a_, h);  // x·1 is exact
        if (a_.qk_norm) {  // q / max(‖q‖, eps), then (with the scale on q) times the scale
          for (int64_t r = 0; r < rows; ++r)
            l2_normalize_row(sb.q + r * l.q_stride, d, a_.qk_norm_eps, qs + r * d);
          if (a_.scale_on_q)
            for (int64_t x = 0; x < rows * d; ++x) qs[x] *= a_.scale;
          sb.q = qs;
          sb.q_stride = d;
        } else if (a_.scale_on_q) {  // (q·scale)·kᵀ: each q element rounded after its scaling, as PyTorch
          for (int64_t r = 0; r < rows; ++r)
            for (int64_t tt = 0; tt < d; ++tt) qs[r * d + tt] = sb.q[r * l.q_stride + tt] * a_.scale;
          sb.q = qs;
          sb.q_stride = d;
        }
        sb.pv.rows = rows;
        sb.pv.bias = bias ? bias + b * terms.bias_batch + (h * nq + i0) * nk : nullptr;
        sb.pv.mask = mask ? mask + ((b % terms.mask_windows) * nq + i0) * nk : nullptr;
        sb.pv.scores = scores ? scores + row : nullptr;
        sb.pv.v = o.v + b * l.v_batch + h * d;
        sb.pv.out = out + (b * nq + i0) * c + h * d;
        t->score_block(sb);
      }
    });
    return Status::Ok();
  }

 private:
  const LavitSimd* simd_;
  SoftmaxAttentionAttrs a_;
  int planned_threads_;
};

}  // namespace

Status create_softmax_attention(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                                std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const SoftmaxAttentionAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  // Declines (the reference then runs or reports) what the layout decoder rejects.
  const Shape* shapes[kMaxOpInputs] = {};
  planned_src_shapes(plan, shapes);
  SoftmaxAttentionLayout l;
  if (!decode_softmax_attention_layout(*a, shapes, plan.num_src, &l).ok()) return Status::Ok();
  const int nb = softmax_attention_layout_inputs(a->inputs);
  SoftmaxAttentionTerms terms;
  if (plan.num_dst > 2 || !decode_softmax_attention_terms(l, nb, shapes, plan.num_src, &terms).ok())
    return Status::Ok();
  const bool scored = terms.bias || terms.mask_windows > 0 || plan.num_dst == 2 || a->scale_on_q ||
                      a->qk_norm || !a->head_scales.empty();
  if (scored && l.head_dim < 1) return Status::Ok();
  const int64_t d = l.head_dim, nk = l.nk;
  const int threads = plan.num_threads < 1 ? 1 : plan.num_threads;
  if (scored) {
    const LavitSimd* simd = ctx->isa == X86Isa::kAvx512 ? lavit_simd_avx512() : lavit_simd_avx2();
    info->workspace_bytes =
        static_cast<size_t>(ScoredAttentionKernel::thread_floats(nk, d) * threads) * sizeof(float);
    *kernel = std::make_unique<ScoredAttentionKernel>(plan, simd, *a);
    return Status::Ok();
  }
  const FlashSimd* flash = ctx->isa == X86Isa::kAvx512 ? flash_simd_avx512() : flash_simd_avx2();
  if (ctx->bf16) {
    int64_t kb = 0, per = 0, total = 0;
    if (!bf16_sizes(nk, d, threads, &kb, &per, &total)) return Status::Ok();
    info->workspace_bytes = static_cast<size_t>(total) * sizeof(float);
    *kernel = std::make_unique<AttentionKernel>(plan, flash, true, *a);
    return Status::Ok();
  }
  FlashSizes z;
  if (!flash_sizes(nk, d, threads, &z)) return Status::Ok();
  info->workspace_bytes = static_cast<size_t>(z.total) * sizeof(float);
  *kernel = std::make_unique<AttentionKernel>(plan, flash, false, *a);
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
