// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The rules of the Resize op's attributes (ir/op_attrs.h, ResizeAttrs), checked by its shape inference (so
// every way into a session refuses the same malformed nodes) and by the x86 kernel's factory.
#include <string>

#include "ir/op_attrs.h"

namespace vitrt {

// Empty when `a` is well formed, else what is wrong: known mode, coordinate and nearest rounding; 1 to
// kMaxResizeAxes resized axes with one step each; sizes >= 1; steps finite and >= 0; cubic_a finite.
std::string resize_attrs_problem(const ResizeAttrs& a);

}  // namespace vitrt
