// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "top_k.h"

#include <algorithm>
#include <cmath>

namespace vitrt::cli {

std::vector<ClassScore> softmax_top_k(const float* logits, int classes, int k) {
  std::vector<ClassScore> top;
  if (classes <= 0 || k <= 0) return top;
  float mx = logits[0];
  for (int c = 1; c < classes; ++c) mx = std::max(mx, logits[c]);
  double sum = 0;
  for (int c = 0; c < classes; ++c) sum += std::exp(static_cast<double>(logits[c]) - mx);
  std::vector<int> idx(classes);
  for (int c = 0; c < classes; ++c) idx[c] = c;
  k = std::min(k, classes);
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(),
                    [&](int a, int b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); });
  for (int i = 0; i < k; ++i)
    top.push_back({idx[i], static_cast<float>(std::exp(static_cast<double>(logits[idx[i]]) - mx) / sum),
                   logits[idx[i]]});
  return top;
}

}  // namespace vitrt::cli
