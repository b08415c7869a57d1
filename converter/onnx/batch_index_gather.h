// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// A Gather through indices computed from the batch: how torch's dynamo exporter writes `as_strided` (a
// restride, e.g. of AdaptiveAvgPool's output before ConvNeXt's LayerNorm2d) when the batch is dynamic:
//
//   Range(0, B, 1) [-> Mul s]* -> Unsqueeze (never on axis 0) [-> Add C]* -> idx
//   Gather(data = x flattened to [P·B], idx, axis 0)
//
// Every index is b·s + C[r] for image b. When s is the per-image size P and every C in [0, P), image b's
// output reads image b's elements only: out[b, r] = x[b].flat[C[r]]. docs/onnx.md ("Batch-indexed gather").
#include "onnx/import_context.h"

namespace vitrt::convert {

// Tries the pattern rooted at the Range node `index` (or, in a model exported with a static batch n, at a
// Gather whose constant indices are image b's b·P + C for b < n); on a match emits a Reshape (C is 0, 1, ...,
// P-1 in order) or a Reshape, Transpose, Reshape (C walks x's elements as a permutation of its axes), marks
// the pattern's nodes consumed and binds the Gather's output. Any other form leaves `matched` false.
Status match_batch_index_gather(ImportContext& cx, int index, bool* matched);

}  // namespace vitrt::convert
