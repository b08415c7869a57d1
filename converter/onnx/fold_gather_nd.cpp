// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "onnx/fold_gather_nd.h"

#include "common/checked_math.h"
#include "onnx/fold_nd_index.h"
#include "onnx/onnx_limits.h"

namespace vitrt::convert {

Status fold_gather_nd(ImportContext& cx, const onnx::NodeProto& n, const OnnxValue& data,
                      const OnnxValue& indices, OnnxValue* out) {
  const int64_t batch_dims = cx.attr_int(n, "batch_dims", 0);
  if (batch_dims != 0)
    return cx.unsupported_node(n, "batch_dims " + std::to_string(batch_dims) + " (only 0 is folded)");
  const std::vector<int64_t>& ds = data.shape;
  const std::vector<int64_t>& is = indices.shape;
  const int64_t r = static_cast<int64_t>(ds.size());
  int64_t k;
  VITRT_RETURN_IF_ERROR(nd_index_depth(cx, n, data, indices, &k));
  std::vector<int64_t> shape(is.begin(), is.end() - 1);
  shape.insert(shape.end(), ds.begin() + k, ds.end());
  int64_t total = 1;
  for (int64_t d : shape)
    if (!checked_mul(total, d, &total) || total > kMaxFoldedElements)
      return cx.unsupported_node(n, "folding it at import would make a constant " + int_dims_str(shape) +
                                        ", more than the " + std::to_string(kMaxFoldedElements) +
                                        "-element limit on folded constants");
  // Element counts of data and indices are bounded: they are constants the importer already holds.
  std::vector<int64_t> stride(ds.size(), 1);
  for (int64_t d = r - 2; d >= 0; --d) stride[d] = stride[d + 1] * ds[d + 1];
  const int64_t slice = stride[k - 1];  // elements one index tuple addresses
  const int64_t tuples = static_cast<int64_t>(indices.i.size()) / k;
  out->is_const = true;
  out->kind = data.kind;
  out->onnx_type = data.onnx_type;
  out->shape = shape;
  out->ir_constant = -1;
  out->f.clear();
  out->i.clear();
  if (data.kind == ConstKind::kFloat)
    out->f.resize(static_cast<size_t>(total));
  else
    out->i.resize(static_cast<size_t>(total));
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t flat;
    VITRT_RETURN_IF_ERROR(nd_index_offset(cx, n, indices, t, k, ds, stride, &flat));
    for (int64_t e = 0; e < slice; ++e) {
      if (data.kind == ConstKind::kFloat)
        out->f[t * slice + e] = data.f[flat + e];
      else
        out->i[t * slice + e] = data.i[flat + e];
    }
  }
  return Status::Ok();
}

}  // namespace vitrt::convert
