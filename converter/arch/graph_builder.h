// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Builds an IR graph from checkpoint weights. Architecture builders ask for weights by key with the shape the
// architecture expects; the builder records every missing, misshapen and unused key, so the converter reports
// all problems of a checkpoint at once instead of the first.
#include <set>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "ir/graph.h"

namespace vitrt::convert {

// The most values the converter computes for one constant of its own (1 GiB of float32).
constexpr int64_t kMaxGeneratedElements = int64_t{1} << 28;

class GraphBuilder {
 public:
  explicit GraphBuilder(const Checkpoint& ckpt) : ckpt_(ckpt) {}

  bool has(const std::string& key) const { return ckpt_.tensors.count(key) != 0; }
  // The checkpoint's keys that start with `prefix`, in order, at most `limit` of them (for error messages).
  std::vector<std::string> keys_under(const std::string& prefix, size_t limit) const;
  // Shape of a checkpoint tensor (empty when absent).
  std::vector<int64_t> shape_of(const std::string& key) const;

  int32_t input(const std::string& name, const Shape& shape_at_batch1);
  // A weight taken from the checkpoint; `expected` is the shape the architecture needs ({} = accept any).
  // `view` optionally reinterprets it (same element count), e.g. [1,1,C] -> [C].
  int32_t weight(const std::string& key, const std::vector<int64_t>& expected = {});
  int32_t constant(const std::string& name, const Shape& shape, std::vector<float> values);
  // Whether the converter may compute a constant of rows x cols values (a resized position table, an identity
  // matrix) for `name`: at most kMaxGeneratedElements, else an error is recorded. Such sizes follow from the
  // input size, which a checkpoint's args may set.
  bool can_generate(const std::string& name, int64_t rows, int64_t cols);
  // Keys that are legitimately ignored (e.g. BatchNorm num_batches_tracked); their dtype and values are not
  // looked at.
  void ignore(const std::string& key) { used_.insert(key); }
  // The values of checkpoint tensor `key` (which must exist) for an architecture that computes with them as a
  // float weight outside weight() (e.g. BatchNorm folding). Like weight(), records an error, so the graph is
  // never finished, when the tensor is not floating-point (an int64 or bool tensor would otherwise be cast
  // silently) or holds a NaN or infinity.
  const std::vector<float>& float_values(const std::string& key);

  // Adds a node with one output; returns the output tensor. Shapes are inferred at batch 1 as nodes are
  // added.
  int32_t op(OpType type, OpAttrs attrs, std::vector<int32_t> inputs, const std::string& name);
  // Adds a node with one output per name in `output_names` (the first is usually the node's name, e.g. a
  // LaViT attention's output and its exported scores); returns the output tensors.
  std::vector<int32_t> op_outputs(OpType type, OpAttrs attrs, std::vector<int32_t> inputs,
                                  const std::string& name, const std::vector<std::string>& output_names);
  const Shape& shape(int32_t tensor) const { return shapes_[tensor]; }
  // --emit primitive: attention ops are written as the plain ops PyTorch runs (arch/primitive_emit.h).
  void set_emit_primitive(bool on) { emit_primitive_ = on; }

  void mark_output(int32_t tensor) { graph_.outputs.push_back(tensor); }
  void fail(const std::string& message) { errors_.push_back(message); }

  // Checks that every key was used and present with the right shape; moves the graph out.
  Status finish(Graph* out);

 private:
  const Checkpoint& ckpt_;
  Graph graph_;
  std::vector<Shape> shapes_;  // at batch 1
  std::set<std::string> used_;
  std::set<std::string> checked_;  // tensors whose dtype and values float_values() has checked
  std::vector<std::string> missing_, errors_;
  bool emit_primitive_ = false;
  bool in_primitive_ = false;  // emitting a primitive form: its own ops are never expanded again
};

// Small helpers shared by the architectures.
Status parse_heads_override(const std::string& text, std::vector<int>* heads);

}  // namespace vitrt::convert
