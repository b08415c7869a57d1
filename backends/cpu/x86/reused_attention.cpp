// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// ReusedAttention (LaViT's Less-Attention layer, docs/models.md §4.2) in three threaded phases:
//   1. T = S_prev·Θᵀ + θ_b for every (b, h): row-broadcast tiles against Θᵀ, written as the column panels of
//   one
//      matrix T_all [N, B·h·N'] (column (b·heads + h)·N' + j), the packed B operand of phase 2.
//   2. S_all = Ψ·T_all + ψ_b: Ψ is shared by every batch item and head, so all of them are one cache-blocked
//      GEMM (N x N x B·h·N': 784 x 784 x 98 at stage 2 for one image) with Ψ packed at plan time. Our own
//      microkernel rather than oneDNN's matmul: T_all is written already packed, and oneDNN would repack it.
//   3. per (b, h, block of 32 query rows): the scores written out when asked for, softmax, ·V.
// Θ, θ_b, Ψ and ψ_b must be constants (they are packed at plan time); otherwise the reference runs.
// Session precision bf16 (ctx->bf16, docs/architecture.md §7.1): phase 2 runs on the AVX512-BF16 packed GEMM
// (packed_gemm_bf16.h): Ψ rounded into rows of pairs at plan time, T_all written row-major in phase 1 and
// rounded into the bf16 tile's pair panels (in parallel over panels), fp32 sums, then ψ_b added in fp32.
// Phases 1 and 3 (T, the softmax, ·V) stay fp32.
// Workspace: T_all and S_all (N x round16(B·h·N') each), bf16 only T_all in pair panels, plus one scratch
// block per thread.
#include <algorithm>
#include <cstring>
#include <vector>

#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/x86/lavit_attention_simd.h"
#include "backends/cpu/x86/packed_gemm_bf16.h"
#include "backends/cpu/x86/x86_internal.h"

namespace vitrt {
namespace x86 {
namespace {

constexpr int64_t kQueryBlock = 32;   // rows per phase-3 item
constexpr int64_t kThetaBlock = 16;   // rows per phase-1 item
constexpr int64_t kBf16RowTiles = 4;  // bf16 phase 2: row tiles per task

int64_t up16(int64_t x) {
  return (x + 15) / 16 * 16;
}

class ReusedAttentionKernel final : public ref::RefKernel {
 public:
  // gbf: the bf16 tile for phase 2, or null in fp32.
  ReusedAttentionKernel(const KernelPlan& plan, const LavitSimd* simd, const GemmKernels* gbf, int heads)
      : RefKernel(plan),
        simd_(simd),
        gbf_(gbf),
        heads_(heads),
        planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {
    const Shape& s = plan.src_shapes[0];
    n_ = s[2];
    nk_ = s[3];
    nkp_ = up16(nk_);
    // Θᵀ [N'][nkp] and θ_b [nkp], zero-padded.
    const float* theta = plan.src_tensors[2]->f32();
    const float* theta_b = plan.src_tensors[3]->f32();
    theta_t_.assign(static_cast<size_t>(nk_ * nkp_), 0.0f);
    theta_b_.assign(static_cast<size_t>(nkp_), 0.0f);
    for (int64_t j = 0; j < nk_; ++j) {
      for (int64_t k = 0; k < nk_; ++k) theta_t_[k * nkp_ + j] = theta[j * nk_ + k];
      theta_b_[j] = theta_b[j];
    }
    // Ψ as panels of MR rows, [N/MR][N][MR] (rows past N zero), and ψ_b padded to match.
    const int64_t mr = simd_->gemm_mr, mb = (n_ + mr - 1) / mr;
    const float* psi = plan.src_tensors[4]->f32();
    const float* psi_b = plan.src_tensors[5]->f32();
    psi_p_.assign(static_cast<size_t>(mb * n_ * mr), 0.0f);
    psi_b_.assign(static_cast<size_t>(mb * mr), 0.0f);
    for (int64_t i = 0; i < n_; ++i) {
      for (int64_t k = 0; k < n_; ++k) psi_p_[((i / mr) * n_ + k) * mr + i % mr] = psi[i * n_ + k];
      psi_b_[i] = psi_b[i];
    }
    if (gbf_) {  // Ψ as rows of pairs (k, k + 1), zero past N
      const int64_t pairs = gemm_bf16_pairs(n_);
      psi16_.assign(static_cast<size_t>(n_ * pairs), 0.0f);
      for (int64_t i = 0; i < n_; ++i)
        for (int64_t t = 0; t < pairs; ++t) {
          const uint32_t lo = bf16_round(psi[i * n_ + 2 * t]);
          const uint32_t hi = 2 * t + 1 < n_ ? bf16_round(psi[i * n_ + 2 * t + 1]) : 0;
          const uint32_t pair = lo | hi << 16;
          std::memcpy(&psi16_[i * pairs + t], &pair, sizeof pair);
        }
    }
  }

  // bf16: floats of T_all in the bf16 tile's pair panels.
  static int64_t bf16_floats(const GemmKernels* gbf, int64_t n, int64_t ncolp) {
    return gbf ? gemm_packed_floats(ncolp, gemm_bf16_pairs(n), gbf->nr) : 0;
  }

  static int64_t thread_floats(int64_t nkp) { return up16(kQueryBlock * nkp); }
  static int64_t shared_floats(int64_t n, int64_t ncolp) { return 2 * n * ncolp; }

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& prev = *args.src[0];
    const TensorRef& vt = *args.src[1];
    if (prev.shape[2] != n_ || prev.shape[3] != nk_ || prev.shape[1] != heads_)
      return fail("scores shape " + prev.shape.str() + " differs from the plan");
    const int64_t batch = prev.shape[0], heads = heads_, n = n_, nk = nk_, nkp = nkp_;
    const int64_t c = vt.shape[2], d = c / heads;
    if (batch == 0 || c == 0) return Status::Ok();
    const int64_t ncol = batch * heads * nk, ncolp = up16(ncol);
    // bf16: T_all is one panel as wide as all columns, i.e. row-major, until rounded into pair panels.
    const int64_t nr = gbf_ ? ncolp : simd_->gemm_nr;
    const int nt = run_threads(args, planned_threads_);
    const int64_t per = thread_floats(nkp), t16_floats = up16(bf16_floats(gbf_, n, ncolp));
    if (!args.workspace ||
        args.workspace_bytes <
            static_cast<size_t>(shared_floats(n, ncolp) + t16_floats + per * nt) * sizeof(float))
      return fail("workspace smaller than these shapes need (larger than planned?)");
    float* t_all = static_cast<float*>(args.workspace);  // column panels of nr, [N][width] each
    float* s_all = t_all + n * ncolp;                    // [N][ncolp]
    float* t16 = s_all + n * ncolp;                      // bf16: T_all in pair panels
    float* scratch = t16 + t16_floats;
    const LavitSimd* simd = simd_;
    auto panel_at = [&](int64_t col, int64_t* width) {  // start of column col's panel and its width
      const int64_t p = col / nr;
      *width = ncolp - p * nr < nr ? ncolp - p * nr : nr;
      return t_all + p * n * nr + (col - p * nr);
    };
    // Padding columns of T_all: zero, so S_all's padding stays finite.
    for (int64_t col = ncol; col < ncolp; ++col) {
      int64_t w;
      float* p = panel_at(col, &w);
      for (int64_t i = 0; i < n; ++i) p[i * w] = 0.0f;
    }
    // 1. T = S_prev·Θᵀ + θ_b, scattered into T_all's panels.
    const int64_t tblocks = (n + kThetaBlock - 1) / kThetaBlock;
    ThreadPool::parallel_for(batch * heads * tblocks, nt, [&](int64_t lo, int64_t hi, int tid) {
      ThetaRows tr;
      tr.theta_t = theta_t_.data();
      tr.theta_b = theta_b_.data();
      tr.nk = nk;
      tr.nkp = nkp;
      tr.t = scratch + tid * per;
      for (int64_t it = lo; it < hi; ++it) {
        const int64_t bh = it / tblocks, i0 = (it % tblocks) * kThetaBlock;
        tr.rows = n - i0 < kThetaBlock ? n - i0 : kThetaBlock;
        tr.prev = prev.f32() + (bh * n + i0) * nk;
        simd->theta_rows(tr);
        for (int64_t r = 0; r < tr.rows; ++r) {
          const float* src = tr.t + r * nkp;
          for (int64_t j = 0, col = bh * nk; j < nk;) {
            int64_t w;
            float* p = panel_at(col, &w);
            const int64_t off = (col % nr), len = nk - j < w - off ? nk - j : w - off;
            std::memcpy(p + (i0 + r) * w, src + j, static_cast<size_t>(len) * sizeof(float));
            j += len;
            col += len;
          }
        }
      }
    });
    // 2. S_all = Ψ·T_all + ψ_b, row blocks split over the threads.
    if (gbf_)
      multiply_bf16(t_all, ncolp, t16, s_all, nt);
    else
      multiply_fp32(t_all, ncolp, s_all, nt);
    // 3. scores out, softmax, ·V.
    const float* v = vt.f32();
    float* out = args.dst[0]->f32();
    float* scores = args.num_dst > 1 && args.dst[1] ? args.dst[1]->f32() : nullptr;
    const int64_t qblocks = (n + kQueryBlock - 1) / kQueryBlock;
    ThreadPool::parallel_for(batch * heads * qblocks, nt, [&](int64_t lo, int64_t hi, int tid) {
      SoftmaxPv a;
      a.s_stride = ncolp;
      a.v_stride = c;
      a.nk = nk;
      a.d = d;
      a.out_stride = c;
      a.p = scratch + tid * per;
      a.nkp = nkp;
      for (int64_t it = lo; it < hi; ++it) {
        const int64_t bh = it / qblocks, i0 = (it % qblocks) * kQueryBlock, b = bh / heads, h = bh % heads;
        a.rows = n - i0 < kQueryBlock ? n - i0 : kQueryBlock;
        a.s = s_all + i0 * ncolp + bh * nk;
        a.scores = scores ? scores + (bh * n + i0) * nk : nullptr;
        a.v = v + b * nk * c + h * d;
        a.out = out + (b * n + i0) * c + h * d;
        simd->softmax_pv(a);
      }
    });
    return Status::Ok();
  }

 private:
  // Phase 2 in fp32: the lavit simd's panel GEMM over T_all's column panels.
  void multiply_fp32(const float* t_all, int64_t ncolp, float* s_all, int nt) const {
    const int64_t n = n_, mr = simd_->gemm_mr;
    const LavitSimd* simd = simd_;
    PanelGemm g;
    g.a = psi_p_.data();
    g.b = t_all;
    g.bias = psi_b_.data();
    g.c = s_all;
    g.ldc = ncolp;
    g.m = n;
    g.k = n;
    g.ncolp = ncolp;
    ThreadPool::parallel_for((n + mr - 1) / mr, nt, [&](int64_t lo, int64_t hi, int) {
      PanelGemm mine = g;
      mine.mb_lo = lo;
      mine.mb_hi = hi;
      simd->panel_gemm(mine);
    });
  }

  // Phase 2 in bf16: T_all (row-major [N][ncolp]) rounded into pair panels, then Ψ·T_all on the bf16 tile
  // per block of row tiles, then ψ_b added to each row.
  void multiply_bf16(const float* t_all, int64_t ncolp, float* t16, float* s_all, int nt) const {
    const int64_t n = n_, pairs = gemm_bf16_pairs(n_), nr = gbf_->nr, panels = gemm_panels(ncolp, nr);
    ThreadPool::parallel_for(panels, nt, [&](int64_t lo, int64_t hi, int) {
      const int64_t cols = std::min(hi * nr, ncolp) - lo * nr;
      gemm_bf16_pack_b(t_all + lo * nr, ncolp, n, cols, static_cast<int>(nr), t16 + lo * pairs * nr);
    });
    const int64_t rows_per_task = kBf16RowTiles * gbf_->mr, tasks = (n + rows_per_task - 1) / rows_per_task;
    ThreadPool::parallel_for(tasks, nt, [&](int64_t lo, int64_t hi, int) {
      const int64_t r0 = lo * rows_per_task, r1 = std::min(hi * rows_per_task, n);
      gemm_packed_product(gbf_, psi16_.data() + r0 * pairs, pairs, r1 - r0, pairs, t16, ncolp,
                          s_all + r0 * ncolp, ncolp);
      for (int64_t i = r0; i < r1; ++i) {
        float* row = s_all + i * ncolp;
        const float b = psi_b_[i];
        for (int64_t j = 0; j < ncolp; ++j) row[j] += b;
      }
    });
  }

  const LavitSimd* simd_;
  const GemmKernels* gbf_;
  int64_t heads_;
  int planned_threads_;
  int64_t n_ = 0, nk_ = 0, nkp_ = 0;
  std::vector<float> theta_t_, theta_b_, psi_p_, psi_b_;
  std::vector<float> psi16_;  // bf16: Ψ as [N][pairs(N)] pairs
};

}  // namespace

Status create_reused_attention(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                               std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const ReusedAttentionAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  if (a->num_heads < 1 || plan.num_src != 6 || plan.num_dst > 2) return Status::Ok();
  const Shape& s = plan.src_shapes[0];
  const Shape& v = plan.src_shapes[1];
  if (s.rank != 4 || v.rank != 3 || s[1] != a->num_heads || s[2] < 1 || s[3] < 1 || v[2] < a->num_heads ||
      v[2] % a->num_heads != 0)
    return Status::Ok();
  for (int i = 2; i < 6; ++i)
    if (!constant_input(plan, i)) return Status::Ok();  // weights computed at run time: reference
  const LavitSimd* simd = ctx->isa == X86Isa::kAvx512 ? lavit_simd_avx512() : lavit_simd_avx2();
  const int64_t ncolp = up16(s[0] * s[1] * s[3]);
  const int threads = plan.num_threads < 1 ? 1 : plan.num_threads;
  const GemmKernels* gbf =
      ctx->bf16 ? gemm_kernels_bf16_for(s[2], ncolp, gemm_bf16_pairs(s[2]), ctx->options.gemm_tile) : nullptr;
  info->workspace_bytes = static_cast<size_t>(ReusedAttentionKernel::shared_floats(s[2], ncolp) +
                                              up16(ReusedAttentionKernel::bf16_floats(gbf, s[2], ncolp)) +
                                              ReusedAttentionKernel::thread_floats(up16(s[3])) * threads) *
                          sizeof(float);
  info->copied_srcs = 0b111100;  // Θ, θ_b, Ψ, ψ_b: packed or padded at creation
  *kernel = std::make_unique<ReusedAttentionKernel>(plan, simd, gbf, a->num_heads);
  return Status::Ok();
}

}  // namespace x86
}  // namespace vitrt
