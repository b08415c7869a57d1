// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The rules of the SqueezeExcite op's attributes (ir/op_attrs.h), shared by its shape inference, the file
// format's decoder and the kernels, so that every way into a session refuses the same malformed nodes.
#include <string>

#include "ir/op_attrs.h"

namespace vitrt {

constexpr int kNumSqueezeActivations = 2;  // SqueezeActivation values are 0 .. kNumSqueezeActivations - 1
constexpr int kNumExciteGates = 2;         // ExciteGate values are 0 .. kNumExciteGates - 1

// Empty when `a` is well formed, else what is wrong: a known activation and gate; a hard-sigmoid gate's
// alpha and beta finite (Unary's HardSigmoid rules); 0 for both with the sigmoid gate (one meaning, one
// encoding).
std::string squeeze_excite_attrs_problem(const SqueezeExciteAttrs& a);

}  // namespace vitrt
