// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Softmax and LogSoftmax along one axis.
#include <string>

#include "ops/op_registry.h"

namespace vitrt {

Status infer_softmax(const Node& node, const Shape* const* src, int, Shape* dst) {
  int axis;
  if (!normalize_axis(std::get<SoftmaxAttrs>(node.attrs).axis, src[0]->rank, &axis))
    return bad_model(std::string(op_type_name(node.type)) + ": axis out of range for " + src[0]->str());
  dst[0] = *src[0];
  return Status::Ok();
}

}  // namespace vitrt
