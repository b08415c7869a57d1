// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Which ops the importer understands at the newest opset it accepts (kMaxOnnxOpset, 18). Opset 18 (ONNX 1.13)
// changed Pad, Resize, ScatterElements, ScatterND, Split, LpPool, OptionalGetElement, OptionalHasElement and
// the Reduce* ops (docs/onnx.md, Opsets); the importer reads the 18 form of Split and Reduce* only, so a
// model at opset 18 with any other of them is refused up front, naming the node, rather than read with the
// older definition.
#include "onnx/import_context.h"

namespace vitrt::convert {

// Unsupported naming the first node of the graph whose op has an opset-18 form the importer does not read.
Status check_opset_forms(ImportContext& cx);

}  // namespace vitrt::convert
