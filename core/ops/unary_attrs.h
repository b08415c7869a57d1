// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The rules of the Unary op's attributes (ir/op_attrs.h), shared by its shape inference, the file format's
// decoder and the kernels, so that every way into a session refuses the same malformed nodes.
#include <string>

#include "ir/op_attrs.h"

namespace vitrt {

constexpr int kNumUnaryKinds = 36;  // UnaryKind values are 0 .. kNumUnaryKinds - 1

// The kind's name ("Sqrt", "LeakyRelu", ...); "UnknownUnaryKind" outside the enum.
const char* unary_kind_name(UnaryKind kind);

// Empty when `a` is well formed, else what is wrong: a known kind; alpha finite for LeakyRelu, Elu and
// ThresholdedRelu, finite and not 0 for Celu, alpha and beta finite for HardSigmoid, Selu and Shrink; Clip's
// bounds not NaN (±inf means no bound); 0 for every parameter the kind does not use (one meaning, one
// encoding).
std::string unary_attrs_problem(const UnaryAttrs& a);

}  // namespace vitrt
