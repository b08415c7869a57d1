// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The IR: a flat, topologically ordered list of ops over tensors (TFLite SubGraph; ggml nodes[]).
// The loader builds it from a verified file, the converter builds it from a checkpoint, and the writer
// serialises it. Shapes in the IR may hold kDynamicDim (-1) for the batch dimension.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/dtype.h"
#include "common/shape.h"
#include "common/status.h"
#include "ir/op_attrs.h"
#include "ir/op_type.h"

namespace vitrt {

// The most inputs any op takes (Concat's limit; every other op's is at most 8, core/ops/op_list.h). It sizes
// the fixed operand arrays of plans and runs (KernelPlan, KernelArgs, session steps), so it stays small:
// 64 holds every DenseNet block's Concat (torchvision's densenet201 concatenates 49 feature maps).
constexpr int kMaxOpInputs = 64;
constexpr int kMaxOpOutputs = 4;
constexpr int kAbsent = -1;  // an optional input that is not given

// Bytes of a constant tensor. `owner` keeps the storage alive (an mmap'd file or a vector).
struct ConstantData {
  const uint8_t* data = nullptr;
  size_t size = 0;
  std::shared_ptr<const void> owner;
  // The bytes lie in a read-only private map of a model file (MappedFile::open): their pages may be given
  // back to the kernel (MappedFile::drop_pages) and read back from the file if they are touched again.
  bool file_mapped = false;
};

struct Tensor {
  std::string name;
  DType dtype = DType::kFloat32;
  Shape shape;  // dim 0 may be kDynamicDim for activations
  bool is_constant = false;
  ConstantData constant;  // valid when is_constant

  const float* f32() const { return reinterpret_cast<const float*>(constant.data); }
};

struct Node {
  OpType type = OpType::kAdd;
  int32_t version = 1;
  OpAttrs attrs;
  std::vector<int32_t> inputs;   // tensor indices, kAbsent for a missing optional input
  std::vector<int32_t> outputs;  // tensor indices
  std::string name;              // e.g. "blocks.3.attn", for messages and plans
};

enum class Interpolation : int8_t { kBilinear = 0, kBicubic = 1, kNearest = 2 };

// How an image becomes the model's input tensor (docs/models.md §2). Stored in the model file.
struct Preprocess {
  int32_t resize_shorter = 256;  // shorter side after resize
  int32_t crop_h = 224, crop_w = 224;
  Interpolation interpolation = Interpolation::kBicubic;
  std::vector<float> mean = {0.485f, 0.456f, 0.406f};
  std::vector<float> std = {0.229f, 0.224f, 0.225f};
  int32_t channels = 3;  // 3: RGB, 1: grayscale
};

struct ModelMetadata {
  std::string producer;  // the tool that wrote the file
  std::string arch;      // e.g. "deit", "pvt_v2"
  std::vector<std::string> labels;
  Preprocess preprocess;
  std::map<std::string, std::string> extra;  // free-form key/value pairs
};

struct Graph {
  std::vector<Tensor> tensors;
  std::vector<Node> nodes;  // topological order
  std::vector<int32_t> inputs;
  std::vector<int32_t> outputs;
  ModelMetadata metadata;

  int32_t add_tensor(Tensor t) {
    tensors.push_back(std::move(t));
    return static_cast<int32_t>(tensors.size() - 1);
  }
  // A float32 constant that owns a copy of `values`.
  int32_t add_constant(const std::string& name, const Shape& shape, std::vector<float> values);
  int32_t add_activation(const std::string& name, const Shape& shape, DType dtype = DType::kFloat32);
  void add_node(OpType type, OpAttrs attrs, std::vector<int32_t> inputs, std::vector<int32_t> outputs,
                std::string name);

  // Structural checks: indices in range, each activation written once and before it is read, graph inputs
  // not written, outputs produced. Used by the loader and by tests.
  Status validate_structure() const;
};

const char* op_type_name(OpType type);

}  // namespace vitrt
