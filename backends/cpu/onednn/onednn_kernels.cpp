// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The x86 backend's AltKernels on oneDNN, and the static initialiser that registers them.
#include "backends/cpu/onednn/onednn_kernels.h"

#include <mutex>
#include <new>

#include "backends/cpu/onednn/onednn_internal.h"

namespace vitrt {
namespace onednn {
namespace {

class OnednnKernels final : public x86::AltKernels {
 public:
  explicit OnednnKernels(std::shared_ptr<Context> ctx) : ctx_(std::move(ctx)) {}
  const char* name() const override { return "oneDNN"; }
  Status create_linear(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) override {
    try {
      return onednn::create_linear(ctx_, plan, kernel, info);
    } catch (const std::bad_alloc&) {
      return out_of_memory("Linear '" + plan.node->name + "': oneDNN could not allocate");
    }
  }
  Status create_conv2d(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) override {
    try {
      return onednn::create_conv2d(ctx_, plan, kernel, info);
    } catch (const std::bad_alloc&) {
      return out_of_memory("Conv2d '" + plan.node->name + "': oneDNN could not allocate");
    }
  }

 private:
  std::shared_ptr<Context> ctx_;
};

std::unique_ptr<x86::AltKernels> provide(const X86Options& options, X86Isa isa) {
  return create_kernels(options, isa);
}

}  // namespace

std::unique_ptr<x86::AltKernels> create_kernels(const X86Options& options, X86Isa isa) {
  if (isa == X86Isa::kNone) return nullptr;
  // oneDNN's own cap is process-wide and only takes effect before its first primitive: best effort.
  static std::once_flag once;
  if (isa == X86Isa::kAvx2 && x86_detect_isa() == X86Isa::kAvx512)
    std::call_once(once, [] { dnnl_set_max_cpu_isa(dnnl_cpu_isa_avx2); });
  auto ctx = std::make_shared<Context>();
  ctx->verbose = options.verbose;
  try {
    ctx->engine = dnnl::engine(dnnl::engine::kind::cpu, 0);
    ctx->stream = dnnl::stream(ctx->engine);
  } catch (const dnnl::error&) {
    return nullptr;
  }
  return std::make_unique<OnednnKernels>(std::move(ctx));
}

}  // namespace onednn
}  // namespace vitrt

// Runs when the program (or libvitrt.so) is loaded. Nothing calls into this file, so the link option
// --undefined=vitrt_onednn_kernels_registered (CMakeLists.txt) is what keeps it in a static link.
extern "C" const bool vitrt_onednn_kernels_registered = [] {
  vitrt::x86::register_alt_kernels_provider(&vitrt::onednn::provide);
  return true;
}();
