// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Fused SoftmaxAttention: work items are (batch, head, block of 32 query rows), split over the threads; each
// computes its block against all keys, kb keys at a time with an online softmax (simd_impl.h attention_block),
// reading Q, K and V in place in any of the three AttentionInputs layouts. No Nq x Nk matrix: the per-thread
// scratch is one Kᵀ block, one score block and the output accumulators, sized at plan time.
// The optional score-bias input and scores output (LaViT) run on the reference kernel.
#include <limits>

#include "backends/cpu/ref/ref_kernel.h"
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

class AttentionKernel final : public ref::RefKernel {
 public:
  AttentionKernel(const KernelPlan& plan, std::shared_ptr<Context> ctx, const SoftmaxAttentionAttrs& a)
      : RefKernel(plan), ctx_(std::move(ctx)), a_(a), planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {}

  static int64_t thread_floats(int64_t nk, int64_t d) { return attn_scratch_floats(kQueryBlock, key_block(nk), d); }

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& src0 = *args.src[0];
    const float *q, *k, *v;
    int64_t qs, ks, vs, qbatch, kbatch, vbatch, nq, nk, c;
    nq = src0.shape[1];
    if (a_.inputs == AttentionInputs::kQkvPacked) {
      c = src0.shape[2] / 3;
      nk = nq;
      q = src0.f32();
      k = q + c;
      v = q + 2 * c;
      qs = ks = vs = 3 * c;
      qbatch = kbatch = vbatch = nq * 3 * c;
    } else if (a_.inputs == AttentionInputs::kQKvPacked) {
      const TensorRef& kv = *args.src[1];
      c = src0.shape[2];
      nk = kv.shape[1];
      q = src0.f32();
      k = kv.f32();
      v = k + c;
      qs = c;
      ks = vs = 2 * c;
      qbatch = nq * c;
      kbatch = vbatch = nk * 2 * c;
    } else {
      c = src0.shape[2];
      nk = args.src[1]->shape[1];
      q = src0.f32();
      k = args.src[1]->f32();
      v = args.src[2]->f32();
      qs = ks = vs = c;
      qbatch = nq * c;
      kbatch = vbatch = nk * c;
    }
    const int64_t heads = a_.num_heads, d = c / heads, batch = src0.shape[0];
    if (nq == 0 || batch == 0 || c == 0) return Status::Ok();
    float* out = args.dst[0]->f32();
    if (nk == 0) {
      for (int64_t i = 0; i < batch * nq * c; ++i) out[i] = std::numeric_limits<float>::quiet_NaN();  // 0/0, as torch
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
      blk.q_stride = qs;
      blk.k_stride = ks;
      blk.v_stride = vs;
      blk.nk = nk;
      blk.d = d;
      blk.kb = kb;
      blk.scale = scale;
      blk.out_stride = c;
      blk.scratch = ws + tid * per;
      for (int64_t it = lo; it < hi; ++it) {
        const int64_t qbk = it % qblocks, bh = it / qblocks, h = bh % heads, b = bh / heads;
        const int64_t i0 = qbk * kQueryBlock;
        blk.nq = nq - i0 < kQueryBlock ? nq - i0 : kQueryBlock;
        blk.q = q + b * qbatch + i0 * qs + h * d;
        blk.k = k + b * kbatch + h * d;
        blk.v = v + b * vbatch + h * d;
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

}  // namespace

Status create_softmax_attention(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                                std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const SoftmaxAttentionAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  int layout_inputs;
  switch (a->inputs) {
    case AttentionInputs::kSeparate: layout_inputs = 3; break;
    case AttentionInputs::kQkvPacked: layout_inputs = 1; break;
    case AttentionInputs::kQKvPacked: layout_inputs = 2; break;
    default: return Status::Ok();
  }
  if (a->num_heads < 1 || plan.num_dst != 1) return Status::Ok();  // scores output: reference
  for (int i = layout_inputs; i < plan.num_src; ++i)
    if (plan.src_tensors[i] || plan.src_shapes[i].rank > 0) return Status::Ok();  // score bias: reference
  for (int i = 0; i < layout_inputs; ++i)
    if (i >= plan.num_src || plan.src_shapes[i].rank != 3) return Status::Ok();
  const Shape& q = plan.src_shapes[0];
  int64_t c, nk;
  if (a->inputs == AttentionInputs::kQkvPacked) {
    c = q[2] / 3;
    nk = q[1];
  } else {
    c = q[2];
    nk = plan.src_shapes[1][1];
  }
  if (c % a->num_heads != 0) return Status::Ok();
  const int threads = plan.num_threads < 1 ? 1 : plan.num_threads;
  info->workspace_bytes =
      static_cast<size_t>(AttentionKernel::thread_floats(nk, c / a->num_heads) * threads) * sizeof(float);
  *kernel = std::make_unique<AttentionKernel>(plan, ctx, *a);
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
