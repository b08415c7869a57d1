// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Architectures the converter knows, their detection from checkpoint keys, and the conversion entry point.
#include <string>
#include <vector>

#include "arch/graph_builder.h"

namespace vitrt::convert {

struct ConvertOptions {
  std::string arch = "auto";          // auto | deit | pvt_v2 | soft | soft_norm | lavit
  std::string labels_path;            // one label per line
  int image_size = 0;                 // 0: the size the checkpoint was built for
  std::string heads;                  // comma list overriding the head count per stage
  std::string emit = "fused";         // fused | primitive
  std::string attn = "auto";          // ViT/DeiT: the attention at blocks.{i}.attn (arch/vit_attention.h)
  int64_t landmarks = 0;              // Nyströmformer's m where the checkpoint args do not say; 0: not given
  std::string nystrom_init = "auto";  // auto (the official "original", global) | global | per_head
  std::string pool = "auto";          // ViT/DeiT head: auto (the class token, else the mean) | token | mean
  std::string onnx_output;            // ONNX: the graph output the model computes ("": the first)
  // Preprocessing overrides; 0 / empty keeps the default (checkpoint args, else the family's eval pipeline).
  int resize = 0;
  int crop = 0;
  std::string interpolation;
  std::vector<float> mean, std;
};

// What an architecture builder returns besides the graph.
struct ArchInfo {
  std::string arch;         // canonical name written to the model
  std::string description;  // e.g. "DeiT: embed 192, depth 12, 3 heads, 1000 classes, 224x224"
  int image_size = 224;     // input side the graph is built for
  Preprocess preprocess;    // the family's default eval pipeline (docs/models.md §2)
};

using ArchBuildFn = Status (*)(GraphBuilder& b, const Checkpoint& ckpt, const ConvertOptions& opt,
                               ArchInfo* info);

Status build_deit(GraphBuilder& b, const Checkpoint& ckpt, const ConvertOptions& opt, ArchInfo* info);
Status build_pvt_v2(GraphBuilder& b, const Checkpoint& ckpt, const ConvertOptions& opt, ArchInfo* info);
Status build_soft(GraphBuilder& b, const Checkpoint& ckpt, const ConvertOptions& opt, ArchInfo* info);
Status build_soft_norm(GraphBuilder& b, const Checkpoint& ckpt, const ConvertOptions& opt, ArchInfo* info);
Status build_lavit(GraphBuilder& b, const Checkpoint& ckpt, const ConvertOptions& opt, ArchInfo* info);

// Detects the architecture from the keys; `why` says which keys decided it.
Status detect_arch(const Checkpoint& ckpt, std::string* arch, std::string* why);

// The list of --arch values, for help texts.
std::string known_archs();

// Checkpoint -> IR graph with metadata (labels, preprocessing). `log` receives human-readable notes. Refuses
// options outside check_options(), and a labels file that read_labels_file() refuses or whose line count is
// not the model's class count.
Status convert_checkpoint(const Checkpoint& ckpt, const ConvertOptions& opt, Graph* out, std::string* log);

// Limits on the options (also in vitrt-convert --help): image size, resize and crop are 0 (the default) or
// 1..kMaxImageSide; mean values finite; std values finite and positive. invalid_argument naming the flag.
constexpr int kMaxImageSide = 65536;
Status check_options(const ConvertOptions& opt);

// Applies the preprocessing flags (--crop, --resize, --interp, --mean, --std) on top of a model's default
// pipeline, expanding one-value mean/std to every channel, and refuses a non-finite normalisation or a crop
// that is not the model's input side. Shared by the checkpoint and ONNX routes.
Status apply_preprocess_flags(const ConvertOptions& opt, int64_t image_size, Preprocess* pp);

// Labels files: a regular file of at most kMaxLabelsFileBytes, one label per line of at most kMaxLabelBytes
// ('\r\n' endings accepted, trailing empty lines dropped). io_error when it cannot be read, bad_input
// (naming the file and what is wrong) otherwise.
constexpr uint64_t kMaxLabelsFileBytes = uint64_t{16} << 20;
constexpr size_t kMaxLabelBytes = 4096;
Status read_labels_file(const std::string& path, std::vector<std::string>* labels);

// Stores `labels` (read from `source`, named in messages) as the model's class names; bad_input naming
// `source` and both counts unless there is exactly one per class.
Status apply_labels(std::vector<std::string> labels, const std::string& source, Graph* g);

}  // namespace vitrt::convert
