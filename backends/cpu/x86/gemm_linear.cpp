// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Linear on the backend's own packed GEMM (packed_gemm.h): y = x·Wᵀ + b, then the activation, then the
// residual the planner may have fused in, all in registers before the block is stored. The weight is
// packed into column panels at plan time; run splits (panel, row chunk) tasks over the threads and allocates
// nothing (oneDNN's execute allocates on every call, so it is kept only behind X86Options::use_onednn, i.e.
// VITRT_X86_ONEDNN=1, for comparisons, and only in builds with backends/cpu/onednn). With session precision
// bf16 on a CPU with AVX512-BF16 (ctx->bf16) the weight is packed in bf16 pairs, and each thread rounds the
// row chunk of x its task needs into pairs in its share of the workspace (packed_gemm_bf16.h), once per chunk
// it takes in turn: no second parallel loop (a barrier per Linear is costly on a loaded machine). The tiling,
// threading and epilogue are the same.
#include <algorithm>
#include <cstdio>

#include "backends/cpu/ref/activation.h"
#include "backends/cpu/ref/ref_kernel.h"
#include "backends/cpu/x86/aligned_buffer.h"
#include "backends/cpu/x86/packed_gemm.h"
#include "backends/cpu/x86/packed_gemm_bf16.h"
#include "backends/cpu/x86/x86_internal.h"

namespace vitrt {
namespace x86 {
namespace {

constexpr int64_t kStreamBytes =
    64
    << 20;  // only results far beyond the caches are stored non-temporally (their reader would miss anyway)

class GemmLinearKernel final : public ref::RefKernel {
 public:
  GemmLinearKernel(const KernelPlan& plan, std::shared_ptr<Context> ctx, Activation act)
      : RefKernel(plan),
        ctx_(std::move(ctx)),
        act_(act),
        planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {
    const Shape& ws = plan.src_shapes[1];
    n_ = ws[0];
    k_ = ws[1];
    planned_rows_ = plan.src_shapes[0].numel() / k_;
    bf16_ = ctx_->bf16;
    const float* w = plan.src_tensors[1]->f32();
    if (bf16_) {
      kp_ = gemm_bf16_pairs(k_);
      gemm_ = gemm_kernels_bf16_for(planned_rows_, n_, kp_, ctx_->options.gemm_tile, ctx_->amx);
    } else {
      kp_ = k_;
      gemm_ = gemm_kernels_for(ctx_->isa == X86Isa::kAvx512, planned_rows_, n_, k_, ctx_->options.gemm_tile);
    }
    packed_ = AlignedFloats(static_cast<size_t>(gemm_packed_floats(n_, kp_, gemm_->nr)));
    bias_ = AlignedFloats(static_cast<size_t>(gemm_panels(n_, gemm_->nr) * gemm_->nr));
    // A constant bias is padded to whole panels once; a computed one at every run (then the kernel is not
    // reentrant: concurrent runs would share bias_).
    const Tensor* b = plan.num_src > 2 ? plan.src_tensors[2] : nullptr;
    has_bias_ = b != nullptr;
    constant_bias_ = b && b->is_constant && b->constant.data &&
                     b->constant.size == static_cast<size_t>(n_) * sizeof(float);
    if (bias_ && constant_bias_) std::copy(b->f32(), b->f32() + n_, bias_.data());
    if (!packed_) return;
    if (bf16_)
      gemm_bf16_pack_transposed(w, n_, k_, gemm_->nr, packed_.data());
    else
      gemm_pack_transposed(w, n_, k_, gemm_->nr, packed_.data());
  }
  bool ok() const { return packed_ && bias_; }
  bool reentrant() const { return constant_bias_ || !has_bias_; }
  // The weight is packed, a constant bias padded: run() reads neither again.
  uint64_t copied_srcs() const { return constant_bias_ ? 0b110 : 0b10; }
  const char* gemm_name() const { return gemm_->name; }
  // bf16: per planned thread, one row chunk of x in pairs (at most chunk_tiles(planned rows) row tiles).
  int64_t thread_floats() const {
    return bf16_ ? round16(chunk_tiles((planned_rows_ + gemm_->mr - 1) / gemm_->mr) * gemm_->mr * kp_) : 0;
  }
  size_t workspace_bytes() const {
    return static_cast<size_t>(thread_floats() * planned_threads_) * sizeof(float);
  }

 protected:
  Status compute(const KernelArgs& args) override {
    if (args.src[1]->shape != planned_src_[1]) return fail("weight shape differs from the plan");
    const float* x = args.src[0]->f32();
    const float* bias = args.num_src > 2 && args.src[2] ? args.src[2]->f32() : nullptr;
    const float* residual = args.num_src > 3 && args.src[3] ? args.src[3]->f32() : nullptr;
    float* y = args.dst[0]->f32();
    const int64_t m = k_ > 0 ? args.src[0]->numel() / k_ : 0;
    if (m == 0 || n_ == 0) return Status::Ok();
    const int threads = run_threads(args, planned_threads_);
    const int64_t k = k_, kp = kp_;
    const bool bf16 = bf16_;
    const int64_t per_thread = thread_floats();
    if (bf16) VITRT_RETURN_IF_ERROR(check_workspace(args, per_thread * threads));
    float* pairs = static_cast<float*>(args.workspace);
    if (bias && !constant_bias_) std::copy(bias, bias + n_, bias_.data());  // zero-padded to whole panels
    const int nr = gemm_->nr, mr = gemm_->mr;
    const int64_t panels = gemm_panels(n_, nr);
    // Tasks are (row chunk, panel). Each thread reads all of one operand and its share of the other, so when
    // A is the larger (more rows than columns) the threads split the rows, taking whole row chunks (balanced
    // to a tile) and walking every panel with their chunk of A in L2; otherwise they split the panels (and,
    // where a few panels do not divide among the threads, the rows too).
    const int64_t row_tiles = (m + mr - 1) / mr;
    // A chunk has at most chunk_tiles(row_tiles) tiles, however many chunks rows_first makes.
    int64_t chunks = (row_tiles + chunk_tiles(row_tiles) - 1) / chunk_tiles(row_tiles);
    const bool rows_first = m > n_ && row_tiles >= 2 * threads;
    if (rows_first) {
      chunks = std::min(row_tiles, (std::max<int64_t>(chunks, threads) + threads - 1) / threads * threads);
    } else if (threads > 1 && panels * chunks % threads != 0 && panels * chunks < 8 * threads) {
      // Few tasks that do not divide among the threads (DeiT-Tiny's qkv at batch 1: 9 panels, 5 and 4 on two
      // threads): more row chunks, each panel then read once per chunk, until they do.
      for (int64_t more = chunks + 1; more <= std::min(row_tiles, chunks * threads); ++more)
        if (panels * more % threads == 0) {
          chunks = more;
          break;
        }
    }
    const GemmKernels* g = gemm_;
    const Activation act = act_;
    const float* packed = packed_.data();
    const float* bias_pad = bias ? bias_.data() : nullptr;
    const int64_t n = n_;
    const bool stream = m * n * 4 > kStreamBytes;
    ThreadPool::parallel_for(panels * chunks, threads, [&](int64_t lo, int64_t hi, int tid) {
      float* mine = bf16 ? pairs + tid * per_thread : nullptr;
      int64_t have = -1;  // the row chunk in `mine`
      auto task = [&](int64_t t) {
        const int64_t p = rows_first ? t % panels : t / chunks, c = rows_first ? t / panels : t % chunks;
        const int64_t r0 = std::min(m, c * row_tiles / chunks * mr),
                      r1 = std::min(m, (c + 1) * row_tiles / chunks * mr);
        if (r0 >= r1) return;
        GemmPanel gp;
        if (bf16 && c != have) {
          gemm_bf16_pack_rows(x + r0 * k, k, r1 - r0, k, mine, kp);
          have = c;
        }
        gp.a = bf16 ? mine : x + r0 * k;
        gp.lda = kp;
        gp.m = r1 - r0;
        gp.k = kp;
        gp.b = packed + p * kp * nr;
        gp.cols = std::min<int64_t>(nr, n - p * nr);
        gp.c = y + r0 * n + p * nr;
        gp.ldc = n;
        gp.bias_cols = bias_pad ? bias_pad + p * nr : nullptr;
        gp.act = gemm_act(act);
        gp.stream = stream;
        if (residual) {  // added in registers after the activation, at the last store
          gp.residual = residual + r0 * n + p * nr;
          gp.ldr = n;
        }
        g->panel(gp);
      };
      if (bf16 && !rows_first && chunks > 1) {
        // Tasks run panel by panel with the chunks alternating; in bf16 this thread's tasks go chunk by chunk
        // instead (the same tasks, each writing its own block of y), so that each chunk is rounded into
        // pairs once rather than once per panel (LaViT-Tiny's stage-4 Linears: 392 rows in 2 chunks).
        for (int64_t c = 0; c < chunks; ++c)
          for (int64_t p = lo / chunks; p <= (hi - 1) / chunks; ++p)
            if (p * chunks + c >= lo && p * chunks + c < hi) task(p * chunks + c);
      } else {
        for (int64_t t = lo; t < hi; ++t) task(t);
      }
    });
    return Status::Ok();
  }

 private:
  std::shared_ptr<Context> ctx_;
  Activation act_;
  int planned_threads_;
  const GemmKernels* gemm_ = nullptr;
  int64_t n_ = 0, k_ = 0;
  int64_t kp_ = 0;  // the packed K: k_, or its bf16 pairs
  int64_t planned_rows_ = 0;
  bool bf16_ = false;
  bool has_bias_ = false, constant_bias_ = false;

  // Row tiles of a chunk of A that stays in L2 while the panels pass (at least one, at most all).
  int64_t chunk_tiles(int64_t row_tiles) const {
    return std::clamp<int64_t>(kGemmRowBlockBytes / (gemm_->mr * kp_ * 4), 1,
                               std::max<int64_t>(row_tiles, 1));
  }
  AlignedFloats packed_, bias_;
};

}  // namespace

Status create_linear_gemm(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                          std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const LinearAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  if (!ref::activation_valid(a->activation)) return Status::Ok();  // the reference reports it
  const Tensor* w = plan.src_tensors[1];
  const Shape& ws = plan.src_shapes[1];
  if (!w || !w->is_constant || !w->constant.data || ws.rank != 2 || ws[0] < 1 || ws[1] < 1 ||
      w->constant.size != static_cast<size_t>(ws.numel()) * sizeof(float) || plan.src_shapes[0].numel() == 0)
    return Status::Ok();  // weights computed at run time, or empty: reference
  auto k = std::make_unique<GemmLinearKernel>(plan, ctx, a->activation);
  if (!k->ok()) return out_of_memory("Linear '" + plan.node->name + "': cannot allocate the packed weight");
  if (ctx->options.verbose)
    std::fprintf(stderr, "vitrt x86: Linear '%s' %s x [%lld,%lld]: packed gemm %s\n", plan.node->name.c_str(),
                 plan.src_shapes[0].str().c_str(), static_cast<long long>(ws[0]),
                 static_cast<long long>(ws[1]), k->gemm_name());
  info->workspace_bytes = k->workspace_bytes();
  info->reentrant = k->reentrant();
  info->copied_srcs = k->copied_srcs();
  *kernel = std::move(k);
  return Status::Ok();
}

Status create_linear_any(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                         std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  if (ctx->alt) {  // oneDNN (options.use_onednn); what it declines runs on the packed GEMM
    VITRT_RETURN_IF_ERROR(ctx->alt->create_linear(plan, kernel, info));
    if (*kernel) return Status::Ok();
    *info = KernelInfo{};
  }
  return create_linear_gemm(ctx, plan, kernel, info);
}

}  // namespace x86
}  // namespace vitrt
