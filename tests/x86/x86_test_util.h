// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// OpRunner (tests/ops/op_test_util.h) planned and run with a given thread count.
#include "ops/op_cases.h"

namespace vitrt {
namespace test {

class ThreadedOpRunner : public OpRunner {
 public:
  Status plan(Backend& backend, OpType type, const OpAttrs& attrs,
              const std::vector<const HostTensor*>& inputs, const std::vector<bool>& constant, int threads,
              const std::string& name = "test_op") {
    set_threads(threads);
    return OpRunner::plan(backend, type, attrs, inputs, constant, name);
  }
};

}  // namespace test
}  // namespace vitrt
