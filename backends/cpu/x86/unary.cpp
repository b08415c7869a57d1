// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Unary (core/ir/op_attrs.h, UnaryKind), split over the threads in contiguous chunks. The kinds whose
// reference arithmetic a vector loop can repeat exactly run vectorised (VecUnary, simd.h), bit-identical to
// the reference kernel, and so do Sigmoid and Silu, within 1e-6 relative of it (the vector GELU's exp);
// every other kind runs the reference's own per-element function (ref::with_unary_function), bit-identical.
// May run in place.
#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/ref/unary_functions.h"
#include "backends/cpu/x86/x86_internal.h"
#include "ops/unary_attrs.h"

namespace vitrt {
namespace x86 {
namespace {

// The vector loop for `kind`, if it has one.
bool vector_op_of(UnaryKind kind, VecUnary* op) {
  switch (kind) {
    case UnaryKind::kAbs:
      *op = VecUnary::kAbs;
      return true;
    case UnaryKind::kNeg:
      *op = VecUnary::kNeg;
      return true;
    case UnaryKind::kFloor:
      *op = VecUnary::kFloor;
      return true;
    case UnaryKind::kCeil:
      *op = VecUnary::kCeil;
      return true;
    case UnaryKind::kRound:
      *op = VecUnary::kRound;
      return true;
    case UnaryKind::kSqrt:
      *op = VecUnary::kSqrt;
      return true;
    case UnaryKind::kReciprocal:
      *op = VecUnary::kReciprocal;
      return true;
    case UnaryKind::kClip:
      *op = VecUnary::kClip;
      return true;
    case UnaryKind::kLeakyRelu:
      *op = VecUnary::kLeakyRelu;
      return true;
    case UnaryKind::kHardSwish:
      *op = VecUnary::kHardSwish;
      return true;
    case UnaryKind::kSigmoid:
      *op = VecUnary::kSigmoid;
      return true;
    case UnaryKind::kSilu:
      *op = VecUnary::kSilu;
      return true;
    default:
      // HardSigmoid's alpha·x + beta is left scalar: in the FMA-enabled ISA files the compiler may fuse it
      // into one rounding, which the reference does not do.
      return false;
  }
}

class UnaryKernel final : public ref::RefKernel {
 public:
  UnaryKernel(const KernelPlan& plan, std::shared_ptr<Context> ctx, const UnaryAttrs& a)
      : RefKernel(plan),
        ctx_(std::move(ctx)),
        a_(a),
        vectorised_(vector_op_of(a.kind, &vec_op_)),
        planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {}

 protected:
  Status compute(const KernelArgs& args) override {
    const float* src = args.src[0]->f32();
    float* dst = args.dst[0]->f32();
    const int64_t n = args.src[0]->numel();
    constexpr int64_t kChunk = 4096;  // a multiple of every vector width
    const int64_t chunks = (n + kChunk - 1) / kChunk;
    const int threads = run_threads(args, planned_threads_);
    if (vectorised_) {
      const SimdTable* t = ctx_->simd;
      const VecUnary op = vec_op_;
      const float alpha = a_.alpha, beta = a_.beta;
      ThreadPool::parallel_for(chunks, threads, [&](int64_t b, int64_t e, int) {
        const int64_t lo = b * kChunk, hi = e * kChunk < n ? e * kChunk : n;
        t->unary(op, alpha, beta, src + lo, dst + lo, hi - lo);
      });
      return Status::Ok();
    }
    ref::with_unary_function(a_, [&](auto f) {
      ThreadPool::parallel_for(chunks, threads, [&](int64_t b, int64_t e, int) {
        const int64_t lo = b * kChunk, hi = e * kChunk < n ? e * kChunk : n;
        for (int64_t i = lo; i < hi; ++i) dst[i] = f(src[i]);
      });
    });
    return Status::Ok();
  }

 private:
  std::shared_ptr<Context> ctx_;
  UnaryAttrs a_;
  VecUnary vec_op_ = VecUnary::kAbs;
  bool vectorised_;
  int planned_threads_;
};

}  // namespace

Status create_unary(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                    std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const UnaryAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  if (!unary_attrs_problem(*a).empty()) return Status::Ok();  // the reference reports it
  *kernel = std::make_unique<UnaryKernel>(plan, ctx, *a);
  info->may_inplace = true;
  info->reentrant = true;  // compute keeps no state
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
