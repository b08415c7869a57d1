// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The backend interface every executor plugs into (reference CPU, AVX-512, CUDA).
//
// The contract is split in two, as TensorRT's IPluginV3 build/runtime capabilities and MNN's
// onResize/onExecute are:
//  * plan time (session creation): `supports` tells the partitioner whether the backend implements a node,
//    `create_kernel` builds one Kernel per node with the shapes at the session's maximum batch. The factory
//    may pack weights (owned by the kernel) and reports the workspace bytes it needs in KernelInfo.
//  * run time: `Kernel::run` gets the actual tensors (batch <= the planned maximum) and the shared workspace.
//    It must not allocate, throw, or touch anything outside its operands and workspace.
#include <cstddef>
#include <memory>
#include <string>

#include "common/status.h"
#include "ir/graph.h"

namespace vitrt {

constexpr int kBackendApiVersion = 1;

// A tensor as a kernel sees it: memory plus the actual (run-time) shape. Dense, row-major.
struct TensorRef {
  void* data = nullptr;
  Shape shape;
  DType dtype = DType::kFloat32;

  const float* f32() const { return static_cast<const float*>(data); }
  float* f32() { return static_cast<float*>(data); }
  int64_t numel() const { return shape.numel(); }
};

struct KernelArgs {
  const TensorRef* src[kMaxOpInputs] = {};  // nullptr where an optional input is absent
  int num_src = 0;
  TensorRef* dst[kMaxOpOutputs] = {};
  int num_dst = 0;
  void* workspace = nullptr;  // KernelInfo::workspace_bytes at the planned maximum batch, 64-byte aligned
  size_t workspace_bytes = 0;
  int num_threads = 1;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual Status run(const KernelArgs& args) = 0;
};

// What a backend gets at plan time for one node.
struct KernelPlan {
  const Node* node = nullptr;
  const Graph* graph = nullptr;
  int num_src = 0;
  const Tensor* src_tensors[kMaxOpInputs] = {};  // nullptr where absent; constants carry their data
  Shape src_shapes[kMaxOpInputs];                // at the maximum batch
  int num_dst = 0;
  Shape dst_shapes[kMaxOpOutputs];
  int num_threads = 1;
};

// Capability metadata a kernel reports at plan time (ORT KernelDef, ggml supports_op).
struct KernelInfo {
  size_t workspace_bytes = 0;  // scratch needed by run(), at the planned maximum batch
  bool may_inplace = false;    // dst[0] may share memory with src[0] (elementwise ops)
  // dst[0] is src[0]'s bytes unchanged (Reshape): it may share them even while others read src[0].
  bool is_view = false;
  // run() may be called from several threads at once, each call with num_threads 1, its own operands and its
  // own workspace: the session then runs a row tile's blocks on the threads (docs/architecture.md §6.2).
  bool reentrant = false;
  // run() takes only the planned row count or whole batch items (oneDNN's Linear, whose primitives are built
  // for those): the session keeps the kernel out of row tiles, whose blocks have any row count.
  bool fixed_rows = false;
  // Bit i set: src i is a constant that the kernel copied (packed) when it was created and never reads again;
  // the session may then give a file-mapped constant's pages back (ConstantData::file_mapped). A kernel that
  // reads a src at run time, however rarely, leaves its bit clear (the default).
  uint64_t copied_srcs = 0;
  int reserved_flags = 0;  // reserved for future capabilities
};

// How a backend runs the ops of one type. Every backend answers for every op of the op table
// (core/ops/op_list.h), from a table the build checks for completeness (backends/op_table.h).
enum class OpImpl : int8_t {
  kKernel,          // a kernel of this backend's own (its factory may still decline a node, see below)
  kReference,       // the reference backend's kernel (the x86 backend for the ops it does not accelerate)
  kNotImplemented,  // supports() is false for every node of this type
};

inline const char* op_impl_name(OpImpl impl) {
  switch (impl) {
    case OpImpl::kKernel:
      return "kernel";
    case OpImpl::kReference:
      return "reference kernel";
    case OpImpl::kNotImplemented:
      return "not implemented";
  }
  return "unknown";
}

// The arithmetic a session asks for (SessionOptions::precision). bf16: the backend may round the operands of
// its GEMMs to bf16 and sum in fp32; what it does is its precision_report(). Every other op stays fp32.
enum class Precision : int8_t { kFp32 = 0, kBf16 = 1 };

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  virtual int api_version() const { return kBackendApiVersion; }
  // The answer of this backend's op table for `type`. A backend with kKernel may decline a particular node
  // (attributes or shapes its kernel does not take): supports() is then false for it, or, in the x86
  // backend, the reference kernel runs it.
  virtual OpImpl op_impl(OpType type) const = 0;
  virtual bool supports(const Node& node) const = 0;
  virtual Status create_kernel(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, KernelInfo* info) = 0;
  // Alignment of every tensor this backend reads or writes (bytes).
  virtual size_t alignment() const { return 64; }
  // What its kernels compute in: "fp32", or "bf16: " and which ops (a backend created for bf16 that cannot
  // give it says "fp32: " and why). A backend that knows nothing of bf16 keeps "fp32".
  virtual std::string precision_report() const { return "fp32"; }
  // Whether the session may run a CNN's high-resolution start image by image at batch > 1 (the batch tile,
  // docs/architecture.md §6.1): worth it where a kernel's tensors then stay in the CPU's caches; a device
  // backend would only launch more kernels.
  virtual bool batch_tile() const { return false; }
  // Whether the session should give its kernels its own copy of each file-mapped constant they read at run
  // time (KernelInfo::copied_srcs clear), and give the file's pages back (docs/architecture.md §6.3): a CPU
  // backend that reads weights in place on the hot path. Reading a file mapping there measured periodic
  // stalls of up to 2x a run's time on a virtualised host, where anonymous memory ran steadily. The reference
  // backend (an oracle, every weight read in place) and device backends (their own copies) keep the mapping.
  virtual bool keeps_constants_resident() const { return false; }
  // Calls fn(ctx, t) for every t in [0, threads) on up to `threads` threads of the backend's pool and returns
  // when every call has (a row tile's blocks, docs/architecture.md §6.2). Without a pool: in turn, here.
  virtual void run_parallel(int threads, void (*fn)(void* ctx, int t), void* ctx) const {
    for (int t = 0; t < threads; ++t) fn(ctx, t);
  }
};

// The portable reference CPU backend: obviously correct, single-threaded; the oracle for all others.
std::unique_ptr<Backend> create_reference_backend();

}  // namespace vitrt
