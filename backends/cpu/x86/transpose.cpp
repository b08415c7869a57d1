// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Transpose as a batched, cache-blocked 2-D transpose. After merging input axes that stay adjacent in the
// output, the layout changes of these models ([B,C,H·W] <-> [B,H·W,C], head splits [B,N,h,d] <-> [B,h,N,d])
// become dst[o][j][i][t] = src[o][i][j][t]: o batch, i×j the swapped pair, t a contiguous tail. Tiles of
// 32×32 keep both sides in L1 and are split over the threads. Other permutations run on the reference kernel.
#include <cstring>

#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/x86/x86_internal.h"

namespace vitrt {
namespace x86 {
namespace {

constexpr int64_t kTile = 32;

struct SwapPlan {
  int64_t outer = 1, rows = 1, cols = 1, tail = 1;  // src [outer][rows][cols][tail] -> dst [outer][cols][rows][tail]
};

// Merges adjacent kept axes; true when what is left is a swap of two groups (plus outer and tail groups).
bool plan_swap(const Shape& in, const std::vector<int32_t>& perm, int64_t batch_dim, SwapPlan* p) {
  const int rank = in.rank;
  if (static_cast<int>(perm.size()) != rank) return false;
  // Groups of input axes, in output order: a new group starts where perm[i] != perm[i-1] + 1.
  int64_t size[kMaxRank];
  int first_axis[kMaxRank];
  int groups = 0;
  for (int i = 0; i < rank; ++i) {
    const int64_t d = in.dims[perm[i]] == kDynamicDim ? batch_dim : in.dims[perm[i]];
    if (d == 1) continue;  // size-1 axes never matter
    // Joins the previous group when the previous kept output axis comes right before it in the input (up to
    // size-1 axes).
    bool joins = false;
    if (groups > 0) {
      int prev = -1;
      for (int k = i - 1; k >= 0; --k) {
        const int64_t pd = in.dims[perm[k]] == kDynamicDim ? batch_dim : in.dims[perm[k]];
        if (pd != 1) {
          prev = perm[k];
          break;
        }
      }
      if (prev >= 0 && perm[i] > prev) {
        joins = true;
        for (int a = prev + 1; a < perm[i]; ++a) {
          const int64_t ad = in.dims[a] == kDynamicDim ? batch_dim : in.dims[a];
          if (ad != 1) joins = false;
        }
      }
    }
    if (joins) {
      size[groups - 1] *= d;
    } else {
      size[groups] = d;
      first_axis[groups] = perm[i];
      ++groups;
    }
  }
  // Groups are in output order; their input order is that of their first axes.
  if (groups <= 1) return false;  // a plain copy: the reference handles it with memcpy
  auto rank_in = [&](int g) {
    int r = 0;
    for (int k = 0; k < groups; ++k) r += first_axis[k] < first_axis[g];
    return r;
  };
  // Accept: [outer..., B, A] or [outer..., B, A, tail] where in the input the order is outer, A, B(, tail).
  int k = 0;
  while (k < groups && rank_in(k) == k) ++k;  // identity prefix
  if (k + 2 > groups) return false;
  const bool swap2 = k + 2 == groups && rank_in(k) == k + 1 && rank_in(k + 1) == k;
  const bool swap3 = k + 3 == groups && rank_in(k) == k + 1 && rank_in(k + 1) == k && rank_in(k + 2) == k + 2;
  if (!swap2 && !swap3) return false;
  p->outer = 1;
  for (int g = 0; g < k; ++g) p->outer *= size[g];
  p->cols = size[k];      // output-major group = input's second
  p->rows = size[k + 1];  // output-minor group = input's first
  p->tail = swap3 ? size[k + 2] : 1;
  return true;
}

class TransposeKernel final : public ref::RefKernel {
 public:
  TransposeKernel(const KernelPlan& plan, std::vector<int32_t> perm)
      : RefKernel(plan), perm_(std::move(perm)), planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {}

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    SwapPlan p;
    if (!plan_swap(x.shape, perm_, x.shape.rank ? x.shape.dims[0] : 1, &p))
      return fail("the permutation is not a swap of two axis groups (planned as one)");
    const float* src = x.f32();
    float* dst = args.dst[0]->f32();
    const int64_t rt = (p.rows + kTile - 1) / kTile, ct = (p.cols + kTile - 1) / kTile;
    const int64_t items = p.outer * rt * ct;
    const int64_t bytes = x.numel() * static_cast<int64_t>(sizeof(float));
    const int nt = bytes >= (64 << 10) ? run_threads(args, planned_threads_) : 1;
    const int64_t rows = p.rows, cols = p.cols, tail = p.tail;
    ThreadPool::parallel_for(items, nt, [&](int64_t lo, int64_t hi, int) {
      for (int64_t it = lo; it < hi; ++it) {
        const int64_t o = it / (rt * ct), r0 = (it / ct) % rt * kTile, c0 = it % ct * kTile;
        const int64_t r1 = r0 + kTile < rows ? r0 + kTile : rows, c1 = c0 + kTile < cols ? c0 + kTile : cols;
        const float* s = src + o * rows * cols * tail;
        float* d = dst + o * rows * cols * tail;
        if (tail == 1) {
          for (int64_t c = c0; c < c1; ++c)
            for (int64_t r = r0; r < r1; ++r) d[c * rows + r] = s[r * cols + c];
        } else {
          for (int64_t c = c0; c < c1; ++c)
            for (int64_t r = r0; r < r1; ++r)
              std::memcpy(d + (c * rows + r) * tail, s + (r * cols + c) * tail, static_cast<size_t>(tail) * sizeof(float));
        }
      }
    });
    return Status::Ok();
  }

 private:
  std::vector<int32_t> perm_;
  int planned_threads_;
};

}  // namespace

Status create_transpose(const std::shared_ptr<Context>&, const KernelPlan& plan, std::unique_ptr<Kernel>* kernel,
                        KernelInfo*) {
  const TransposeAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  // The grouping depends on which axes have size 1, so it must hold at the planned batch and at batch 1.
  SwapPlan p;
  const Shape& in = plan.src_shapes[0];
  if (!plan_swap(in, a->perm, in.rank ? in.dims[0] : 1, &p) || !plan_swap(in, a->perm, 1, &p)) return Status::Ok();
  Shape one = in;
  if (one.rank) one.dims[0] = 1;
  if (!plan_swap(one, a->perm, 1, &p)) return Status::Ok();
  *kernel = std::make_unique<TransposeKernel>(plan, a->perm);
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
