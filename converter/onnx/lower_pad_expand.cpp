// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Pad, Expand and Tile on activations (docs/onnx.md). Pad becomes the IR's Pad; Expand the IR's Expand (or,
// read only by Concat, nothing: Concat broadcasts); Tile an Expand between two Reshapes: each tiled axis of
// size d gets a new axis of size 1 in front of it, which Expand broadcasts to the repeat count r, and merging
// [r, d] gives r·d rows of the whole axis over again, exactly numpy's tile.
#include "common/checked_math.h"
#include "onnx/lower_common.h"

namespace vitrt::convert::lowering {
namespace {

using NodeProto = onnx::NodeProto;

Status lower_pad(ImportContext& cx, int, const NodeProto& n) {
  OnnxValue *x, *p;
  VITRT_RETURN_IF_ERROR(cx.input(n, 0, &x));
  static const std::map<std::string, PadMode> modes = {
      {"constant", PadMode::kConstant}, {"reflect", PadMode::kReflect}, {"edge", PadMode::kEdge}};
  const std::string mode = cx.attr_string(n, "mode", "constant");
  if (!modes.count(mode)) return cx.unsupported_node(n, "mode '" + mode + "'");
  PadAttrs a;
  a.mode = modes.at(mode);
  VITRT_RETURN_IF_ERROR(cx.input(n, 1, &p));
  VITRT_RETURN_IF_ERROR(const_ints(cx, n, *p, "pads", &a.pads));
  const std::vector<SymDim> from = dims_of(*x);
  const size_t rank = from.size();
  if (cx.has_input(n, 3)) {
    // Opset 18's axes: the pads name only these axes (begins, then ends); every other axis keeps its size.
    OnnxValue* ax;
    std::vector<int64_t> axes;
    VITRT_RETURN_IF_ERROR(cx.input(n, 3, &ax));
    VITRT_RETURN_IF_ERROR(const_ints(cx, n, *ax, "axes", &axes));
    if (a.pads.size() != 2 * axes.size())
      return cx.bad_node(n, std::to_string(a.pads.size()) + " pads for " + std::to_string(axes.size()) +
                                " axes " + int_dims_str(axes));
    std::vector<int64_t> full(2 * rank, 0);
    std::vector<bool> seen(rank, false);
    for (size_t i = 0; i < axes.size(); ++i) {
      const int64_t r = static_cast<int64_t>(rank);
      if (axes[i] < -r || axes[i] >= r)
        return cx.bad_node(n, "axis " + std::to_string(axes[i]) + " of rank " + std::to_string(rank));
      const size_t d = static_cast<size_t>(axes[i] < 0 ? axes[i] + r : axes[i]);
      if (seen[d])
        return cx.bad_node(n, "axis " + std::to_string(axes[i]) + " named twice in " + int_dims_str(axes));
      seen[d] = true;
      full[d] = a.pads[i];
      full[d + rank] = a.pads[i + axes.size()];
    }
    a.pads = std::move(full);
  }
  if (cx.has_input(n, 2)) {
    OnnxValue* v;
    VITRT_RETURN_IF_ERROR(cx.input(n, 2, &v));
    if (!v->is_const || v->pending_expand || v->kind != ConstKind::kFloat || v->numel() != 1)
      return cx.unsupported_node(n, "constant_value must be one float known at import");
    a.value = v->f[0];
  }
  if (a.pads.size() != 2 * rank)
    return cx.bad_node(n, std::to_string(a.pads.size()) + " pads for rank " + std::to_string(rank));
  bool any = false;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t before = a.pads[d], after = a.pads[d + rank];
    if (before < 0 || after < 0)
      return cx.unsupported_node(n, "negative pads " + int_dims_str(a.pads) + " (cropping)");
    if ((before || after) && !from[d].is_static()) return cx.unsupported_node(n, "pads the batch axis");
    any = any || before || after;
  }
  if (!any) {
    cx.alias(n.output(0), *x);
    return Status::Ok();
  }
  int32_t t;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &t));
  return emit(cx, n, OpType::kPad, a, {t}, n.output(0));
}

Status lower_expand(ImportContext& cx, int, const NodeProto& n) {
  OnnxValue *x, *s;
  VITRT_RETURN_IF_ERROR(cx.input(n, 0, &x));
  VITRT_RETURN_IF_ERROR(cx.input(n, 1, &s));
  if (!s->is_const || s->kind != ConstKind::kInt)
    return cx.unsupported_node(n, "the target shape is computed from data, not known at import");
  const std::vector<SymDim> from = dims_of(*x);
  const size_t rank = std::max(from.size(), s->i.size());
  if (rank > static_cast<size_t>(kMaxRank))
    return cx.unsupported_node(n, "a result of rank " + std::to_string(rank));
  std::vector<SymDim> to(rank, SymDim::of(1));
  std::vector<int64_t> target(rank, 1);  // the IR's Expand: 1 keeps the source's dimension
  bool to_batch = false;                 // a source 1 broadcast to the batch: no static target says that
  for (size_t d = 0; d < rank; ++d) {
    const SymDim a = d + from.size() >= rank ? from[d + from.size() - rank] : SymDim::of(1);
    const SymDim b = d + s->i.size() >= rank ? s->i[d + s->i.size() - rank] : SymDim::of(1);
    if (a == b || b == SymDim::of(1)) {
      to[d] = a;
    } else if (a == SymDim::of(1)) {
      to[d] = b;
      if (!b.is_static() || b.c < 1) to_batch = true;
      target[d] = b.c;
    } else {
      return cx.bad_node(n, "cannot expand " + sym_dims_str(from) + " to " + sym_dims_str(s->i));
    }
  }
  if (to == from) {
    cx.alias(n.output(0), *x);
    return Status::Ok();
  }
  // Read only by Concat (the class token broadcast to the batch): Concat broadcasts it, no copy is made.
  bool only_concat = !cx.is_graph_output(n.output(0)) && !cx.consumers(n.output(0)).empty();
  for (int c : cx.consumers(n.output(0)))
    only_concat = only_concat && cx.onnx_graph().node(c).op_type() == "Concat";
  if (only_concat) {
    OnnxValue v = *x;
    v.pending_expand = true;
    v.expanded = to;
    cx.set(n.output(0), std::move(v));
    return Status::Ok();
  }
  if (to_batch)
    return cx.unsupported_node(n, "expanding " + sym_dims_str(from) + " to " + sym_dims_str(to) +
                                      " broadcasts to the batch, which only a Concat reading it can do");
  int32_t t;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &t));
  return emit(cx, n, OpType::kExpand, ExpandAttrs{target}, {t}, n.output(0));
}

Status lower_tile(ImportContext& cx, int, const NodeProto& n) {
  OnnxValue *x, *r;
  VITRT_RETURN_IF_ERROR(cx.input(n, 0, &x));
  VITRT_RETURN_IF_ERROR(cx.input(n, 1, &r));
  std::vector<int64_t> repeats;
  VITRT_RETURN_IF_ERROR(const_ints(cx, n, *r, "repeats", &repeats));
  const std::vector<SymDim> from = dims_of(*x);
  if (repeats.size() != from.size())
    return cx.bad_node(n,
                       std::to_string(repeats.size()) + " repeats for rank " + std::to_string(from.size()));
  // mid: the source with a 1 in front of each tiled axis; target: the Expand's (r there, 1 elsewhere); to:
  // the result.
  std::vector<SymDim> mid, to;
  std::vector<int64_t> target;
  for (size_t d = 0; d < from.size(); ++d) {
    const int64_t rep = repeats[d];
    if (rep < 1) return cx.unsupported_node(n, "repeat " + std::to_string(rep) + " (an empty result)");
    if (rep == 1) {
      mid.push_back(from[d]);
      target.push_back(1);
      to.push_back(from[d]);
      continue;
    }
    if (!from[d].is_static()) return cx.unsupported_node(n, "tiles the batch axis");
    int64_t size = 0;
    if (!checked_mul(rep, from[d].c, &size) || size > kMaxTensorElements)
      return cx.bad_node(
          n, "repeat " + std::to_string(rep) + " of an axis of " + from[d].str() + " is too large");
    if (from[d].c == 1) {  // a size-1 axis is broadcast in place
      mid.push_back(from[d]);
      target.push_back(rep);
    } else {
      mid.insert(mid.end(), {SymDim::of(1), from[d]});
      target.insert(target.end(), {rep, 1});
    }
    to.push_back(SymDim::of(size));
  }
  if (to == from) {
    cx.alias(n.output(0), *x);
    return Status::Ok();
  }
  if (mid.size() > static_cast<size_t>(kMaxRank))
    return cx.unsupported_node(n, "tiling " + std::to_string(mid.size() - from.size()) + " axes of rank " +
                                      std::to_string(from.size()) + " needs rank " +
                                      std::to_string(mid.size()) + " (at most " + std::to_string(kMaxRank) +
                                      ")");
  int32_t t;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &t));
  const std::string out = n.output(0);
  OnnxValue v;
  if (mid != from) {
    VITRT_RETURN_IF_ERROR(reshape_to(cx, n, t, from, mid, out + ".split", &v));
    t = v.tensor;
  }
  const bool merge = mid.size() != to.size();
  VITRT_RETURN_IF_ERROR(
      cx.add_op(n, OpType::kExpand, ExpandAttrs{target}, {t}, merge ? out + ".tiled" : out, &v));
  if (merge) VITRT_RETURN_IF_ERROR(reshape_to(cx, n, v.tensor, v.dims, to, out, &v));
  cx.set(out, std::move(v));
  return Status::Ok();
}

}  // namespace

std::map<std::string, Entry> pad_expand_entries() {
  return {
      {"Pad", {lower_pad, {"mode"}}},
      {"Expand", {lower_expand, {}}},
      {"Tile", {lower_tile, {}}},
  };
}

}  // namespace vitrt::convert::lowering
