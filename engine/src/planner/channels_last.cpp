// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "planner/channels_last.h"

namespace vitrt {

bool is_nchw_conv(const Node& n) {
  return !std::get<Conv2dAttrs>(n.attrs).channels_last;
}

bool channels_last_form(const Graph& g, const Node& conv, const PassContext& ctx, Node* out) {
  const int64_t groups = std::get<Conv2dAttrs>(conv.attrs).groups;
  const Shape& w = g.tensors[conv.inputs[1]].shape;  // [Cout, Cin/groups, kh, kw]
  if (w.rank != 4 || (groups != 1 && !(w[1] == 1 && w[0] == groups))) return false;
  *out = conv;
  std::get<Conv2dAttrs>(out->attrs).channels_last = true;
  return !ctx.backend || ctx.backend->supports(*out);
}

}  // namespace vitrt
