// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The operators of the IR, generated from the one table of ops (ops/op_list.h). The values are the IR's own:
// the model file numbers its ops separately (`BuiltinOp` in formats/schema/vitrt.fbs), and formats/op_codes.h
// maps between the two.
#include <cstdint>

#include "ops/op_list.h"

namespace vitrt {

enum class OpType : int32_t {
#define VITRT_OP_ENUMERATOR(name, ...) k##name,
  VITRT_OP_LIST(VITRT_OP_ENUMERATOR)
#undef VITRT_OP_ENUMERATOR
};

#define VITRT_OP_COUNT(...) +1
constexpr int32_t kNumOpTypes = 0 VITRT_OP_LIST(VITRT_OP_COUNT);
#undef VITRT_OP_COUNT

// Where an op may come from (the `origin` column of ops/op_list.h).
enum class OpOrigin : int8_t {
  kSerialised,   // may appear in a model file
  kPlannerOnly,  // made by a planner pass inside a session; never written to or read from a file
};

constexpr bool op_type_valid(int32_t v) {
  return v >= 0 && v < kNumOpTypes;
}

namespace detail {
constexpr OpOrigin kSerialised = OpOrigin::kSerialised;
constexpr OpOrigin kPlannerOnly = OpOrigin::kPlannerOnly;
#define VITRT_OP_ORIGIN(name, attrs, infer, min_in, max_in, min_out, max_out, version, origin) origin,
constexpr OpOrigin kOpOrigins[kNumOpTypes] = {VITRT_OP_LIST(VITRT_OP_ORIGIN)};
#undef VITRT_OP_ORIGIN
}  // namespace detail

// Where ops of `type` come from (constexpr, so the tables of other layers can static_assert against it).
constexpr OpOrigin op_origin(OpType type) {
  return detail::kOpOrigins[static_cast<int32_t>(type)];
}

}  // namespace vitrt
