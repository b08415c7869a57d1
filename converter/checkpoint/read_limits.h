// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Limits of the checkpoint readers on hostile files (also listed in vitrt-convert --help). Every size in a
// checkpoint is untrusted: what the readers allocate must be justified by the bytes the file really has.
#include <cstdint>
#include <string>

#include "common/status.h"

namespace vitrt::convert {

// Tensor data: the bytes inflated or read for storages plus the float32 values they expand to may total at
// most kExpansionPerFileByte times the checkpoint's file size plus kExpansionSlackBytes. Honest checkpoints
// use about 3x (a float16 file: the raw bytes and twice as many float32 bytes); stride-0 views, tensors
// aliasing one storage and highly compressed zip entries are what go beyond it.
constexpr uint64_t kExpansionPerFileByte = 16;
constexpr uint64_t kExpansionSlackBytes = uint64_t{64} << 20;

// torch.save zip entries: stored (its size must equal its compressed size) or deflated, which can expand at
// most ~1032:1; anything claiming more is refused before it is inflated.
constexpr uint64_t kMaxDeflateRatio = 1032;
// data.pkl: its size, and the memory the unpickled objects may take. torch.save writes ~100 bytes and some
// 5 KB of objects per tensor: room for ~50k tensors, ten times a large vision checkpoint with optimizer state.
constexpr uint64_t kMaxPickleBytes = uint64_t{64} << 20;
constexpr uint64_t kMaxPickleObjectBytes = uint64_t{256} << 20;
// Nested reduce calls in data.pkl (torch writes _rebuild_from_type_v2(_rebuild_tensor_v2, ...): 2 levels).
constexpr int kMaxPickleCallDepth = 8;

// safetensors: the JSON header may be at most this long (and never longer than the file) and nest at most
// 3 levels ({"name": {"shape": [..]}}).
constexpr uint64_t kMaxSafetensorsHeaderBytes = uint64_t{16} << 20;
constexpr int kMaxSafetensorsHeaderDepth = 3;

// Counts the tensor data a reader allocates against the limit its file size allows.
class ExpansionBudget {
 public:
  explicit ExpansionBudget(uint64_t file_size)
      : limit_(file_size > (UINT64_MAX - kExpansionSlackBytes) / kExpansionPerFileByte
                   ? UINT64_MAX
                   : file_size * kExpansionPerFileByte + kExpansionSlackBytes),
        file_size_(file_size) {}

  // Takes `bytes` for `what` (e.g. "the float32 values of tensor 'x'"), or says why not, before allocating.
  Status charge(uint64_t bytes, const std::string& what) {
    if (bytes > limit_ - used_)
      return bad_input(
          what + " would take " + std::to_string(bytes) + " bytes, which with the " + std::to_string(used_) +
          " already read exceeds the " + std::to_string(limit_) + "-byte limit for a " +
          std::to_string(file_size_) + "-byte checkpoint (" + std::to_string(kExpansionPerFileByte) +
          "x its size + " + std::to_string(kExpansionSlackBytes >> 20) +
          " MiB): a stride-0 view, aliased storage or zip bomb expands beyond what the file holds");
    used_ += bytes;
    return Status::Ok();
  }

  uint64_t limit() const { return limit_; }

 private:
  uint64_t limit_;
  uint64_t file_size_;
  uint64_t used_ = 0;
};

// The size of the regular file at `path`; refuses anything else (a FIFO, device or directory would block,
// read without end or mislead), naming what it is.
Status regular_file_size(const std::string& path, uint64_t* size);

}  // namespace vitrt::convert
