// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "backends/cuda/cuda_common.h"

#include <cstring>

#include "backends/operand_check.h"

namespace vitrt {
namespace cuda {

Status cuda_status(cudaError_t e, const char* expr, const std::string& where) {
  (void)cudaGetLastError();  // reset a non-sticky error so that the next call starts clean
  std::string m = where + ": " + expr + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
  if (e == cudaErrorMemoryAllocation) return out_of_memory(m);
  return runtime_error(m);
}

Status cublas_status(cublasStatus_t s, const char* expr, const std::string& where) {
  std::string m = where + ": " + expr + ": " + cublasGetStatusName(s) + " (" + cublasGetStatusString(s) + ")";
  if (s == CUBLAS_STATUS_ALLOC_FAILED) return out_of_memory(m);
  return runtime_error(m);
}

// ---- CudaContext -------------------------------------------------------------------------------------------

CudaContext::~CudaContext() {
  // Best effort, errors ignored: nothing may abort or throw here.
  if (device_ >= 0) (void)cudaSetDevice(device_);
  if (cublas_) (void)cublasDestroy(cublas_);
  if (cublas_workspace_) (void)cudaFree(cublas_workspace_);
  if (stream_) (void)cudaStreamDestroy(stream_);
}

Status CudaContext::create(int device, std::shared_ptr<CudaContext>* out) {
  const std::string where = "cuda backend (device " + std::to_string(device) + ")";
  std::shared_ptr<CudaContext> c(new CudaContext());
  c->device_ = device;
  VITRT_CUDA_CHECK(cudaSetDevice(device), where);
  VITRT_CUDA_CHECK(cudaGetDeviceProperties(&c->props_, device), where);
  VITRT_CUDA_CHECK(cudaStreamCreateWithFlags(&c->stream_, cudaStreamNonBlocking), where);
  VITRT_CUBLAS_CHECK(cublasCreate(&c->cublas_), where);
  VITRT_CUBLAS_CHECK(cublasSetStream(c->cublas_, c->stream_), where);
  VITRT_CUDA_CHECK(cudaMalloc(&c->cublas_workspace_, kCublasWorkspaceBytes), where);
  VITRT_CUBLAS_CHECK(cublasSetWorkspace(c->cublas_, c->cublas_workspace_, kCublasWorkspaceBytes), where);
  // Full float32 GEMMs (no TF32), so that results match the reference within float32 tolerances.
  VITRT_CUBLAS_CHECK(cublasSetMathMode(c->cublas_, CUBLAS_DEFAULT_MATH), where);
  *out = std::move(c);
  return Status::Ok();
}

// ---- DeviceBuffer ------------------------------------------------------------------------------------------

DeviceBuffer::~DeviceBuffer() {
  if (data_) (void)cudaFree(data_);
}

Status DeviceBuffer::allocate(size_t floats, const std::string& where) {
  if (data_) {
    (void)cudaFree(data_);
    data_ = nullptr;
    size_ = 0;
  }
  if (floats == 0) return Status::Ok();
  void* p = nullptr;
  VITRT_CUDA_CHECK(cudaMalloc(&p, floats * sizeof(float)), where);  // 256-byte aligned
  data_ = static_cast<float*>(p);
  size_ = floats;
  return Status::Ok();
}

// ---- CudaKernel --------------------------------------------------------------------------------------------

CudaKernel::CudaKernel(std::shared_ptr<CudaContext> ctx, const KernelPlan& plan)
    : ctx_(std::move(ctx)), node_(*plan.node) {
  label_ = std::string("cuda ") + op_type_name(node_.type);
  if (!node_.name.empty()) label_ += " '" + node_.name + "'";
}

Status CudaKernel::fail(const std::string& what) const {
  return runtime_error(label_ + ": " + what);
}

Status CudaKernel::check_launch(const char* what) const {
  VITRT_CUDA_CHECK(cudaGetLastError(), label_ + ": launching " + what);
  return Status::Ok();
}

Status CudaKernel::init(const KernelPlan& plan) {
  VITRT_CUDA_CHECK(cudaSetDevice(ctx_->device()), label_);
  num_src_ = plan.num_src;
  num_dst_ = plan.num_dst;
  for (int i = 0; i < plan.num_src; ++i) {
    const Tensor* t = plan.src_tensors[i];
    present_[i] = t != nullptr || plan.src_shapes[i].rank > 0;
    if (!present_[i]) continue;
    planned_src_[i] = plan.src_shapes[i];
    const int64_t n = plan.src_shapes[i].numel();
    if (n < 0) return bad_model(label_ + ": input " + std::to_string(i) + " has a dynamic planned shape");
    const std::string where = label_ + ": input " + std::to_string(i);
    VITRT_RETURN_IF_ERROR(src_buf_[i].allocate(static_cast<size_t>(n), where));
    if (t && t->is_constant && t->constant.data) {
      if (t->constant.size != static_cast<size_t>(n) * sizeof(float))
        return bad_model(where + ": constant data size does not match " + plan.src_shapes[i].str());
      constant_[i] = true;
      if (n > 0)  // once, synchronously, at plan time
        VITRT_CUDA_CHECK(cudaMemcpy(src_buf_[i].data(), t->constant.data, t->constant.size,
                                    cudaMemcpyHostToDevice),
                         where);
    }
  }
  for (int o = 0; o < plan.num_dst; ++o) {
    const int64_t n = plan.dst_shapes[o].numel();
    if (n < 0) return bad_model(label_ + ": output " + std::to_string(o) + " has a dynamic planned shape");
    VITRT_RETURN_IF_ERROR(dst_buf_[o].allocate(static_cast<size_t>(n), label_ + ": output " + std::to_string(o)));
  }
  return Status::Ok();
}

Status CudaKernel::run(const KernelArgs& args) {
  if (args.num_src < 0 || args.num_src > kMaxOpInputs || args.num_src > num_src_)
    return fail("bad number of inputs");
  if (args.num_dst != num_dst_) return fail("bad number of outputs");
  const Status checked = check_float32_run(node_, args);
  if (!checked.ok()) return fail(checked.message());
  // What this kernel's device buffers, allocated for the plan, can take.
  for (int i = 0; i < args.num_src; ++i) {
    const TensorRef* t = args.src[i];
    if (!t) continue;
    if (!present_[i]) return fail("input " + std::to_string(i) + " was absent at plan time");
    if (constant_[i] && t->shape != planned_src_[i])
      return fail("weight " + std::to_string(i) + " shape " + t->shape.str() + " differs from the plan");
    if (static_cast<size_t>(t->numel()) > src_buf_[i].size())
      return fail("input " + std::to_string(i) + " " + t->shape.str() + " is larger than planned " +
                  planned_src_[i].str());
  }
  for (int o = 0; o < args.num_dst; ++o)
    if (static_cast<size_t>(args.dst[o]->numel()) > dst_buf_[o].size())
      return fail("output " + std::to_string(o) + " is larger than planned");

  VITRT_CUDA_CHECK(cudaSetDevice(ctx_->device()), label_);
  cudaStream_t st = stream();
  // Everything is enqueued on the stream; whatever fails, the stream is drained before returning, so that no
  // copy is still reading or writing caller memory afterwards.
  auto enqueue = [&]() -> Status {
    TensorRef dsrc[kMaxOpInputs], ddst[kMaxOpOutputs];
    KernelArgs dev;
    dev.num_src = args.num_src;
    dev.num_dst = args.num_dst;
    dev.num_threads = args.num_threads;
    for (int i = 0; i < args.num_src; ++i) {
      const TensorRef* t = args.src[i];
      if (!t) continue;
      dsrc[i].shape = t->shape;
      dsrc[i].dtype = t->dtype;
      dsrc[i].data = src_buf_[i].data();
      dev.src[i] = &dsrc[i];
      const size_t bytes = static_cast<size_t>(t->numel()) * sizeof(float);
      if (!constant_[i] && bytes > 0)
        VITRT_CUDA_CHECK(cudaMemcpyAsync(src_buf_[i].data(), t->data, bytes, cudaMemcpyHostToDevice, st),
                         label_ + ": input " + std::to_string(i));
    }
    for (int o = 0; o < args.num_dst; ++o) {
      ddst[o].shape = args.dst[o]->shape;
      ddst[o].dtype = args.dst[o]->dtype;
      ddst[o].data = dst_buf_[o].data();
      dev.dst[o] = &ddst[o];
    }
    VITRT_RETURN_IF_ERROR(launch(dev));
    for (int o = 0; o < args.num_dst; ++o) {
      const size_t bytes = static_cast<size_t>(args.dst[o]->numel()) * sizeof(float);
      if (bytes > 0)
        VITRT_CUDA_CHECK(
            cudaMemcpyAsync(args.dst[o]->data, dst_buf_[o].data(), bytes, cudaMemcpyDeviceToHost, st),
            label_ + ": output " + std::to_string(o));
    }
    return Status::Ok();
  };
  const Status enqueued = enqueue();
  const cudaError_t synced = cudaStreamSynchronize(st);
  if (!enqueued.ok()) return enqueued;
  if (synced != cudaSuccess) return cuda_status(synced, "cudaStreamSynchronize(stream)", label_);
  return Status::Ok();
}

}  // namespace cuda
}  // namespace vitrt
