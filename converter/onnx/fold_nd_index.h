// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// What GatherND and ScatterND of constants share (fold_gather_nd.cpp, fold_scatter_nd.cpp): the flat offset
// into `data` of one index tuple.
#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "onnx/import_context.h"

namespace vitrt::convert {

// k, the length of one index tuple (indices' last dimension): it must be 1 to data's rank, and indices
// integers; otherwise bad_input naming the node.
inline Status nd_index_depth(ImportContext& cx, const onnx::NodeProto& n, const OnnxValue& data,
                             const OnnxValue& indices, int64_t* k) {
  if (indices.kind != ConstKind::kInt) return cx.bad_node(n, "indices must be an integer tensor");
  const std::vector<int64_t>& is = indices.shape;
  const int64_t r = static_cast<int64_t>(data.shape.size());
  *k = is.empty() ? 0 : is.back();
  if (is.empty() || *k < 1 || *k > r)
    return cx.bad_node(n, "indices " + int_dims_str(is) + " must end in a dimension from 1 to the rank " +
                              std::to_string(r) + " of data " + int_dims_str(data.shape));
  return Status::Ok();
}

// The flat element offset of tuple t (indices.i[t·k .. t·k + k)) into data of shape `ds` with row-major
// `stride`; negative indices count from the end. Out-of-range indices are bad_input naming the node.
inline Status nd_index_offset(ImportContext& cx, const onnx::NodeProto& n, const OnnxValue& indices,
                              int64_t t, int64_t k, const std::vector<int64_t>& ds,
                              const std::vector<int64_t>& stride, int64_t* flat) {
  *flat = 0;
  for (int64_t j = 0; j < k; ++j) {
    const SymDim& v = indices.i[t * k + j];
    const int64_t dim = ds[j];
    if (!v.is_static()) return cx.unsupported_node(n, "an index depends on the batch");
    if (v.c < -dim || v.c >= dim)
      return cx.bad_node(n, "index " + std::to_string(v.c) + " is out of range for dimension " +
                                std::to_string(j) + " of data " + int_dims_str(ds));
    *flat += (v.c < 0 ? v.c + dim : v.c) * stride[j];
  }
  return Status::Ok();
}

}  // namespace vitrt::convert
