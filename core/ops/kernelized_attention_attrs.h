// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The rules of the KernelizedAttention op (ir/op_attrs.h, KernelizedAttentionAttrs) and its geometry, shared
// by its shape inference, the file format's decoder and the kernels, so that every way into a session refuses
// the same malformed nodes.
#include <cstdint>
#include <string>

#include "common/shape.h"
#include "common/status.h"
#include "ir/op_attrs.h"

namespace vitrt {

constexpr int kNumKernelizedKinds = 3;  // KernelizedKind values are 0 .. kNumKernelizedKinds - 1

// The kind's display name ("EluNormalized", ...), "unknown" outside the enum.
const char* kernelized_kind_name(KernelizedKind kind);

// Empty when `a` is well formed, else what is wrong: a known kind, heads >= 1; eps finite and >= 0 for
// kEluNormalized, scale finite and > 0 for kEluScaled; the parameters a kind does not use hold their
// neutral values (eps 0, scale 1), so that every node has one encoding.
std::string kernelized_attention_attrs_problem(const KernelizedAttentionAttrs& a);

// The sizes of one node: q, k [batch, n, heads·dk], v [batch, n, heads·dv].
struct KernelizedGeometry {
  int64_t batch = 0, n = 0, heads = 0, dk = 0, dv = 0;
  int64_t cq() const { return heads * dk; }  // q's and k's channels
  int64_t cv() const { return heads * dv; }  // v's and the output's channels
};

// Checks the attributes and the three input shapes and fills `g`; the message names what was expected.
Status decode_kernelized_geometry(const KernelizedAttentionAttrs& a, const Shape& q, const Shape& k,
                                  const Shape& v, KernelizedGeometry* g);

}  // namespace vitrt
