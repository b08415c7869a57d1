// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "backends/cuda/host_plan.h"
#include "backends/cuda/softmax_attention.cuh"
#include "backends/operand_check.h"
#include "ops/softmax_attention_layout.h"

namespace vitrt {
namespace cuda {
namespace {

constexpr int kQueriesPerBlock = 8;  // warps per block, one query row each

__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// D: head_dim rounded up to a multiple of 32 (each lane owns D/32 output columns), TK: keys per tile (<= 32).
template <int D, int TK>
__global__ void __launch_bounds__(kQueriesPerBlock * 32)
    flash_attention_kernel(const float* __restrict__ q, const float* __restrict__ k,
                           const float* __restrict__ v, float* __restrict__ out,
                           const SoftmaxAttentionLayout o, const float scale) {
  constexpr int R = D / 32;
  __shared__ float ks[TK][D + 1];  // padded: lane j reads row j, conflict-free
  __shared__ float vs[TK][D];
  __shared__ float qs[kQueriesPerBlock][D];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t b = blockIdx.z, h = blockIdx.y;
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kQueriesPerBlock + warp;
  const int d = static_cast<int>(o.head_dim);
  const bool active = i < o.nq;
  const float* qb = q + o.q_off + b * o.q_batch + h * d;
  const float* kb = k + o.k_off + b * o.k_batch + h * d;
  const float* vb = v + o.v_off + b * o.v_batch + h * d;
  for (int t = lane; t < D; t += 32) qs[warp][t] = (active && t < d) ? qb[i * o.q_stride + t] : 0.0f;

  float acc[R];
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = 0.0f;
  float m = -INFINITY, l = 0.0f;

  for (int64_t j0 = 0; j0 < o.nk; j0 += TK) {
    const int nt = static_cast<int>(o.nk - j0 < TK ? o.nk - j0 : TK);
    __syncthreads();  // the previous tile is consumed (and qs is written, first time round)
    for (int e = threadIdx.x; e < nt * d; e += blockDim.x) {
      const int jj = e / d, t = e - jj * d;
      ks[jj][t] = kb[(j0 + jj) * o.k_stride + t];
      vs[jj][t] = vb[(j0 + jj) * o.v_stride + t];
    }
    __syncthreads();
    // Lane jj scores key j0 + jj: s = (q_i · k_j) · scale, accumulated in t order as the reference does.
    float s = -INFINITY;
    if (lane < nt) {
      float dot = 0.0f;
      for (int t = 0; t < d; ++t) dot += qs[warp][t] * ks[lane][t];
      s = dot * scale;
    }
    const float m_new = fmaxf(m, warp_max(s));
    const float p = lane < nt ? expf(s - m_new) : 0.0f;
    const float corr = expf(m - m_new);  // 0 on the first tile (m = -inf)
    l = l * corr + warp_sum(p);
#pragma unroll
    for (int r = 0; r < R; ++r) acc[r] *= corr;
    for (int jj = 0; jj < nt; ++jj) {
      const float pj = __shfl_sync(0xffffffffu, p, jj);
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const int t = lane + 32 * r;
        if (t < d) acc[r] += pj * vs[jj][t];
      }
    }
    m = m_new;
  }
  if (!active) return;
  const float inv = o.nk > 0 ? 1.0f / l : 0.0f;  // no keys: zeros, as the reference
  float* oi = out + (b * o.nq + i) * o.c + h * d;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int t = lane + 32 * r;
    if (t < d) oi[t] = acc[r] * inv;
  }
}

template <int D, int TK>
void launch_flash(const float* q, const float* k, const float* v, float* out, const SoftmaxAttentionLayout& o,
                  float scale, cudaStream_t st) {
  const dim3 grid(static_cast<unsigned>((o.nq + kQueriesPerBlock - 1) / kQueriesPerBlock),
                  static_cast<unsigned>(o.heads), static_cast<unsigned>(o.batch));
  flash_attention_kernel<D, TK><<<grid, kQueriesPerBlock * 32, 0, st>>>(q, k, v, out, o, scale);
}

class SoftmaxAttentionKernel final : public CudaKernel {
 public:
  SoftmaxAttentionKernel(std::shared_ptr<CudaContext> ctx, const KernelPlan& plan, const SoftmaxAttentionAttrs& a)
      : CudaKernel(std::move(ctx), plan), a_(a) {}

 protected:
  Status launch(const KernelArgs& dev) override {
    const Shape* shapes[kMaxOpInputs] = {};
    run_src_shapes(dev, shapes);
    SoftmaxAttentionLayout o;
    Status s = decode_softmax_attention_layout(a_, shapes, dev.num_src, &o);
    if (!s.ok()) return fail(s.message());
    if (o.head_dim > kMaxAttentionHeadDim) return fail("head_dim above " + std::to_string(kMaxAttentionHeadDim));
    if (o.batch == 0 || o.nq == 0 || o.head_dim == 0) return Status::Ok();
    if (o.batch > 65535 || o.heads > 65535 || (o.nq + kQueriesPerBlock - 1) / kQueriesPerBlock > 0x7fffffff)
      return fail("grid too large");
    const float* q = dev.src[o.q_src]->f32();
    const float* k = dev.src[o.k_src]->f32();
    const float* v = dev.src[o.v_src]->f32();
    float* out = dev.dst[0]->f32();
    if (o.head_dim <= 32)
      launch_flash<32, 32>(q, k, v, out, o, a_.scale, stream());
    else if (o.head_dim <= 64)
      launch_flash<64, 32>(q, k, v, out, o, a_.scale, stream());
    else if (o.head_dim <= 128)
      launch_flash<128, 32>(q, k, v, out, o, a_.scale, stream());
    else
      launch_flash<256, 16>(q, k, v, out, o, a_.scale, stream());
    return check_launch("flash_attention_kernel");
  }

 private:
  SoftmaxAttentionAttrs a_;
};

}  // namespace

Status create_softmax_attention(const std::shared_ptr<CudaContext>& ctx, const KernelPlan& plan,
                                std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const SoftmaxAttentionAttrs& a = std::get<SoftmaxAttentionAttrs>(plan.node->attrs);
  const std::string where = "SoftmaxAttention '" + plan.node->name + "'";
  const Shape* shapes[kMaxOpInputs] = {};
  planned_src_shapes(plan, shapes);
  SoftmaxAttentionLayout o;
  Status s = decode_softmax_attention_layout(a, shapes, plan.num_src, &o);
  if (!s.ok()) return bad_model(where + ": " + s.message());
  if (o.head_dim > kMaxAttentionHeadDim)
    return unsupported(where + ": head_dim " + std::to_string(o.head_dim) + " is above " +
                       std::to_string(kMaxAttentionHeadDim) + ", not supported by backend 'cuda' yet");
  if (plan.num_dst != 1) return unsupported(where + ": the score output is not supported by backend 'cuda' yet");
  info->workspace_bytes = 0;
  return make_cuda_kernel<SoftmaxAttentionKernel>(plan, kernel, ctx, plan, a);
}

}  // namespace cuda
}  // namespace vitrt
