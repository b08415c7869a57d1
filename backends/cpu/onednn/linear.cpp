// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Linear on oneDNN's matmul (brgemm, AVX-512 or AVX2): y = x·Wᵀ + b, activation as an eltwise post-op.
// Created at plan time: one primitive for the planned rows M and one for the rows of one batch item (run in a
// loop when a smaller batch comes), the weight reordered once into the layout the primitives chose (owned by
// the kernel), user scratchpad mode with the scratchpad in the session workspace. Run only swaps pointers.
#include <algorithm>
#include <cstdio>
#include <string>

#include "backends/cpu/onednn/onednn_internal.h"
#include "backends/cpu/ref/activation.h"
#include "backends/cpu/ref/ref_kernel.h"

namespace vitrt {
namespace onednn {
namespace {

using dnnl::memory;
using dt = memory::data_type;
using tag = memory::format_tag;

struct MatmulPrim {
  int64_t m = 0;
  dnnl::matmul prim;
  memory src, wei, bias, dst, scratch;
  size_t scratch_bytes = 0;
  bool has_bias = false;
};

class LinearKernel final : public ref::RefKernel {
 public:
  LinearKernel(const KernelPlan& plan, std::shared_ptr<Context> ctx) : RefKernel(plan), ctx_(std::move(ctx)) {
    planned_threads_ = plan.num_threads < 1 ? 1 : plan.num_threads;
  }

  // Builds the primitives and packs the weight; workspace bytes in *ws.
  void init(const KernelPlan& plan, Activation act, size_t* ws) {
    const Shape& xs = plan.src_shapes[0];
    const Shape& wsh = plan.src_shapes[1];
    n_ = wsh[0];
    k_ = wsh[1];
    const int64_t m = k_ > 0 ? xs.numel() / k_ : 0;
    const int64_t items = xs.rank >= 2 ? xs[0] : 1;
    const bool bias = plan.num_src > 2 && plan.src_shapes[2].rank > 0;
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    if (act != Activation::kNone) {
      dnnl::post_ops po;
      const dnnl::algorithm alg = act == Activation::kRelu      ? dnnl::algorithm::eltwise_relu
                                  : act == Activation::kGeluErf ? dnnl::algorithm::eltwise_gelu_erf
                                                                : dnnl::algorithm::eltwise_gelu_tanh;
      po.append_eltwise(1.0f, alg, 0.0f, 0.0f);
      attr.set_post_ops(po);
    }
    const int prev = ThreadPool::set_threads(planned_threads_);
    const float* w = plan.src_tensors[1]->f32();
    const int64_t item_m = (items > 1 && m % items == 0) ? m / items : m;
    // The per-item primitive chooses the weight layout; the full one is asked to use the same.
    build(item_, item_m, bias, attr, memory::desc({k_, n_}, dt::f32, tag::any));
    packed_item_ = pack(item_, w);
    if (item_m != m) {
      try {
        build(full_, m, bias, attr, item_.wei.get_desc());
      } catch (const dnnl::error&) {
        build(full_, m, bias, attr, memory::desc({k_, n_}, dt::f32, tag::any));
      }
      if (full_.wei.get_desc() == item_.wei.get_desc()) {
        full_.wei = memory(full_.wei.get_desc(), ctx_->engine, packed_item_.get_data_handle());
      } else {
        packed_full_ = pack(full_, w);
      }
    }
    ThreadPool::set_threads(prev);
    *ws = std::max(item_.scratch_bytes, full_.scratch_bytes);
    if (ctx_->verbose)
      std::fprintf(stderr, "vitrt x86: Linear '%s' M=%lld K=%lld N=%lld: %s\n", node_.name.c_str(),
                   static_cast<long long>(m), static_cast<long long>(k_), static_cast<long long>(n_),
                   impl_.c_str());
  }

 protected:
  Status compute(const KernelArgs& args) override {
    const float* x = args.src[0]->f32();
    const float* bias = args.num_src > 2 && args.src[2] ? args.src[2]->f32() : nullptr;
    float* y = args.dst[0]->f32();
    if (args.src[1]->shape != planned_src_[1]) return fail("weight shape differs from the plan");
    const int64_t m = k_ > 0 ? args.src[0]->numel() / k_ : 0;
    if (m == 0 || n_ == 0) return Status::Ok();
    const int prev = ThreadPool::set_threads(run_threads(args, planned_threads_));
    Status s = Status::Ok();
    if (full_.m > 0 && m == full_.m) {
      s = exec(full_, x, bias, y, args);
    } else if (item_.m > 0 && m % item_.m == 0) {
      for (int64_t i = 0; i < m / item_.m && s.ok(); ++i)
        s = exec(item_, x + i * item_.m * k_, bias, y + i * item_.m * n_, args);
    } else {
      s = fail("rows " + std::to_string(m) + " are not a multiple of the planned rows per batch item");
    }
    ThreadPool::set_threads(prev);
    return s;
  }

 private:
  void build(MatmulPrim& p, int64_t m, bool bias, const dnnl::primitive_attr& attr,
             const memory::desc& wei_md) {
    const memory::desc src_md({m, k_}, dt::f32, tag::ab), dst_md({m, n_}, dt::f32, tag::ab);
    const memory::desc bias_md = bias ? memory::desc({1, n_}, dt::f32, tag::ab) : memory::desc();
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src_md, wei_md, bias_md, dst_md), attr, ctx_->engine);
    p.m = m;
    p.has_bias = bias;
    p.prim = dnnl::matmul(pd);
    impl_ = pd.impl_info_str();
    p.src = memory(pd.src_desc(), ctx_->engine, DNNL_MEMORY_NONE);
    p.wei = memory(pd.weights_desc(), ctx_->engine, DNNL_MEMORY_NONE);
    p.dst = memory(pd.dst_desc(), ctx_->engine, DNNL_MEMORY_NONE);
    if (bias) p.bias = memory(pd.bias_desc(), ctx_->engine, DNNL_MEMORY_NONE);
    p.scratch_bytes = pd.scratchpad_desc().get_size();
    p.scratch = memory(pd.scratchpad_desc(), ctx_->engine, DNNL_MEMORY_NONE);
  }

  // Reorders the [N,K] PyTorch weight (a K x N matrix in "ba" order) into p's layout; returns the owner.
  memory pack(MatmulPrim& p, const float* w) {
    memory user(memory::desc({k_, n_}, dt::f32, tag::ba), ctx_->engine, const_cast<float*>(w));
    memory packed(p.wei.get_desc(), ctx_->engine);  // allocated by oneDNN, owned here
    dnnl::reorder(user, packed).execute(ctx_->stream, user, packed);
    ctx_->stream.wait();
    p.wei = memory(p.wei.get_desc(), ctx_->engine, packed.get_data_handle());
    return packed;
  }

  Status exec(MatmulPrim& p, const float* x, const float* bias, float* y, const KernelArgs& args) {
    if (p.scratch_bytes > args.workspace_bytes) return fail("workspace smaller than planned");
    p.src.set_data_handle(const_cast<float*>(x));
    p.dst.set_data_handle(y);
    dnnl_exec_arg_t a[5];
    int n = 0;
    a[n++] = {DNNL_ARG_SRC, p.src.get()};
    a[n++] = {DNNL_ARG_WEIGHTS, p.wei.get()};
    a[n++] = {DNNL_ARG_DST, p.dst.get()};
    if (p.has_bias) {
      if (!bias) return fail("bias missing");
      p.bias.set_data_handle(const_cast<float*>(bias));
      a[n++] = {DNNL_ARG_BIAS, p.bias.get()};
    }
    if (p.scratch_bytes) {
      p.scratch.set_data_handle(args.workspace);
      a[n++] = {DNNL_ARG_SCRATCHPAD, p.scratch.get()};
    }
    return execute(p.prim, ctx_->stream, n, a);
  }

  std::string impl_;
  std::shared_ptr<Context> ctx_;
  int planned_threads_ = 1;
  int64_t n_ = 0, k_ = 0;
  MatmulPrim item_, full_;
  memory packed_item_, packed_full_;
};

}  // namespace

Status create_linear(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                     std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const LinearAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  if (!ref::activation_valid(a->activation)) return Status::Ok();  // the reference reports it
  if (a->activation == Activation::kSilu || a->activation == Activation::kHardSwish ||
      a->activation == Activation::kRelu6)
    return Status::Ok();  // oneDNN's swish and hardswish are not the Unary kinds' arithmetic: the x86 kernel
  if (plan.num_src > 3 && plan.src_shapes[3].rank > 0)
    return Status::Ok();  // fused residual: packed GEMM only
  const Tensor* w = plan.src_tensors[1];
  const Shape& ws = plan.src_shapes[1];
  if (!w || !w->is_constant || !w->constant.data || ws.rank != 2 || ws[0] < 1 || ws[1] < 1 ||
      w->constant.size != static_cast<size_t>(ws.numel()) * sizeof(float) || plan.src_shapes[0].numel() == 0)
    return Status::Ok();  // weights computed at run time, or empty: reference
  auto k = std::make_unique<LinearKernel>(plan, ctx);
  size_t bytes = 0;
  try {
    k->init(plan, a->activation, &bytes);
  } catch (const dnnl::error&) {
    return Status::Ok();  // oneDNN has no implementation: reference
  }
  info->workspace_bytes = bytes;
  info->fixed_rows = true;  // primitives for the planned rows and one item's rows only
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace onednn
}  // namespace vitrt
