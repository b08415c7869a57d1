// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Normalisation at import: subgraphs that exporters write as plain ops become the IR op the .pth route
// builds, so the planner sees one form. Recognised today:
//   - LayerNorm decomposed (opset < 17): ReduceMean -> Sub -> Pow 2 (or Mul by itself) -> ReduceMean ->
//     Add eps -> Sqrt -> Div [-> Mul gamma] [-> Add beta]  =>  LayerNorm(eps)
//   - GELU, erf form: x · (1 + erf(x / √2)) · 0.5 (or x / √2 written x · (1/√2))  =>  Gelu(erf)
//   - GELU, tanh form: 0.5 · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³)))  =>  Gelu(tanh), with the 0.5
//     applied last (nn.GELU(approximate='tanh')) or first (SOFT's Approx_GeLU)
//   - SiLU: x · Sigmoid(x)  =>  Unary(Silu)
// A pattern matches only when its intermediate values have no other readers and are no graph outputs, and
// its constants equal the formula's (to float rounding).
#include "onnx/import_context.h"

namespace vitrt::convert {

// Tries every pattern rooted at node `index`; on a match emits the IR op, marks the pattern's nodes
// consumed and binds the pattern's final output.
Status match_patterns(ImportContext& cx, int index, bool* matched);

}  // namespace vitrt::convert
