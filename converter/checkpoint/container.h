// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Finds the state_dict inside an unpickled torch.save object (timm CheckpointSaver dicts, {'model': sd}, raw
// state_dicts) and reads the training args that come with it.
#include <string>
#include <utility>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "checkpoint/pickle_value.h"

namespace vitrt::convert {

// A tensor entry of the selected state_dict: its (prefix-stripped) name and the unpickled tensor.
using SelectedTensor = std::pair<std::string, const pickle::Value*>;

// Fills out->container, arch_hint, args and skipped, and lists the tensors to read. Refuses (naming
// module.global and the entry) a selected entry built from a global outside the allowlist.
Status select_state_dict(const pickle::Value* root, Checkpoint* out, std::vector<SelectedTensor>* tensors);

// Python-like text for a scalar or a flat list/tuple of scalars ("0.9", "bicubic", "0.485,0.456,0.406");
// false for anything else.
bool render_arg(const pickle::Value* v, std::string* text);

}  // namespace vitrt::convert
