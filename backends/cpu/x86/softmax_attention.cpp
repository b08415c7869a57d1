// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Fused SoftmaxAttention: work items are (batch, head, block of 32 query rows), split over the threads,
// reading Q, K and V in place in any of the three AttentionInputs layouts.
// - Plain: each item runs against all keys, kb keys at a time with an online softmax (simd_impl.h
//   attention_block). No Nq x Nk matrix: the per-thread scratch is one Kᵀ block, one score block and the
//   output accumulators, sized at plan time.
// - With the score-bias input and/or the scores output (LaViT's VA layers, few keys: N' = 49 at 224): the
// whole
//   score block [32, Nk] is computed at once (lavit_attention_impl.h score_block), the bias added, the scores
//   written out, then softmax·V. Per thread: the head's Kᵀ (transposed once per head, not per block) and the
//   score block.
#include <limits>

#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/x86/lavit_attention_simd.h"
#include "backends/cpu/x86/x86_internal.h"

namespace vitrt {
namespace x86 {
namespace {

constexpr int64_t kQueryBlock = 32;
constexpr int64_t kKeyBlock = 512;

int64_t key_block(int64_t nk) {
  const int64_t up = (nk + 15) / 16 * 16;
  return up < kKeyBlock ? (up < 16 ? 16 : up) : kKeyBlock;
}

int64_t up16(int64_t x) {
  return (x + 15) / 16 * 16;
}

int layout_inputs(AttentionInputs layout) {
  return layout == AttentionInputs::kSeparate ? 3 : layout == AttentionInputs::kQkvPacked ? 1 : 2;
}

// Where Q, K and V are in the run's inputs, for any layout.
struct Operands {
  const float *q = nullptr, *k = nullptr, *v = nullptr;
  int64_t qs = 0, ks = 0, vs = 0;              // between tokens
  int64_t qbatch = 0, kbatch = 0, vbatch = 0;  // between batch items
  int64_t batch = 0, nq = 0, nk = 0, c = 0;
};

Operands locate(AttentionInputs layout, const KernelArgs& args) {
  Operands o;
  const TensorRef& src0 = *args.src[0];
  o.batch = src0.shape[0];
  o.nq = src0.shape[1];
  o.q = src0.f32();
  if (layout == AttentionInputs::kQkvPacked) {
    o.c = src0.shape[2] / 3;
    o.nk = o.nq;
    o.k = o.q + o.c;
    o.v = o.q + 2 * o.c;
    o.qs = o.ks = o.vs = 3 * o.c;
    o.qbatch = o.kbatch = o.vbatch = o.nq * 3 * o.c;
  } else if (layout == AttentionInputs::kQKvPacked) {
    const TensorRef& kv = *args.src[1];
    o.c = src0.shape[2];
    o.nk = kv.shape[1];
    o.k = kv.f32();
    o.v = o.k + o.c;
    o.qs = o.c;
    o.ks = o.vs = 2 * o.c;
    o.qbatch = o.nq * o.c;
    o.kbatch = o.vbatch = o.nk * 2 * o.c;
  } else {
    o.c = src0.shape[2];
    o.nk = args.src[1]->shape[1];
    o.k = args.src[1]->f32();
    o.v = args.src[2]->f32();
    o.qs = o.ks = o.vs = o.c;
    o.qbatch = o.nq * o.c;
    o.kbatch = o.vbatch = o.nk * o.c;
  }
  return o;
}

class AttentionKernel final : public ref::RefKernel {
 public:
  AttentionKernel(const KernelPlan& plan, std::shared_ptr<Context> ctx, const SoftmaxAttentionAttrs& a)
      : RefKernel(plan),
        ctx_(std::move(ctx)),
        a_(a),
        planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {}

  static int64_t thread_floats(int64_t nk, int64_t d) {
    return attn_scratch_floats(kQueryBlock, key_block(nk), d);
  }

 protected:
  Status compute(const KernelArgs& args) override {
    const Operands o = locate(a_.inputs, args);
    const int64_t heads = a_.num_heads, d = o.c / heads, batch = o.batch, nq = o.nq, nk = o.nk, c = o.c;
    if (nq == 0 || batch == 0 || c == 0) return Status::Ok();
    float* out = args.dst[0]->f32();
    if (nk == 0) {
      for (int64_t i = 0; i < batch * nq * c; ++i)
        out[i] = std::numeric_limits<float>::quiet_NaN();  // 0/0, as torch
      return Status::Ok();
    }
    const int nt = run_threads(args, planned_threads_);
    const int64_t per = thread_floats(nk, d);
    if (!args.workspace || args.workspace_bytes < static_cast<size_t>(per * nt) * sizeof(float))
      return fail("workspace smaller than these shapes need (larger than planned?)");
    const int64_t kb = key_block(nk);
    const int64_t qblocks = (nq + kQueryBlock - 1) / kQueryBlock;
    const int64_t items = batch * heads * qblocks;
    const SimdTable* t = ctx_->simd;
    float* ws = static_cast<float*>(args.workspace);
    const float scale = a_.scale;
    ThreadPool::parallel_for(items, nt, [&](int64_t lo, int64_t hi, int tid) {
      AttnBlock blk;
      blk.q_stride = o.qs;
      blk.k_stride = o.ks;
      blk.v_stride = o.vs;
      blk.nk = nk;
      blk.d = d;
      blk.kb = kb;
      blk.scale = scale;
      blk.out_stride = c;
      blk.scratch = ws + tid * per;
      int64_t have = -1;  // the (b, h) whose Kᵀ is in scratch when one key block holds all keys
      for (int64_t it = lo; it < hi; ++it) {
        const int64_t qbk = it % qblocks, bh = it / qblocks, h = bh % heads, b = bh / heads;
        blk.kt_ready = nk <= kb && bh == have;
        have = bh;
        const int64_t i0 = qbk * kQueryBlock;
        blk.nq = nq - i0 < kQueryBlock ? nq - i0 : kQueryBlock;
        blk.q = o.q + b * o.qbatch + i0 * o.qs + h * d;
        blk.k = o.k + b * o.kbatch + h * d;
        blk.v = o.v + b * o.vbatch + h * d;
        blk.out = out + (b * nq + i0) * c + h * d;
        t->attention_block(blk);
      }
    });
    return Status::Ok();
  }

 private:
  std::shared_ptr<Context> ctx_;
  SoftmaxAttentionAttrs a_;
  int planned_threads_;
};

// The score-bias / scores-output path (see the top of the file).
class ScoredAttentionKernel final : public ref::RefKernel {
 public:
  ScoredAttentionKernel(const KernelPlan& plan, const LavitSimd* simd, const SoftmaxAttentionAttrs& a)
      : RefKernel(plan), simd_(simd), a_(a), planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {}

  // Kᵀ [d][nkp] and the score block [32][nkp].
  static int64_t thread_floats(int64_t nk, int64_t d) {
    const int64_t nkp = up16(nk);
    return up16(d * nkp) + kQueryBlock * nkp;
  }

 protected:
  Status compute(const KernelArgs& args) override {
    const Operands o = locate(a_.inputs, args);
    const int64_t heads = a_.num_heads, d = o.c / heads, batch = o.batch, nq = o.nq, nk = o.nk, c = o.c;
    const int nb = layout_inputs(a_.inputs);
    const float* bias = args.num_src > nb && args.src[nb] ? args.src[nb]->f32() : nullptr;
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
    const int64_t qblocks = (nq + kQueryBlock - 1) / kQueryBlock;
    float* ws = static_cast<float*>(args.workspace);
    const LavitSimd* t = simd_;
    ThreadPool::parallel_for(batch * heads * qblocks, nt, [&](int64_t lo, int64_t hi, int tid) {
      float* kt = ws + tid * per;
      ScoreBlock sb;
      sb.q_stride = o.qs;
      sb.kt = kt;
      sb.scale = a_.scale;
      sb.pv.v_stride = o.vs;
      sb.pv.nk = nk;
      sb.pv.d = d;
      sb.pv.out_stride = c;
      sb.pv.p = kt + up16(d * nkp);
      sb.pv.nkp = nkp;
      int64_t have = -1;  // the (b, h) whose Kᵀ is in kt: a thread's items run head by head
      for (int64_t it = lo; it < hi; ++it) {
        const int64_t qbk = it % qblocks, bh = it / qblocks, h = bh % heads, b = bh / heads;
        if (bh != have) {
          const float* kb = o.k + b * o.kbatch + h * d;
          for (int64_t tt = 0; tt < d; ++tt) {
            float* row = kt + tt * nkp;
            for (int64_t j = 0; j < nk; ++j) row[j] = kb[j * o.ks + tt];
            for (int64_t j = nk; j < nkp; ++j) row[j] = 0.0f;
          }
          have = bh;
        }
        const int64_t i0 = qbk * kQueryBlock;
        const int64_t row = (bh * nq + i0) * nk;  // of bias and scores [B,h,Nq,Nk]
        sb.q = o.q + b * o.qbatch + i0 * o.qs + h * d;
        sb.pv.rows = nq - i0 < kQueryBlock ? nq - i0 : kQueryBlock;
        sb.pv.bias = bias ? bias + row : nullptr;
        sb.pv.scores = scores ? scores + row : nullptr;
        sb.pv.v = o.v + b * o.vbatch + h * d;
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
  int nb;
  switch (a->inputs) {
    case AttentionInputs::kSeparate:
    case AttentionInputs::kQkvPacked:
    case AttentionInputs::kQKvPacked:
      nb = layout_inputs(a->inputs);
      break;
    default:
      return Status::Ok();
  }
  if (a->num_heads < 1 || plan.num_dst > 2 || plan.num_src > nb + 1) return Status::Ok();
  for (int i = 0; i < nb; ++i)
    if (i >= plan.num_src || plan.src_shapes[i].rank != 3) return Status::Ok();
  // The score bias, when present, is [B,h,Nq,Nk] (the backend checked the shapes against the op's inference).
  const bool bias = plan.num_src == nb + 1 && (plan.src_tensors[nb] || plan.src_shapes[nb].rank > 0);
  if (bias && plan.src_shapes[nb].rank != 4) return Status::Ok();
  const bool scored = bias || plan.num_dst == 2;
  const Shape& q = plan.src_shapes[0];
  int64_t c, nk;
  if (a->inputs == AttentionInputs::kQkvPacked) {
    c = q[2] / 3;
    nk = q[1];
  } else {
    c = q[2];
    nk = plan.src_shapes[1][1];
  }
  if (c % a->num_heads != 0 || (scored && c / a->num_heads < 1)) return Status::Ok();
  const int64_t d = c / a->num_heads;
  const int threads = plan.num_threads < 1 ? 1 : plan.num_threads;
  if (scored) {
    const LavitSimd* simd = ctx->isa == X86Isa::kAvx512 ? lavit_simd_avx512() : lavit_simd_avx2();
    info->workspace_bytes =
        static_cast<size_t>(ScoredAttentionKernel::thread_floats(nk, d) * threads) * sizeof(float);
    *kernel = std::make_unique<ScoredAttentionKernel>(plan, simd, *a);
    return Status::Ok();
  }
  info->workspace_bytes =
      static_cast<size_t>(AttentionKernel::thread_floats(nk, d) * threads) * sizeof(float);
  *kernel = std::make_unique<AttentionKernel>(plan, ctx, *a);
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
