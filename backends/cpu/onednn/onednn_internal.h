// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// What the oneDNN kernels share: one engine and stream per x86 backend instance, the factories, and the
// execute helper. Only this folder includes oneDNN's headers.
#include <dnnl.hpp>
#include <memory>

#include "backends/cpu/x86/x86_internal.h"

namespace vitrt {
namespace onednn {

using x86::run_threads;
using x86::ThreadPool;  // libgomp's team, which Debian's oneDNN runs on too (thread_pool.h)

struct Context {
  dnnl::engine engine;
  dnnl::stream stream;
  bool verbose = false;  // X86Options::verbose: print the primitive each kernel got
};

// Each leaves *kernel empty to decline the node (no oneDNN implementation, computed weights, fused residual).
Status create_linear(const std::shared_ptr<Context>&, const KernelPlan&, std::unique_ptr<Kernel>*,
                     KernelInfo*);
Status create_conv2d(const std::shared_ptr<Context>&, const KernelPlan&, std::unique_ptr<Kernel>*,
                     KernelInfo*);

// Executes a oneDNN primitive with up to 8 (arg, memory) pairs through the C API (no std::unordered_map).
inline Status execute(const dnnl::primitive& p, const dnnl::stream& s, int n, const dnnl_exec_arg_t* args) {
  if (dnnl_primitive_execute(p.get(), s.get(), n, args) != dnnl_success)
    return runtime_error("oneDNN execute failed");
  if (dnnl_stream_wait(s.get()) != dnnl_success) return runtime_error("oneDNN stream wait failed");
  return Status::Ok();
}

}  // namespace onednn
}  // namespace vitrt
