// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "onnx/batch_index_gather.h"

#include <algorithm>

#include "common/checked_math.h"
#include "onnx/lower_common.h"
#include "onnx/onnx_limits.h"

namespace vitrt::convert {
namespace {

using NodeProto = onnx::NodeProto;

// The indices b·s + c[r] of image b: `shape` is c's, its axis 0 standing for the batch (always 1).
struct BatchIndex {
  int64_t s = 1;
  std::vector<int64_t> shape{1};
  std::vector<int64_t> c{0};
};

bool static_ints(const OnnxValue* v, std::vector<int64_t>* out) {
  if (!v || !v->is_const || v->pending_expand || v->kind != ConstKind::kInt) return false;
  out->clear();
  for (const SymDim& d : v->i) {
    if (!d.is_static()) return false;
    out->push_back(d.c);
  }
  return true;
}

// The flat index into a tensor of shape `from` (right-aligned, size-1 axes broadcast) of element `e` of a
// tensor of shape `to`.
int64_t broadcast_source(int64_t e, const std::vector<int64_t>& to, const std::vector<int64_t>& from) {
  int64_t src = 0, stride = 1;
  const size_t lead = to.size() - from.size();
  for (size_t d = to.size(); d-- > 0;) {
    const int64_t i = e % to[d];
    e /= to[d];
    if (d >= lead) {
      const int64_t f = from[d - lead];
      if (f != 1) src += i * stride;
      stride *= f;
    }
  }
  return src;
}

// idx + t for a constant t of at most idx's rank whose axis over the batch (if it has one) is 1.
bool add_constant(BatchIndex* x, const std::vector<int64_t>& tshape, const std::vector<int64_t>& t) {
  const size_t r = x->shape.size();
  if (tshape.size() > r || (tshape.size() == r && tshape[0] != 1)) return false;
  std::vector<int64_t> out(r);
  int64_t n = 1;
  for (size_t d = 0; d < r; ++d) {
    const int64_t a = x->shape[d], b = d + tshape.size() >= r ? tshape[d + tshape.size() - r] : 1;
    if (a != b && a != 1 && b != 1) return false;
    out[d] = std::max(a, b);
    if (!checked_mul(n, out[d], &n) || n > kMaxFoldedElements) return false;
  }
  std::vector<int64_t> c(static_cast<size_t>(n));
  for (int64_t e = 0; e < n; ++e)
    if (!checked_add(x->c[broadcast_source(e, out, x->shape)], t[broadcast_source(e, out, tshape)], &c[e]))
      return false;
  x->shape = std::move(out);
  x->c = std::move(c);
  return true;
}

bool unsqueeze(ImportContext& cx, const NodeProto& n, BatchIndex* x) {
  std::vector<int64_t> axes = cx.attr_ints(n, "axes");
  if (!cx.attr(n, "axes") && (n.input_size() < 2 || !static_ints(cx.find(n.input(1)), &axes))) return false;
  const int64_t rank = static_cast<int64_t>(x->shape.size() + axes.size());
  std::vector<bool> added(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) return false;
    const size_t d = static_cast<size_t>(a < 0 ? a + rank : a);
    if (d == 0 || added[d]) return false;  // the batch must stay the first axis
    added[d] = true;
  }
  std::vector<int64_t> shape;
  size_t from = 0;
  for (int64_t d = 0; d < rank; ++d) shape.push_back(added[d] ? 1 : x->shape[from++]);
  x->shape = std::move(shape);
  return true;
}

// Follows the index arithmetic from the Range to the Gather reading it; the nodes go into `nodes`.
int follow_to_gather(ImportContext& cx, const std::string& range_out, BatchIndex* x,
                     std::vector<int>* nodes) {
  std::string cur = range_out;
  for (int steps = 0; steps < 64; ++steps) {
    const int c = cx.single_consumer(cur);
    if (c < 0 || cx.consumed(c)) return -1;
    const NodeProto& n = cx.onnx_graph().node(c);
    if (n.output_size() < 1) return -1;
    nodes->push_back(c);
    const std::string& op = n.op_type();
    if (op == "Gather")
      return n.input_size() == 2 && n.input(1) == cur && cx.attr_int(n, "axis", 0) == 0 ? c : -1;
    if ((op == "Mul" || op == "Add") && n.input_size() == 2) {
      const std::string& other = n.input(0) == cur ? n.input(1) : n.input(0);
      std::vector<int64_t> t;
      const OnnxValue* ov = cx.find(other);
      if (other == cur || !static_ints(ov, &t)) return -1;
      if (op == "Mul") {
        if (t.size() != 1) return -1;
        if (!checked_mul(x->s, t[0], &x->s)) return -1;
        for (int64_t& v : x->c)
          if (!checked_mul(v, t[0], &v)) return -1;
      } else if (!add_constant(x, ov->shape, t)) {
        return -1;
      }
    } else if (op == "Unsqueeze") {
      if (n.input_size() < 1 || n.input(0) != cur || !unsqueeze(cx, n, x)) return -1;
    } else {
      return -1;
    }
    cur = n.output(0);
  }
  return -1;
}

// The axes of `dims` longer than 1 ordered as a contiguous source walks them (largest stride first) when `c`
// reads a transposed contiguous tensor of `total` elements; empty when it does not.
std::vector<int> source_order(const std::vector<int64_t>& dims, const std::vector<int64_t>& c,
                              int64_t total) {
  std::vector<int> axes;
  std::vector<int64_t> stride(dims.size(), 0);
  int64_t unit = 1;
  for (size_t d = dims.size(); d-- > 0;) {
    if (dims[d] > 1) {
      axes.push_back(static_cast<int>(d));
      stride[d] = c[static_cast<size_t>(unit)] - c[0];
    }
    unit *= dims[d];
  }
  std::sort(axes.begin(), axes.end(), [&](int a, int b) { return stride[a] > stride[b]; });
  int64_t want = 1;
  for (size_t k = axes.size(); k-- > 0;) {
    if (stride[axes[k]] != want) return {};
    want *= dims[axes[k]];
  }
  if (want != total || c[0] != 0) return {};
  for (size_t e = 0; e < c.size(); ++e) {  // every element, not only the unit steps
    int64_t rest = static_cast<int64_t>(e), at = 0;
    for (size_t d = dims.size(); d-- > 0;) {
      at += (rest % dims[d]) * stride[d];
      rest /= dims[d];
    }
    if (c[e] != at) return {};
  }
  return axes;
}

// The per-image gather out[b, r] = x[b].flat[c[r]] of `gather` (its data `data`, [s·B]) as a Reshape or a
// Reshape / Transpose / Reshape; false (nothing emitted) when c reads outside the image or is no permutation.
Status emit_per_image_gather(ImportContext& cx, const NodeProto& gather, OnnxValue* data, const BatchIndex& x,
                             bool* done) {
  *done = false;
  for (int64_t v : x.c)
    if (v < 0 || v >= x.s) return Status::Ok();  // reads another image's elements
  const std::vector<int64_t> dims(x.shape.begin() + 1, x.shape.end());
  std::vector<SymDim> to{SymDim::batch()};
  for (int64_t d : dims) to.push_back(SymDim::of(d));
  bool identity = static_cast<int64_t>(x.c.size()) == x.s;
  for (size_t e = 0; identity && e < x.c.size(); ++e) identity = x.c[e] == static_cast<int64_t>(e);
  const std::vector<int> order = identity ? std::vector<int>{} : source_order(dims, x.c, x.s);
  if (!identity && order.empty()) return Status::Ok();
  int32_t src;
  VITRT_RETURN_IF_ERROR(cx.ir_tensor(data, gather.input(0), &src));
  const std::string& out_name = gather.output(0);
  OnnxValue out;
  if (identity) {
    VITRT_RETURN_IF_ERROR(lowering::reshape_to(cx, gather, src, data->dims, to, out_name, &out));
  } else {
    // [P·B] -> [B, the axes in source order] -> Transpose into the output's order -> [B, dims].
    std::vector<SymDim> walked{SymDim::batch()};
    for (int a : order) walked.push_back(SymDim::of(dims[a]));
    OnnxValue image, moved;
    VITRT_RETURN_IF_ERROR(
        lowering::reshape_to(cx, gather, src, data->dims, walked, out_name + ".source", &image));
    std::vector<int> sorted_axes(order);
    std::sort(sorted_axes.begin(), sorted_axes.end());
    TransposeAttrs perm{{0}};
    for (int a : sorted_axes)
      perm.perm.push_back(1 + static_cast<int32_t>(std::find(order.begin(), order.end(), a) - order.begin()));
    VITRT_RETURN_IF_ERROR(
        cx.add_op(gather, OpType::kTranspose, perm, {image.tensor}, out_name + ".moved", &moved));
    VITRT_RETURN_IF_ERROR(lowering::reshape_to(cx, gather, moved.tensor, moved.dims, to, out_name, &out));
  }
  cx.set(out_name, std::move(out));
  *done = true;
  return Status::Ok();
}

// The data of a Gather on axis 0 when it is an activation flattened to [s·B] with s ≥ 1; else nullptr.
OnnxValue* flat_images(ImportContext& cx, const NodeProto& gather, int64_t s) {
  if (gather.input_size() != 2 || cx.attr_int(gather, "axis", 0) != 0 || s < 1) return nullptr;
  OnnxValue* data = cx.find(gather.input(0));
  return data && !data->is_const && data->dims.size() == 1 && data->dims[0] == SymDim::batch(s) ? data
                                                                                                : nullptr;
}

// A model exported with a static batch n writes the same gather with constant indices: image b's are
// b·P + c[r] (n = 1: c itself). Read as the per-image gather of the batch.
Status match_static_batch_gather(ImportContext& cx, int index, bool* matched) {
  const NodeProto& gather = cx.onnx_graph().node(index);
  const int64_t n = cx.static_batch();
  if (n < 1 || gather.input_size() != 2 || gather.output_size() != 1) return Status::Ok();
  const OnnxValue* iv = cx.find(gather.input(1));
  std::vector<int64_t> idx;
  OnnxValue* data0 = cx.find(gather.input(0));
  if (!static_ints(iv, &idx) || iv->shape.empty() || iv->shape[0] != n || !data0 || data0->is_const ||
      data0->dims.size() != 1 || data0->dims[0].c != 0 || data0->dims[0].k < 1)
    return Status::Ok();
  BatchIndex x;
  x.s = data0->dims[0].k;
  OnnxValue* data = flat_images(cx, gather, x.s);
  if (!data) return Status::Ok();
  x.shape = iv->shape;
  x.shape[0] = 1;
  const size_t per = idx.size() / static_cast<size_t>(n);
  x.c.assign(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(per));
  for (size_t e = per; e < idx.size(); ++e)
    if (idx[e] != x.c[e % per] + static_cast<int64_t>(e / per) * x.s) return Status::Ok();
  VITRT_RETURN_IF_ERROR(emit_per_image_gather(cx, gather, data, x, matched));
  if (*matched) cx.consume(index);
  return Status::Ok();
}

}  // namespace

Status match_batch_index_gather(ImportContext& cx, int index, bool* matched) {
  *matched = false;
  const NodeProto& root = cx.onnx_graph().node(index);
  if (root.op_type() == "Gather") return match_static_batch_gather(cx, index, matched);
  if (root.op_type() != "Range" || root.input_size() != 3 || root.output_size() != 1) return Status::Ok();
  const OnnxValue *start = cx.find(root.input(0)), *limit = cx.find(root.input(1)),
                  *delta = cx.find(root.input(2));
  std::vector<int64_t> s0, d0;
  if (!static_ints(start, &s0) || !static_ints(delta, &d0) || s0 != std::vector<int64_t>{0} ||
      d0 != std::vector<int64_t>{1} || !limit || !limit->is_const || limit->kind != ConstKind::kInt ||
      limit->i.size() != 1 || limit->i[0] != SymDim::batch())
    return Status::Ok();
  BatchIndex x;
  std::vector<int> nodes{index};
  const int g = follow_to_gather(cx, root.output(0), &x, &nodes);
  if (g < 0) return Status::Ok();
  const NodeProto& gather = cx.onnx_graph().node(g);
  OnnxValue* data = flat_images(cx, gather, x.s);
  if (!data) return Status::Ok();
  VITRT_RETURN_IF_ERROR(emit_per_image_gather(cx, gather, data, x, matched));
  if (*matched)
    for (int n : nodes) cx.consume(n);
  return Status::Ok();
}

}  // namespace vitrt::convert
