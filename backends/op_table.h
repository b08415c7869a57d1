// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// A backend's op table: for every op of core/ops/op_list.h, in its order, the backend's kernel factory, the
// reference kernel, or an explicit "not implemented". The table is constexpr and each backend checks it with
//   static_assert(OpTable<Factory>::complete(kTable), "...");
// so an op added to the op table without a row in every backend's table fails the build.
#include <cstddef>

#include "backends/backend.h"

namespace vitrt {

template <typename Factory>
struct OpTable {
  struct Row {
    OpType type;
    OpImpl impl;
    Factory factory;  // set exactly for OpImpl::kKernel
  };

  static constexpr Row kernel(OpType type, Factory factory) { return {type, OpImpl::kKernel, factory}; }
  static constexpr Row reference(OpType type) { return {type, OpImpl::kReference, nullptr}; }
  static constexpr Row not_implemented(OpType type) { return {type, OpImpl::kNotImplemented, nullptr}; }

  // One row per op, in the op table's order; a factory exactly where the row says kKernel.
  template <size_t N>
  static constexpr bool complete(const Row (&rows)[N]) {
    if (N != static_cast<size_t>(kNumOpTypes)) return false;
    for (size_t i = 0; i < N; ++i) {
      if (static_cast<size_t>(rows[i].type) != i) return false;
#ifndef VITRT_SANITIZE_UNDEFINED
      // GCC's -fsanitize=null makes a function address's comparison with nullptr non-constant, so the
      // sanitized build (tools/test.sh --sanitize) skips this clause; the Release build checks it.
      if ((rows[i].impl == OpImpl::kKernel) != (rows[i].factory != nullptr)) return false;
#endif
    }
    return true;
  }

  // Whether any row says `impl`.
  template <size_t N>
  static constexpr bool any(const Row (&rows)[N], OpImpl impl) {
    for (size_t i = 0; i < N; ++i)
      if (rows[i].impl == impl) return true;
    return false;
  }

  // The row of `type`; nullptr for a value outside the op table.
  template <size_t N>
  static constexpr const Row* find(const Row (&rows)[N], OpType type) {
    const int32_t i = static_cast<int32_t>(type);
    return op_type_valid(i) && static_cast<size_t>(i) < N ? &rows[i] : nullptr;
  }
};

}  // namespace vitrt
