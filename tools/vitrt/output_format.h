// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// How the `vitrt` subcommands print values: JSON strings, byte counts, shapes. No library calls, so the
// labels fuzz target (tests/fuzz/labels_fuzz.cpp) can check json_escape without the rest of the CLI.
#include <cstdint>
#include <string>
#include <vector>

namespace vitrt::cli {

std::string json_escape(const std::string& s);
std::string format_bytes(uint64_t bytes);
// "[B,3,224,224]": the batch dimension (-1) prints as B; a shape of more than 8 dimensions (more than a model
// tensor can have) prints as "[]".
std::string format_shape(const std::vector<int64_t>& dims);
// "0.485,0.456,0.406" (%g each).
std::string format_floats(const std::vector<float>& values);

}  // namespace vitrt::cli
