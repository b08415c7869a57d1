// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Checkpoint readers for vitrt-convert: torch.save zip archives (read with a restricted unpickler that never
// executes code) and .safetensors files. No Python at run time.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/dtype.h"
#include "common/status.h"

namespace vitrt::convert {

struct CheckpointTensor {
  std::string name;
  // dtype in the file; those without a DType map to the nearest: float64 -> kFloat32, bool -> kUInt8,
  // int16 -> kInt32. source_type has the exact name (float32, float16, bfloat16, float64, int64, bool, ...).
  vitrt::DType source_dtype = vitrt::DType::kFloat32;
  std::string source_type;
  std::vector<int64_t> shape;  // empty for a 0-d tensor
  std::vector<float> values;   // float32, contiguous row-major (storage offset and strides applied)
};

struct Checkpoint {
  std::map<std::string, CheckpointTensor> tensors;  // the selected state_dict, 'module.' prefixes stripped
  std::string container;  // "state_dict_ema", "state_dict", "model", "raw" or "safetensors"
  std::string arch_hint;  // checkpoint['arch'] if a string, else args.model if present, else ""
  std::map<std::string, std::string> args;  // scalar/list fields of 'args' (argparse.Namespace or dict), or
                                            // the safetensors __metadata__, as text (lists as "a,b,c")
  std::vector<std::string> skipped;         // top-level entries (and non-tensor state_dict entries) ignored
};

// Reads a checkpoint, recognised by its content: a torch.save zip archive (torch >= 1.6) or a .safetensors
// file. Legacy (pre-1.6) torch.save files and anything else give a Status saying what the file looks like.
Status load_checkpoint(const std::string& path, Checkpoint* out);

}  // namespace vitrt::convert
