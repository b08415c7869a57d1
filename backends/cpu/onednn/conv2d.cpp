// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Dense NCHW Conv2d on oneDNN's convolution, built at plan time for the planned batch and for one image
// (looped for a smaller batch), weights reordered once, activation as a post-op, user scratchpad in the
// session workspace. (Depthwise convolutions stay on the x86 backend's direct kernel.)
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

struct ConvPrim {
  int64_t batch = 0;
  dnnl::convolution_forward prim;
  memory src, wei, bias, dst, scratch;
  size_t scratch_bytes = 0;
  bool has_bias = false;
};

class OnednnConvKernel final : public ref::RefKernel {
 public:
  OnednnConvKernel(const KernelPlan& plan, std::shared_ptr<Context> ctx)
      : RefKernel(plan),
        ctx_(std::move(ctx)),
        planned_threads_(plan.num_threads < 1 ? 1 : plan.num_threads) {}

  void init(const KernelPlan& plan, const Conv2dAttrs& a, size_t* ws) {
    a_ = a;
    xs_ = plan.src_shapes[0];
    wsh_ = plan.src_shapes[1];
    ys_ = plan.dst_shapes[0];
    const bool bias = plan.num_src > 2 && plan.src_shapes[2].rank > 0;
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    if (a.activation != Activation::kNone) {
      dnnl::post_ops po;
      const dnnl::algorithm alg = a.activation == Activation::kRelu      ? dnnl::algorithm::eltwise_relu
                                  : a.activation == Activation::kGeluErf ? dnnl::algorithm::eltwise_gelu_erf
                                                                         : dnnl::algorithm::eltwise_gelu_tanh;
      po.append_eltwise(1.0f, alg, 0.0f, 0.0f);
      attr.set_post_ops(po);
    }
    const int prev = ThreadPool::set_threads(planned_threads_);
    build(item_, 1, bias, attr, wei_any());
    const float* w = plan.src_tensors[1]->f32();
    packed_item_ = pack(item_, w);
    if (xs_[0] > 1) {
      try {
        build(full_, xs_[0], bias, attr, item_.wei.get_desc());
      } catch (const dnnl::error&) {
        build(full_, xs_[0], bias, attr, wei_any());
      }
      if (full_.wei.get_desc() == item_.wei.get_desc())
        full_.wei = memory(full_.wei.get_desc(), ctx_->engine, packed_item_.get_data_handle());
      else
        packed_full_ = pack(full_, w);
    }
    ThreadPool::set_threads(prev);
    *ws = std::max(item_.scratch_bytes, full_.scratch_bytes);
    if (ctx_->verbose)
      std::fprintf(stderr, "vitrt x86: Conv2d '%s' %s -> %s: %s\n", node_.name.c_str(), xs_.str().c_str(),
                   ys_.str().c_str(), impl_.c_str());
  }

 protected:
  Status compute(const KernelArgs& args) override {
    const TensorRef& x = *args.src[0];
    if (args.src[1]->shape != wsh_) return fail("weight shape differs from the plan");
    for (int d = 1; d < 4; ++d)
      if (x.shape[d] != xs_[d]) return fail("input " + x.shape.str() + " differs from the plan " + xs_.str());
    const int64_t b = x.shape[0];
    const float* bias = args.num_src > 2 && args.src[2] ? args.src[2]->f32() : nullptr;
    const int prev = ThreadPool::set_threads(run_threads(args, planned_threads_));
    Status s = Status::Ok();
    const int64_t in_item = xs_[1] * xs_[2] * xs_[3], out_item = ys_[1] * ys_[2] * ys_[3];
    if (full_.batch > 0 && b == full_.batch) {
      s = exec(full_, x.f32(), bias, args.dst[0]->f32(), args);
    } else {
      for (int64_t i = 0; i < b && s.ok(); ++i)
        s = exec(item_, x.f32() + i * in_item, bias, args.dst[0]->f32() + i * out_item, args);
    }
    ThreadPool::set_threads(prev);
    return s;
  }

 private:
  memory::desc wei_any() const {
    const int64_t g = a_.groups;
    if (g > 1) return memory::desc({g, wsh_[0] / g, wsh_[1], wsh_[2], wsh_[3]}, dt::f32, tag::any);
    return memory::desc({wsh_[0], wsh_[1], wsh_[2], wsh_[3]}, dt::f32, tag::any);
  }
  memory::desc wei_user() const {
    const int64_t g = a_.groups;
    if (g > 1) return memory::desc({g, wsh_[0] / g, wsh_[1], wsh_[2], wsh_[3]}, dt::f32, tag::goihw);
    return memory::desc({wsh_[0], wsh_[1], wsh_[2], wsh_[3]}, dt::f32, tag::oihw);
  }

  void build(ConvPrim& p, int64_t batch, bool bias, const dnnl::primitive_attr& attr,
             const memory::desc& wei_md) {
    const memory::desc src_md({batch, xs_[1], xs_[2], xs_[3]}, dt::f32, tag::nchw);
    const memory::desc dst_md({batch, ys_[1], ys_[2], ys_[3]}, dt::f32, tag::nchw);
    const memory::desc bias_md = bias ? memory::desc({ys_[1]}, dt::f32, tag::x) : memory::desc();
    const int64_t kh = wsh_[2], kw = wsh_[3];
    const int64_t pr_h = (ys_[2] - 1) * a_.stride_h + (kh - 1) * a_.dilation_h + 1 - xs_[2] - a_.pad_h;
    const int64_t pr_w = (ys_[3] - 1) * a_.stride_w + (kw - 1) * a_.dilation_w + 1 - xs_[3] - a_.pad_w;
    dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                      src_md, wei_md, bias_md, dst_md, {a_.stride_h, a_.stride_w},
                                      {a_.dilation_h - 1, a_.dilation_w - 1}, {a_.pad_h, a_.pad_w},
                                      {pr_h, pr_w});
    dnnl::convolution_forward::primitive_desc pd(d, attr, ctx_->engine);
    p.batch = batch;
    p.has_bias = bias;
    p.prim = dnnl::convolution_forward(pd);
    impl_ = pd.impl_info_str();
    p.src = memory(pd.src_desc(), ctx_->engine, DNNL_MEMORY_NONE);
    p.wei = memory(pd.weights_desc(), ctx_->engine, DNNL_MEMORY_NONE);
    p.dst = memory(pd.dst_desc(), ctx_->engine, DNNL_MEMORY_NONE);
    if (pd.src_desc() != src_md || pd.dst_desc() != dst_md) throw dnnl::error(dnnl_unimplemented, "layout");
    if (bias) p.bias = memory(pd.bias_desc(), ctx_->engine, DNNL_MEMORY_NONE);
    p.scratch_bytes = pd.scratchpad_desc().get_size();
    p.scratch = memory(pd.scratchpad_desc(), ctx_->engine, DNNL_MEMORY_NONE);
  }

  memory pack(ConvPrim& p, const float* w) {
    memory user(wei_user(), ctx_->engine, const_cast<float*>(w));
    memory packed(p.wei.get_desc(), ctx_->engine);
    dnnl::reorder(user, packed).execute(ctx_->stream, user, packed);
    ctx_->stream.wait();
    p.wei = memory(p.wei.get_desc(), ctx_->engine, packed.get_data_handle());
    return packed;
  }

  Status exec(ConvPrim& p, const float* x, const float* bias, float* y, const KernelArgs& args) {
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
  int planned_threads_;
  Conv2dAttrs a_;
  Shape xs_, wsh_, ys_;
  ConvPrim item_, full_;
  memory packed_item_, packed_full_;
};

}  // namespace

Status create_conv2d(const std::shared_ptr<Context>& ctx, const KernelPlan& plan,
                     std::unique_ptr<Kernel>* kernel, KernelInfo* info) {
  const Conv2dAttrs* a = nullptr;
  VITRT_RETURN_IF_ERROR(ref::get_attrs(plan, &a));
  const Shape& xs = plan.src_shapes[0];
  const Shape& ws = plan.src_shapes[1];
  const Tensor* w = plan.src_tensors[1];
  // SiLU, HardSwish and ReLU6 epilogues: the x86 kernels (oneDNN's swish and hardswish are not the Unary
  // arithmetic; its post-ops list here has no clip).
  if (!ref::activation_valid(a->activation) || a->activation == Activation::kSilu ||
      a->activation == Activation::kHardSwish || a->activation == Activation::kRelu6 || xs.rank != 4 ||
      ws.rank != 4 || plan.dst_shapes[0].rank != 4 || a->groups < 1 || a->stride_h < 1 || a->stride_w < 1 ||
      a->dilation_h < 1 || a->dilation_w < 1 || a->pad_h < 0 || a->pad_w < 0 || xs.numel() == 0 ||
      plan.dst_shapes[0].numel() == 0)
    return Status::Ok();  // the x86 backend handles (or the reference reports) it
  if (a->groups == xs[1] && ws[0] == xs[1] && ws[1] == 1) return Status::Ok();  // depthwise: direct kernel
  if (!w || !w->is_constant || !w->constant.data ||
      w->constant.size != static_cast<size_t>(ws.numel()) * sizeof(float))
    return Status::Ok();
  auto k = std::make_unique<OnednnConvKernel>(plan, ctx);
  size_t bytes = 0;
  try {
    k->init(plan, *a, &bytes);
  } catch (const dnnl::error&) {
    return Status::Ok();
  }
  info->workspace_bytes = bytes;
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace onednn
}  // namespace vitrt
