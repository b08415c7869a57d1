// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The model file's op codes (`BuiltinOp` in schema/vitrt.fbs) for the IR's ops, in one table (op_codes.cpp).
// The loader and the writer translate through it, so the IR's own numbering (ir/op_type.h, from
// core/ops/op_list.h) never reaches a file, and the on-disk codes stay append-only whatever the IR does.
#include <string>

#include "common/status.h"
#include "ir/op_type.h"
#include "vitrt_generated.h"

namespace vitrt {

// How a serialised op is stored: its op code and the member of the OpOptions union its options use (NONE for
// an op without options).
struct OpCode {
  fb::BuiltinOp builtin = fb::BuiltinOp::MIN;
  fb::OpOptions options = fb::OpOptions::NONE;
};

// The file's code of `type`; false for an op that is never written (OpOrigin::kPlannerOnly) or not an op.
bool op_code_of(OpType type, OpCode* out);

// The IR op a file's op code stands for. An unknown code (written by a newer vitrt?) or a reserved one (an op
// code that no file may hold) is `unsupported`, with a message naming the code.
Status op_type_of_code(fb::BuiltinOp builtin, OpType* out);

}  // namespace vitrt
