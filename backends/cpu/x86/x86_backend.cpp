// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The x86 backend: its op table (an x86 factory or the reference kernel for every op), the reference backend
// for everything the x86 kernels decline, the resolved options, and the lent Linear/Conv2d kernels (oneDNN)
// when asked for and registered (alt_kernels.h).
#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>

#include "backends/cpu/x86/packed_gemm_bf16.h"
#include "backends/cpu/x86/x86_internal.h"
#include "backends/op_table.h"
#include "ops/op_registry.h"

namespace vitrt {
namespace x86 {
namespace {

using Table = OpTable<Factory>;

// Every op of core/ops/op_list.h, in its order (backends/op_table.h): an x86 kernel, or the reference kernel
// for the ops this backend does not accelerate. An x86 factory may also decline a node (no kernel); the
// reference kernel then runs it.
constexpr Table::Row kKernels[] = {
    Table::kernel(OpType::kConv2d, create_conv2d_any_precision),
    Table::reference(OpType::kBatchNorm2d),
    Table::kernel(OpType::kLinear, create_linear_any),
    Table::kernel(OpType::kLayerNorm, create_layer_norm),
    Table::kernel(OpType::kGelu, create_gelu),
    Table::reference(OpType::kRelu),
    Table::kernel(OpType::kAdd, create_binary),
    Table::kernel(OpType::kMul, create_binary),
    Table::reference(OpType::kConcat),
    Table::reference(OpType::kSlice),
    Table::reference(OpType::kReshape),
    Table::kernel(OpType::kTranspose, create_transpose),
    Table::reference(OpType::kReduceMean),
    Table::kernel(OpType::kSoftmax, create_softmax),
    Table::kernel(OpType::kSoftmaxAttention, create_softmax_attention),
    Table::reference(OpType::kAdaptiveAvgPool2d),
    Table::kernel(OpType::kLinearAttention, create_linear_attention),
    Table::kernel(OpType::kReusedAttention, create_reused_attention),
    Table::kernel(OpType::kAttentionResidual, create_attention_residual),
    Table::kernel(OpType::kMatMul, create_matmul),
    Table::reference(OpType::kSub),
    Table::reference(OpType::kDiv),
    Table::reference(OpType::kExp),
    Table::reference(OpType::kReduceSum),
    Table::reference(OpType::kReduceMax),
    Table::kernel(OpType::kConvMlp, create_conv_mlp),
    Table::kernel(OpType::kUnary, create_unary),
    Table::reference(OpType::kPow),
    Table::reference(OpType::kMin),
    Table::reference(OpType::kMax),
    Table::kernel(OpType::kPool2d, create_pool2d),
    Table::reference(OpType::kReduce),
    Table::reference(OpType::kLogSoftmax),
    Table::reference(OpType::kInstanceNorm),
    Table::reference(OpType::kCompare),
    Table::reference(OpType::kWhere),
    Table::reference(OpType::kPad),
    Table::reference(OpType::kExpand),
    Table::kernel(OpType::kSqueezeExcite, create_squeeze_excite),
    Table::reference(OpType::kFmod),
    Table::reference(OpType::kMod),
    Table::kernel(OpType::kConvTranspose, create_conv_transpose),
    Table::kernel(OpType::kArgMax, create_arg_max),
    Table::kernel(OpType::kTrilu, create_trilu),
    Table::kernel(OpType::kCumSum, create_cum_sum),
    Table::kernel(OpType::kGatherElements, create_gather_elements),
    Table::kernel(OpType::kTopK, create_top_k),
    Table::kernel(OpType::kResize, create_resize),
    Table::kernel(OpType::kExternalAttention, create_external_attention),
    Table::kernel(OpType::kPerformerAttention, create_performer_attention),
    Table::kernel(OpType::kNystromAttention, create_nystrom_attention),
    Table::kernel(OpType::kSelectiveKernel, create_selective_kernel),
    Table::reference(OpType::kScatterND),  // a copy, then one memcpy per index tuple
    Table::kernel(OpType::kFastformerAttention, create_fastformer_attention),
    Table::kernel(OpType::kKernelizedAttention, create_kernelized_attention),
    Table::kernel(OpType::kPRelu, create_binary),
    Table::reference(OpType::kLrn),
};
static_assert(Table::complete(kKernels),
              "backends/cpu/x86/x86_backend.cpp: one row per op of core/ops/op_list.h, in its order");

class X86Backend final : public Backend {
 public:
  X86Backend(std::shared_ptr<Context> ctx, std::unique_ptr<Backend> ref)
      : ctx_(std::move(ctx)), ref_(std::move(ref)) {}

  const char* name() const override { return "cpu"; }
  bool batch_tile() const override { return true; }
  bool keeps_constants_resident() const override { return true; }
  void run_parallel(int threads, void (*fn)(void* ctx, int t), void* ctx) const override {
    ThreadPool::parallel_for(threads, threads, [&](int64_t b, int64_t e, int) {
      for (int64_t t = b; t < e; ++t) fn(ctx, static_cast<int>(t));
    });
  }

  OpImpl op_impl(OpType type) const override {
    const Table::Row* row = Table::find(kKernels, type);
    return row ? row->impl : OpImpl::kNotImplemented;
  }

  bool supports(const Node& node) const override {
    return op_impl(node.type) != OpImpl::kNotImplemented && ref_->supports(node);
  }

  std::string precision_report() const override {
    if (ctx_->bf16)
      return std::string(
                 "bf16: Linear (with a constant weight, on the packed GEMM) and plain SoftmaxAttention's "
                 "products, ConvMlp's fc1 and fc2, channels-last Conv2d on 128 or more channels or on "
                 "non-overlapping patches, SOFT's K1·W and LaViT's reused scores Ψ·T on AVX512-BF16 (bf16 "
                 "operands, fp32 sums); attention with a bias, mask or scores output, and every other op, "
                 "fp32") +
             (ctx_->amx ? std::string("; Linear, ConvMlp and channels-last Conv2d from 16 rows on ") +
                              ctx_->amx->name
                        : std::string());
    if (!ctx_->options.bf16) return "fp32";
    return ctx_->isa == X86Isa::kAvx512 ? "fp32: bf16 was asked for, but this CPU has no AVX512-BF16"
                                        : std::string("fp32: bf16 was asked for, but the ISA in use is ") +
                                              x86_isa_name(ctx_->isa) + " (AVX512-BF16 needs AVX-512)";
  }

  Status create_kernel(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) override {
    if (!plan.node || !kernel || !info)
      return invalid_argument("cpu backend: create_kernel needs a node and outputs");
    const Node& node = *plan.node;
    const std::string where = std::string(op_type_name(node.type)) + " '" + node.name + "'";
    if (!supports(node))
      return unsupported("cpu backend: " + where + " (version " + std::to_string(node.version) +
                         ") is not supported");
    if (plan.num_src < 0 || plan.num_src > kMaxOpInputs || plan.num_dst < 1 || plan.num_dst > kMaxOpOutputs)
      return bad_model("cpu backend: " + where + ": bad operand counts");
    bool all_f32 = true;
    for (int i = 0; i < plan.num_src; ++i)
      if (plan.src_tensors[i] && plan.src_tensors[i]->dtype != DType::kFloat32) all_f32 = false;
    const Shape* shapes[kMaxOpInputs] = {};
    for (int i = 0; i < plan.num_src; ++i)
      if (plan.src_tensors[i] || plan.src_shapes[i].rank > 0) shapes[i] = &plan.src_shapes[i];
    Shape want[kMaxOpOutputs];
    bool shapes_ok = infer_node_shapes(node, shapes, plan.num_src, want).ok();
    for (int o = 0; shapes_ok && o < plan.num_dst; ++o) shapes_ok = want[o] == plan.dst_shapes[o];
    const Factory f = Table::find(kKernels, node.type)->factory;  // nullptr: the reference kernel
    if (f && all_f32 && shapes_ok) {
      *info = KernelInfo{};
      std::unique_ptr<Kernel> k;
      VITRT_RETURN_IF_ERROR(f(ctx_, plan, &k, info));
      if (k) {
        *kernel = std::move(k);
        return Status::Ok();
      }
    }
    // Declined (or invalid: the reference backend then reports exactly what is wrong).
    *info = KernelInfo{};
    return ref_->create_kernel(plan, kernel, info);
  }

 private:
  std::shared_ptr<Context> ctx_;
  std::unique_ptr<Backend> ref_;
};

}  // namespace
}  // namespace x86

std::unique_ptr<Backend> create_x86_backend(const X86Options& options) {
  const X86Options resolved = x86_options_from_env(options);
  X86Options caps = resolved;
  caps.read_env = caps.read_env_tuning = false;  // already applied
  const X86Isa isa = x86_effective_isa(caps);
  if (isa == X86Isa::kNone) return nullptr;
  auto ctx = std::make_shared<x86::Context>();
  ctx->isa = isa;
  ctx->simd = isa == X86Isa::kAvx512 ? x86::simd_table_avx512() : x86::simd_table_avx2();
  ctx->options = caps;
  ctx->bf16 = caps.bf16 && isa == X86Isa::kAvx512 && x86_has_avx512_bf16();
  if (ctx->bf16) ctx->amx = x86::amx_kernels(caps);
  if (resolved.use_onednn) {
    const x86::AltKernelsProvider provide = x86::alt_kernels_provider();
    if (provide) ctx->alt = provide(caps, isa);
    if (!ctx->alt) {  // a comparison run would otherwise time the wrong kernels without a word
      static std::once_flag once;
      std::call_once(once, [provide] {
        std::fprintf(stderr,
                     "vitrt x86: oneDNN kernels requested (VITRT_X86_ONEDNN=1) but %s: using the "
                     "backend's own kernels\n",
                     provide ? "oneDNN could not create its CPU engine" : "this build has no oneDNN");
      });
    }
  }
  return std::make_unique<x86::X86Backend>(std::move(ctx), create_reference_backend());
}

namespace x86 {

const GemmKernels* amx_kernels(const X86Options& o) {
  if (o.amx_model) return gemm_kernels_amx_model();
  return o.use_amx && x86_has_amx_bf16() ? gemm_kernels_amx() : nullptr;
}

namespace {
std::atomic<AltKernelsProvider> g_alt_provider{
    nullptr};  // constant-initialised: safe from static initialisers
}  // namespace

void register_alt_kernels_provider(AltKernelsProvider provider) {
  g_alt_provider.store(provider);
}

AltKernelsProvider alt_kernels_provider() {
  return g_alt_provider.load();
}

}  // namespace x86

}  // namespace vitrt
