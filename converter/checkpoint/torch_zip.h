// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// torch.save zip archives (torch >= 1.6): <prefix>/data.pkl, <prefix>/data/<key>, <prefix>/byteorder.
#include <string>

#include "checkpoint/checkpoint.h"

namespace vitrt::convert {

Status load_torch_zip(const std::string& path, Checkpoint* out);

}  // namespace vitrt::convert
