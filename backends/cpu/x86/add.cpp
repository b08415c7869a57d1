// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Add, Mul and PRelu with numpy broadcasting. The common patterns (same shape, one operand repeating along
// the leading axes: bias rows, positional embeddings, a scalar; one value per channel over [N,C,D...]:
// torch.nn.PReLU's slope, a per-channel bias or scale of an exported CNN) are vectorised and split over the
// threads; any other broadcast goes through the reference loop nest with vectorised rows. PRelu's operands
// are never swapped (x < 0 ? x·slope : x is not commutative) and every path computes the reference's
// arithmetic (backends/cpu/ref/prelu.cpp) bit for bit. Elementwise: may run in place when src[0] has the
// output's shape.
#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/x86/x86_internal.h"

namespace vitrt {
namespace x86 {
namespace {

class BinaryKernel final : public ref::RefKernel {
 public:
  BinaryKernel(const KernelPlan& plan, std::shared_ptr<Context> ctx, BinaryOp op)
      : RefKernel(plan),
        ctx_(std::move(ctx)),
        op_(op),
        planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {}

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& a = *args.src[0];
    const TensorRef& b = *args.src[1];
    TensorRef& y = *args.dst[0];
    const int64_t n = y.numel();
    if (n == 0) return Status::Ok();
    const SimdTable* t = ctx_->simd;
    const BinaryOp op = op_;
    const int nt = n >= 16384 ? run_threads(args, planned_threads_) : 1;
    // One value of b per (item, channel) plane of a, which has the output's shape.
    int64_t planes = 0, plane = 0, channels = 0;
    if (a.shape == y.shape && per_channel(b.shape, y.shape, &planes, &plane, &channels)) {
      const float* pa = a.f32();
      const float* pb = b.f32();
      float* py = y.f32();
      ThreadPool::parallel_for(planes, nt, [&](int64_t lo, int64_t hi, int) {
        for (int64_t p = lo; p < hi; ++p)
          t->binary(op, pa + p * plane, 1, pb + p % channels, 0, py + p * plane, plane);
      });
      return Status::Ok();
    }
    // "full op period": one operand has the output's shape, the other is its trailing block repeated.
    const float* full = nullptr;
    const float* per = nullptr;
    int64_t period = 0;
    if (a.numel() == n && suffix_of(b.shape, y.shape)) {
      full = a.f32(), per = b.f32(), period = b.numel();
    } else if (op != BinaryOp::kPRelu && b.numel() == n && suffix_of(a.shape, y.shape)) {
      full = b.f32(), per = a.f32(), period = a.numel();  // commutative
    }
    if (full && a.shape == y.shape && b.shape == y.shape) period = n;
    if (full && period > 0) {
      float* py = y.f32();
      if (period == 1 || period == n) {
        const int64_t chunk = 4096, chunks = (n + chunk - 1) / chunk;
        const int64_t sp = period == 1 ? 0 : 1;
        ThreadPool::parallel_for(chunks, nt, [&](int64_t lo, int64_t hi, int) {
          const int64_t s = lo * chunk, e = hi * chunk < n ? hi * chunk : n;
          t->binary(op, full + s, 1, per + (sp ? s : 0), sp, py + s, e - s);
        });
      } else {
        const int64_t rows = n / period;
        ThreadPool::parallel_for(rows, nt, [&](int64_t lo, int64_t hi, int) {
          for (int64_t r = lo; r < hi; ++r)
            t->binary(op, full + r * period, 1, per, 1, py + r * period, period);
        });
      }
      return Status::Ok();
    }
    // General broadcast: the reference loop nest, vectorised rows.
    int64_t sy[kMaxRank], sa[kMaxRank], sb[kMaxRank];
    ref::contiguous_strides(y.shape, sy);
    ref::broadcast_strides(a.shape, y.shape, sa);
    ref::broadcast_strides(b.shape, y.shape, sb);
    const int64_t* st[3] = {sy, sa, sb};
    ref::LoopNest nest;
    nest.init(y.shape.rank, y.shape.dims, 3, st);
    const float* pa = a.f32();
    const float* pb = b.f32();
    float* py = y.f32();
    nest.for_each_row([&](const int64_t* off, int64_t len, const int64_t* inner) {
      if (inner[0] == 1 && inner[1] <= 1 && inner[2] <= 1) {
        t->binary(op, pa + off[1], inner[1], pb + off[2], inner[2], py + off[0], len);
      } else {
        for (int64_t i = 0; i < len; ++i) {
          const float va = pa[off[1] + i * inner[1]], vb = pb[off[2] + i * inner[2]];
          py[off[0] + i * inner[0]] = op == BinaryOp::kAdd   ? va + vb
                                      : op == BinaryOp::kMul ? va * vb
                                      : va < 0.0f            ? va * vb
                                                             : va;
        }
      }
    });
    return Status::Ok();
  }

 private:
  // s is [C,1,...,1] against out [...,C,D...] (leading 1s of s ignored, at least one trailing 1): out
  // is `planes` planes of `plane` elements, plane p taking s[p mod C].
  static bool per_channel(const Shape& s, const Shape& out, int64_t* planes, int64_t* plane,
                          int64_t* channels) {
    int64_t lead = 0;
    while (lead < s.rank && s.dims[lead] == 1) ++lead;
    const int64_t r = s.rank - lead;  // s's dims from its channel on
    if (r < 2 || r > out.rank || s.dims[lead] != out.dims[out.rank - r]) return false;
    for (int64_t i = lead + 1; i < s.rank; ++i)
      if (s.dims[i] != 1) return false;
    *channels = s.dims[lead];
    *plane = 1;
    for (int64_t i = out.rank - r + 1; i < out.rank; ++i) *plane *= out.dims[i];
    *planes = out.numel() / *plane;
    return *plane > 1;
  }

  // s broadcast to out is out's trailing numel(s) elements (s right-aligned matches out's trailing dims,
  // ignoring leading 1s of s).
  static bool suffix_of(const Shape& s, const Shape& out) {
    int64_t lead = 0;
    while (lead < s.rank && s.dims[lead] == 1) ++lead;
    const int64_t r = s.rank - lead;
    if (r > out.rank) return false;
    for (int64_t i = 0; i < r; ++i)
      if (s.dims[s.rank - 1 - i] != out.dims[out.rank - 1 - i]) return false;
    return true;
  }

  std::shared_ptr<Context> ctx_;
  BinaryOp op_;
  int planned_threads_;
};

}  // namespace

Status create_binary(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                     std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  if (plan.num_src != 2 || plan.src_shapes[0].rank > kMaxRank) return Status::Ok();
  const OpType type = plan.node->type;
  *kernel = std::make_unique<BinaryKernel>(plan, ctx,
                                           type == OpType::kMul     ? BinaryOp::kMul
                                           : type == OpType::kPRelu ? BinaryOp::kPRelu
                                                                    : BinaryOp::kAdd);
  info->may_inplace = plan.src_shapes[0] == plan.dst_shapes[0];
  info->reentrant = true;  // compute keeps no state
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
