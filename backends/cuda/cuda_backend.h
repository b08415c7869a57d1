// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The CUDA backend ("cuda"), first step.
//
// What it is today:
//  * One CUDA stream and one cuBLAS handle (with its own 32 MiB cuBLAS workspace) per backend instance,
//  shared by
//    every kernel the instance creates (docs/architecture.md §7). Kernels hold a reference to that context,
//    so they stay valid even if the backend object is destroyed first.
//  * Sessions still hand kernels HOST memory (one host arena per session). So each CUDA kernel owns device
//    buffers for its operands: at create_kernel it uploads its constant weights once (cudaMalloc +
//    cudaMemcpy) and allocates device staging buffers for every other input and every output at the planned
//    maximum sizes; at run it copies the inputs host->device, launches, copies the outputs back
//    (cudaMemcpyAsync on the backend's stream) and synchronises once. Nothing is allocated in run. That makes
//    it plug into today's session unchanged and exactly testable against the reference backend, at the price
//    of two PCIe copies per op: it is NOT the fast path.
//  * Ops: Linear (cuBLAS SGEMM on the PyTorch [N,K] weight + a bias/activation epilogue), LayerNorm, Gelu,
//    Add, Mul (numpy broadcasting) and SoftmaxAttention (fused flash-style kernel, online softmax, all three
//    AttentionInputs layouts, head_dim <= 256; without score bias and without the score export output). Every
//    other op is unsupported: supports() says false and a session on "cuda" fails with "not supported by
//    backend 'cuda'", which is the accepted behaviour of this step.
//  * Errors: every cudaError_t / cublasStatus_t becomes a Status (runtime_error, out_of_memory on allocation
//    failure); nothing aborts, throws or prints.
//
// Next steps (not done here): device-resident arenas planned by the session (256-byte alignment, activations
// never leave the device, kernels stop staging), a device workspace arena shared by the kernels of a stream,
// CUDA graph capture of the planned run with a kill-switch environment variable, more ops, TF32/BF16 paths.
#include <memory>

#include "backends/backend.h"

namespace vitrt {

// Creates the CUDA backend on `device` (0-based). Returns nullptr and sets *why (when given) when there is no
// usable driver or GPU ("no CUDA device: <cudaGetErrorString>"), when `device` is out of range, or when the
// stream / cuBLAS handle cannot be created. Never aborts, never prints.
std::unique_ptr<Backend> create_cuda_backend(int device, Status* why);

// The CUDA backend's op table (Backend::op_impl), answerable without a device.
OpImpl cuda_op_impl(OpType type);

}  // namespace vitrt
