// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// ONNX model -> IR graph (docs/onnx.md): initializers and external data, the one graph input with its batch
// dynamic and every other dimension resolved, shape machinery folded, exporter patterns normalised
// (patterns.h), every other node lowered onto the IR's ops (lower_ops.h). The result is the graph the .pth
// route builds for the same network, so the planner's fusions find the same forms.
#include <onnx/onnx_pb.h>

#include <map>
#include <string>

#include "arch/arch.h"
#include "ir/graph.h"

namespace vitrt::convert {

struct OnnxImportOptions {
  // The side of a square image input whose height/width are symbolic (dim_param) in the model; 0: refuse
  // such dims.
  int image_size = 0;
  // Keep the input's first dimension as written instead of making it the dynamic batch (the conformance
  // runner, whose single-op cases have no batch axis).
  bool static_input = false;
  // Graph inputs bound to these values as constants (the conformance runner binds every input but the
  // first to the case's data).
  std::map<std::string, const onnx::TensorProto*> constant_inputs;
  // Directory for external data ("" refuses external data).
  std::string model_dir;
  // The one graph output to import, by name ("": every output). Only the nodes it depends on are imported,
  // so another output computed by an op vitrt lacks does not stand in the way.
  std::string output;
};

// The import itself. `log` receives notes (opset, producer, resolved dims).
Status import_onnx(const onnx::ModelProto& model, const OnnxImportOptions& options, Graph* out,
                   std::string* log);

// The same for a model the caller gives up: each initializer's data is freed from `model` as soon as it is
// converted, so the weights are held once, not as protobuf bytes and float32 values side by side
// (docs/onnx.md, Cost of an import). `model` keeps everything else (nodes, names, shapes).
Status import_onnx_releasing(onnx::ModelProto* model, const OnnxImportOptions& options, Graph* out,
                             std::string* log);

// vitrt-convert's ONNX route: reads `path` (onnx_file.h limits), imports it with --image-size, and fills the
// metadata (preprocessing from the input's size and the options, labels class_i) as convert_checkpoint does.
Status convert_onnx_file(const std::string& path, const ConvertOptions& opt, Graph* out, std::string* log);

}  // namespace vitrt::convert
