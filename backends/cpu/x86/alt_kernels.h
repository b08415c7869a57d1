// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The seam through which another library lends the x86 backend its Linear and Conv2d kernels (oneDNN's, from
// backends/cpu/onednn, for comparisons with X86Options::use_onednn). This library never depends on the
// lender: the lender links this library and registers a provider from a static initialiser. Without a
// provider, or when the provider cannot start (e.g. oneDNN cannot create its engine), the backend runs its
// own kernels.
#include <memory>

#include "backends/backend.h"
#include "backends/cpu/x86/x86_backend.h"

namespace vitrt {
namespace x86 {

// One per backend instance (the lender's engine, stream and the like live here). Each create_* leaves *kernel
// empty to decline the node (the backend then uses its own kernel) and returns an error only for a failure
// that must stop the plan. The kernels may outlive this object.
class AltKernels {
 public:
  virtual ~AltKernels() = default;
  virtual const char* name() const = 0;
  virtual Status create_linear(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) = 0;
  // Dense (not depthwise) NCHW Conv2d.
  virtual Status create_conv2d(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) = 0;
};

// Builds the AltKernels of one backend for its resolved options and effective ISA; nullptr when it cannot.
using AltKernelsProvider = std::unique_ptr<AltKernels> (*)(const X86Options& options, X86Isa isa);

// The process-wide provider (nullptr: none). Registration replaces any earlier one.
void register_alt_kernels_provider(AltKernelsProvider provider);
AltKernelsProvider alt_kernels_provider();

}  // namespace x86
}  // namespace vitrt
