// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// What every CUDA kernel shares: CUDA/cuBLAS errors as Status, the per-backend context (device, stream, cuBLAS
// handle and workspace), device buffers, and CudaKernel, the base class that stages host operands through
// device buffers (see cuda_backend.h for why). Host code only: included by .cpp and .cu files alike.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <memory>
#include <string>

#include "backends/backend.h"

namespace vitrt {
namespace cuda {

// "<where>: <expr>: cudaErrorX (message)"; kOutOfMemory for allocation failures, kRuntime otherwise. Clears
// the (non-sticky) last-error state.
Status cuda_status(cudaError_t e, const char* expr, const std::string& where);
Status cublas_status(cublasStatus_t s, const char* expr, const std::string& where);

}  // namespace cuda
}  // namespace vitrt

#define VITRT_CUDA_CHECK(expr, where)                                                        \
  do {                                                                                      \
    const cudaError_t vitrt_cuda_err_ = (expr);                                             \
    if (vitrt_cuda_err_ != cudaSuccess) return ::vitrt::cuda::cuda_status(vitrt_cuda_err_, #expr, (where)); \
  } while (0)

#define VITRT_CUBLAS_CHECK(expr, where)                                                      \
  do {                                                                                      \
    const cublasStatus_t vitrt_cublas_st_ = (expr);                                         \
    if (vitrt_cublas_st_ != CUBLAS_STATUS_SUCCESS)                                          \
      return ::vitrt::cuda::cublas_status(vitrt_cublas_st_, #expr, (where));                \
  } while (0)

namespace vitrt {
namespace cuda {

// One per backend instance: everything its kernels launch goes to `stream`; `cublas` is bound to that stream
// and to its own workspace (cublasSetWorkspace), so cuBLAS never allocates behind our back.
class CudaContext {
 public:
  static constexpr size_t kCublasWorkspaceBytes = size_t{32} << 20;  // cuBLAS's recommendation for Hopper

  ~CudaContext();
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;

  static Status create(int device, std::shared_ptr<CudaContext>* out);

  int device() const { return device_; }
  cudaStream_t stream() const { return stream_; }
  cublasHandle_t cublas() const { return cublas_; }
  const cudaDeviceProp& props() const { return props_; }

 private:
  CudaContext() = default;
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  void* cublas_workspace_ = nullptr;
  cudaDeviceProp props_{};
};

// A float buffer in device memory, freed on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  Status allocate(size_t floats, const std::string& where);
  float* data() const { return data_; }
  size_t size() const { return size_; }  // floats

 private:
  float* data_ = nullptr;
  size_t size_ = 0;
};

// Base of every CUDA kernel in this step. At creation (init): uploads each constant input once and allocates
// a device staging buffer for each other input and each output, sized at the planned (maximum) shapes. At run:
// validates the host operands like the reference kernels do (dtypes, data, shapes through the op's own shape
// inference, nothing larger than planned), copies the non-constant inputs to the device, calls launch() with
// device TensorRefs of the actual shapes, copies the outputs back and synchronises the stream once.
class CudaKernel : public Kernel {
 public:
  CudaKernel(std::shared_ptr<CudaContext> ctx, const KernelPlan& plan);
  Status init(const KernelPlan& plan);
  Status run(const KernelArgs& args) final;

 protected:
  // `dev` has device pointers (src[i] nullptr where absent) and no workspace. Enqueue on stream() only.
  virtual Status launch(const KernelArgs& dev) = 0;

  cudaStream_t stream() const { return ctx_->stream(); }
  // The launch error of the last kernel, as a Status naming the op.
  Status check_launch(const char* what) const;
  Status fail(const std::string& what) const;

  std::shared_ptr<CudaContext> ctx_;
  Node node_;
  std::string label_;

 private:
  int num_src_ = 0, num_dst_ = 0;
  bool present_[kMaxOpInputs] = {};
  bool constant_[kMaxOpInputs] = {};
  Shape planned_src_[kMaxOpInputs];
  DeviceBuffer src_buf_[kMaxOpInputs];
  DeviceBuffer dst_buf_[kMaxOpOutputs];
};

// Wraps the factory pattern: make_unique<K>(args...), init(plan), hand it out.
template <class K, class... A>
Status make_cuda_kernel(const KernelPlan& plan, std::unique_ptr<Kernel>* kernel, A&&... args) {
  auto k = std::make_unique<K>(std::forward<A>(args)...);
  VITRT_RETURN_IF_ERROR(k->init(plan));
  *kernel = std::move(k);
  return Status::Ok();
}

}  // namespace cuda
}  // namespace vitrt
