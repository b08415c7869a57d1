// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// LRN (docs/onnx.md) becomes the IR's Lrn with ONNX's attributes: size (required), alpha, beta, bias
// (defaults 1e-4, 0.75, 1). The classic classifiers of the ONNX model zoo converted from Caffe (AlexNet,
// CaffeNet, GoogLeNet, ZFNet) use it; torch.onnx.export writes nn.LocalResponseNorm as plain ops instead.
#include <cmath>

#include "onnx/lower_common.h"

namespace vitrt::convert::lowering {
namespace {

using NodeProto = onnx::NodeProto;

Status lower_lrn(ImportContext& cx, int, const NodeProto& n) {
  OnnxValue* x;
  VITRT_RETURN_IF_ERROR(cx.input(n, 0, &x));
  if (x->rank() < 3)
    return cx.bad_node(n, "input of rank " + std::to_string(x->rank()) + ", expected [N,C,D1,...]");
  if (!cx.attr(n, "size")) return cx.bad_node(n, "has no 'size' attribute (it is required)");
  const int64_t size = cx.attr_int(n, "size", 0);
  if (size < 1 || size > (int64_t{1} << 30))
    return cx.bad_node(n, "size " + std::to_string(size) + ", expected 1 or more");
  LrnAttrs a{static_cast<int32_t>(size), cx.attr_float(n, "alpha", 1e-4f), cx.attr_float(n, "beta", 0.75f),
             cx.attr_float(n, "bias", 1.0f)};
  if (!std::isfinite(a.alpha) || !std::isfinite(a.beta) || !std::isfinite(a.bias))
    return cx.bad_node(n, "alpha, beta and bias must be finite");
  int32_t t;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, 0, &t));
  return emit(cx, n, OpType::kLrn, a, {t}, n.output(0));
}

}  // namespace

std::map<std::string, Entry> lrn_entries() {
  return {{"LRN", {lower_lrn, {"size", "alpha", "beta", "bias"}}}};
}

}  // namespace vitrt::convert::lowering
