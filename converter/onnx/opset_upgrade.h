// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Opsets 7 to 10 read as opset 11 (docs/onnx.md, "Opsets 7 to 10"). Between them and 11 the ops the
// importer lowers kept their meaning (8, 9 and 11 added types, broadcasting to Max, Min and Sum, optional
// inputs, negative axes and indices) but for four whose attributes became inputs at 10 or 11: Clip-6 (min,
// max), Pad-2 (pads, value), Slice-1 (starts, ends, axes) and TopK-1 (k). Those nodes are rewritten in their
// opset-11 form (the values as new initializers, Clip-6's absent bounds as its defaults, the lowest and
// highest float). BatchNormalization-7's `spatial` attribute, dropped at 9, is removed where it is 1 (its
// default: statistics per channel, as from 9 on) and refused naming the node where it is 0 (statistics per
// element). The model's default-domain opset becomes 11. Upsample and Resize-10, whose sampling the opset-11
// Resize does not state the same way, are refused naming the node.
#include <onnx/onnx_pb.h>

#include <string>

#include "common/status.h"

namespace vitrt::convert {

// No change for opset 11 and later. `log` gets one line saying what was rewritten.
Status upgrade_to_opset11(onnx::ModelProto* model, std::string* log);

}  // namespace vitrt::convert
