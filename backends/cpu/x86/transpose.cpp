// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Transpose as a batched, cache-blocked 2-D transpose. After merging input axes that stay adjacent in the
// output, the layout changes of these models ([B,C,H·W] <-> [B,H·W,C], head splits [B,N,h,d] <-> [B,h,N,d])
// become dst[o][j][i][t] = src[o][i][j][t]: o batch, i×j the swapped pair, t a contiguous tail. Tiles of
// 32×32 keep both sides in L1 and are split over the threads. Other permutations run on the reference kernel.
#include <immintrin.h>

#include <cstring>

#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/x86/x86_internal.h"

namespace vitrt {
namespace x86 {
namespace {

constexpr int64_t kTile = 32;

struct SwapPlan {
  int64_t outer = 1, rows = 1, cols = 1,
          tail = 1;  // src [outer][rows][cols][tail] -> dst [outer][cols][rows][tail]
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

// dst[c][r] = src[r][c] for an 8x8 block (row strides in floats). The backend only exists with AVX2.
__attribute__((target("avx2"))) void transpose8x8(const float* src, int64_t ss, float* dst, int64_t ds) {
  __m256 r0 = _mm256_loadu_ps(src + 0 * ss), r1 = _mm256_loadu_ps(src + 1 * ss);
  __m256 r2 = _mm256_loadu_ps(src + 2 * ss), r3 = _mm256_loadu_ps(src + 3 * ss);
  __m256 r4 = _mm256_loadu_ps(src + 4 * ss), r5 = _mm256_loadu_ps(src + 5 * ss);
  __m256 r6 = _mm256_loadu_ps(src + 6 * ss), r7 = _mm256_loadu_ps(src + 7 * ss);
  const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
  const __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
  const __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
  const __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0));
  const __m256 u7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
  _mm256_storeu_ps(dst + 0 * ds, _mm256_permute2f128_ps(u0, u4, 0x20));
  _mm256_storeu_ps(dst + 1 * ds, _mm256_permute2f128_ps(u1, u5, 0x20));
  _mm256_storeu_ps(dst + 2 * ds, _mm256_permute2f128_ps(u2, u6, 0x20));
  _mm256_storeu_ps(dst + 3 * ds, _mm256_permute2f128_ps(u3, u7, 0x20));
  _mm256_storeu_ps(dst + 4 * ds, _mm256_permute2f128_ps(u0, u4, 0x31));
  _mm256_storeu_ps(dst + 5 * ds, _mm256_permute2f128_ps(u1, u5, 0x31));
  _mm256_storeu_ps(dst + 6 * ds, _mm256_permute2f128_ps(u2, u6, 0x31));
  _mm256_storeu_ps(dst + 7 * ds, _mm256_permute2f128_ps(u3, u7, 0x31));
}

// One tile rows [r0,r1) x cols [c0,c1): 8x8 blocks where whole, single elements at the edges.
void transpose_tile(const float* s, float* d, int64_t rows, int64_t cols, int64_t r0, int64_t r1, int64_t c0,
                    int64_t c1) {
  int64_t r = r0;
  for (; r + 8 <= r1; r += 8) {
    int64_t c = c0;
    for (; c + 8 <= c1; c += 8) transpose8x8(s + r * cols + c, cols, d + c * rows + r, rows);
    for (; c < c1; ++c)
      for (int64_t k = 0; k < 8; ++k) d[c * rows + r + k] = s[(r + k) * cols + c];
  }
  for (; r < r1; ++r)
    for (int64_t c = c0; c < c1; ++c) d[c * rows + r] = s[r * cols + c];
}

class TransposeKernel final : public ref::RefKernel {
 public:
  TransposeKernel(const KernelPlan& plan, std::vector<int32_t> perm)
      : RefKernel(plan),
        perm_(std::move(perm)),
        planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {}

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
          transpose_tile(s, d, rows, cols, r0, r1, c0, c1);
        } else {
          for (int64_t c = c0; c < c1; ++c)
            for (int64_t r = r0; r < r1; ++r)
              std::memcpy(d + (c * rows + r) * tail, s + (r * cols + c) * tail,
                          static_cast<size_t>(tail) * sizeof(float));
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

Status create_transpose(const std::shared_ptr<Context>&, const KernelPlan& plan,
                        std::unique_ptr<Kernel>* kernel, KernelInfo*) {
  const TransposeAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  // The grouping depends on which axes have size 1, so it must hold at the planned batch and at batch 1.
  SwapPlan p;
  const Shape& in = plan.src_shapes[0];
  if (!plan_swap(in, a->perm, in.rank ? in.dims[0] : 1, &p) || !plan_swap(in, a->perm, 1, &p))
    return Status::Ok();
  Shape one = in;
  if (one.rank) one.dims[0] = 1;
  if (!plan_swap(one, a->perm, 1, &p)) return Status::Ok();
  *kernel = std::make_unique<TransposeKernel>(plan, a->perm);
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
