// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The fixed pass pipeline a session runs on its copy of the model's graph before planning memory.
#include <string>
#include <vector>

#include "planner/pass.h"

namespace vitrt {

struct PassReport {
  std::string name;
  bool ran = false;       // false when disabled
  bool modified = false;
  size_t ops_after = 0;
};

// The pipeline's pass names, in order.
std::vector<std::string> pass_names();

// opt_level 0 runs nothing; 1 and above run every pass not named in `disabled` (comma-separated names, merged with
// the VITRT_DISABLE_PASSES environment variable). Unknown names in `disabled` are an invalid_argument error.
Status run_passes(Graph& graph, const PassContext& ctx, int opt_level, const std::string& disabled,
                  std::vector<PassReport>* report);

}  // namespace vitrt
