// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The classes `vitrt classify` reports for one image (the Python package's Session.classify reports the
// same).
#include <vector>

namespace vitrt::cli {

struct ClassScore {
  int index = 0;
  float probability = 0;  // softmax over all classes
  float logit = 0;
};

// The k (at most `classes`) highest logits, highest first (ties: lower index first), with their softmax
// probabilities (computed in double after subtracting the largest logit).
std::vector<ClassScore> softmax_top_k(const float* logits, int classes, int k);

}  // namespace vitrt::cli
