// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// What the channels-last passes (channels_last_conv, channels_last_stem) share: which convs they may rewrite
// and the rewritten node.
#include "ir/graph.h"
#include "planner/pass.h"

namespace vitrt {

// A Conv2d still in image layout ([B,C,H,W]); the patterns' attribute check.
bool is_nchw_conv(const Node& n);

// `conv` with channels_last set, in *out; false when it is neither dense nor depthwise (the forms the
// backends implement channels-last) or the backend has no channels-last form of it. Inputs and outputs are
// copied unchanged: the caller rewires them to the channels-last tensors.
bool channels_last_form(const Graph& g, const Node& conv, const PassContext& ctx, Node* out);

}  // namespace vitrt
