// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Position-embedding resizing at conversion time, as SOFT/PVT do it at run time for inputs other than 224:
// F.interpolate(mode='bilinear', align_corners=False), no antialias (docs/models.md §1):
//   src = (dst + 0.5) · in/out − 0.5, negative src clamped to 0, i0 = ⌊src⌋, i1 = min(i0 + 1, in − 1),
//   y = (1−λy)((1−λx)·x[i0][j0] + λx·x[i0][j1]) + λy((1−λx)·x[i1][j0] + λx·x[i1][j1])
// computed in double. Equal sizes are an exact copy (PyTorch's fast path).
#include <cstdint>
#include <vector>

namespace vitrt::convert {

// src [channels, in_h, in_w] -> [channels, out_h, out_w].
std::vector<float> resize_bilinear(const std::vector<float>& src, int64_t channels, int64_t in_h,
                                   int64_t in_w, int64_t out_h, int64_t out_w);

// A token-major table [in_h·in_w, c] (a [1,N,C] pos_embed, read as 'b (h w) c -> b c h w'), resized to
// [out_h·out_w, c].
std::vector<float> resize_pos_embed(const std::vector<float>& tokens, int64_t c, int64_t in_h, int64_t in_w,
                                    int64_t out_h, int64_t out_w);

}  // namespace vitrt::convert
