// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// DepthToSpace and SpaceToDepth (docs/onnx.md): Reshape + Transpose + Reshape, exactly the steps ONNX's
// definitions of the two ops are written in, so no new IR op and no arithmetic (the result is a permutation
// of the input). Input and output are [N, C, H, W] with a block size b:
//   DepthToSpace DCR: [N, b, b, C/b², H, W], perm (0, 3, 4, 1, 5, 2), -> [N, C/b², H·b, W·b]
//   DepthToSpace CRD: [N, C/b², b, b, H, W], perm (0, 1, 4, 2, 5, 3), -> [N, C/b², H·b, W·b]
//   SpaceToDepth:     [N, C, H/b, b, W/b, b], perm (0, 3, 5, 1, 2, 4), -> [N, C·b², H/b, W/b]
#include "common/checked_math.h"
#include "onnx/lower_common.h"

namespace vitrt::convert::lowering {
namespace {

using NodeProto = onnx::NodeProto;

Status lower_depth_space(ImportContext& cx, int, const NodeProto& n) {
  OnnxValue* x;
  VITRT_RETURN_IF_ERROR(cx.input(n, 0, &x));
  const std::vector<SymDim> from = dims_of(*x);
  if (from.size() != 4)
    return cx.bad_node(n, "input of rank " + std::to_string(from.size()) + ", expected 4 ([N, C, H, W])");
  for (size_t d = 1; d < 4; ++d)
    if (!from[d].is_static()) return cx.unsupported_node(n, "the batch in its channel or spatial axes");
  const int64_t b = cx.attr_int(n, "blocksize", 0);
  int64_t bb = 0;
  if (b < 1 || !checked_mul(b, b, &bb))
    return cx.bad_node(n, "blocksize " + std::to_string(b) + ", expected a positive block size");
  const SymDim batch = from[0];
  const int64_t c = from[1].c, h = from[2].c, w = from[3].c;
  std::vector<SymDim> mid, to;
  std::vector<int32_t> perm;
  if (n.op_type() == "DepthToSpace") {
    const std::string mode = cx.attr_string(n, "mode", "DCR");
    if (mode != "DCR" && mode != "CRD") return cx.bad_node(n, "mode '" + mode + "', expected DCR or CRD");
    if (c % bb != 0)
      return cx.bad_node(
          n, std::to_string(c) + " channels, not a multiple of blocksize² = " + std::to_string(bb));
    int64_t hb = 0, wb = 0;
    if (!checked_mul(h, b, &hb) || !checked_mul(w, b, &wb)) return cx.bad_node(n, "output too large");
    const SymDim sb = SymDim::of(b), sc = SymDim::of(c / bb), sh = SymDim::of(h), sw = SymDim::of(w);
    if (mode == "DCR") {
      mid = {batch, sb, sb, sc, sh, sw};
      perm = {0, 3, 4, 1, 5, 2};
    } else {
      mid = {batch, sc, sb, sb, sh, sw};
      perm = {0, 1, 4, 2, 5, 3};
    }
    to = {batch, sc, SymDim::of(hb), SymDim::of(wb)};
  } else {
    if (h % b != 0 || w % b != 0)
      return cx.bad_node(n, "spatial size " + std::to_string(h) + "x" + std::to_string(w) +
                                " is not a multiple of blocksize " + std::to_string(b));
    int64_t cbb = 0;
    if (!checked_mul(c, bb, &cbb)) return cx.bad_node(n, "output too large");
    const SymDim sb = SymDim::of(b);
    mid = {batch, SymDim::of(c), SymDim::of(h / b), sb, SymDim::of(w / b), sb};
    perm = {0, 3, 5, 1, 2, 4};
    to = {batch, SymDim::of(cbb), SymDim::of(h / b), SymDim::of(w / b)};
  }
  if (b == 1) {  // every step is the identity
    cx.alias(n.output(0), *x);
    return Status::Ok();
  }
  int32_t t;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &t));
  const std::string out = n.output(0);
  OnnxValue v;
  VITRT_RETURN_IF_ERROR(reshape_to(cx, n, t, from, mid, out + ".blocks", &v));
  VITRT_RETURN_IF_ERROR(
      cx.add_op(n, OpType::kTranspose, TransposeAttrs{perm}, {v.tensor}, out + ".moved", &v));
  VITRT_RETURN_IF_ERROR(reshape_to(cx, n, v.tensor, v.dims, to, out, &v));
  cx.set(out, std::move(v));
  return Status::Ok();
}

}  // namespace

std::map<std::string, Entry> depth_space_entries() {
  return {
      {"DepthToSpace", {lower_depth_space, {"blocksize", "mode"}}},
      {"SpaceToDepth", {lower_depth_space, {"blocksize"}}},
  };
}

}  // namespace vitrt::convert::lowering
