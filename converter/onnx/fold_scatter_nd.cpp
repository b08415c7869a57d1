// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "onnx/fold_scatter_nd.h"

#include "onnx/fold_nd_index.h"

namespace vitrt::convert {

Status fold_scatter_nd(ImportContext& cx, const onnx::NodeProto& n, const OnnxValue& data,
                       const OnnxValue& indices, const OnnxValue& updates, OnnxValue* out) {
  const std::string reduction = cx.attr_string(n, "reduction", "none");
  if (reduction != "none")
    return cx.unsupported_node(n, "reduction '" + reduction + "' (only 'none' is folded)");
  if (data.kind != updates.kind)
    return cx.bad_node(n, "data (" + onnx_type_name(data.onnx_type) + ") and updates (" +
                              onnx_type_name(updates.onnx_type) + ") differ in type");
  const std::vector<int64_t>& ds = data.shape;
  const std::vector<int64_t>& is = indices.shape;
  const int64_t r = static_cast<int64_t>(ds.size());
  int64_t k;
  VITRT_RETURN_IF_ERROR(nd_index_depth(cx, n, data, indices, &k));
  // updates: indices' shape without its last dimension, then data's shape from dimension k on.
  std::vector<int64_t> want(is.begin(), is.end() - 1);
  want.insert(want.end(), ds.begin() + k, ds.end());
  if (updates.shape != want)
    return cx.bad_node(n, "updates are " + int_dims_str(updates.shape) + ", expected " + int_dims_str(want) +
                              " for indices " + int_dims_str(is) + " and data " + int_dims_str(ds));
  // Element counts are bounded: data, indices and updates are constants the importer already holds.
  std::vector<int64_t> stride(ds.size(), 1);
  for (int64_t d = r - 2; d >= 0; --d) stride[d] = stride[d + 1] * ds[d + 1];
  const int64_t slice = stride[k - 1];  // elements one index tuple addresses
  const int64_t tuples = static_cast<int64_t>(indices.i.size()) / k;
  *out = data;
  out->ir_constant = -1;
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t flat;
    VITRT_RETURN_IF_ERROR(nd_index_offset(cx, n, indices, t, k, ds, stride, &flat));
    for (int64_t e = 0; e < slice; ++e) {
      if (out->kind == ConstKind::kFloat)
        out->f[flat + e] = updates.f[t * slice + e];
      else
        out->i[flat + e] = updates.i[t * slice + e];
    }
  }
  return Status::Ok();
}

}  // namespace vitrt::convert
