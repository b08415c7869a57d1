// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Fuzz target `onnx`: file bytes -> the ONNX reader (protobuf with its limits) -> the importer (folding,
// patterns, lowering), of one graph output where there are several. Whatever it accepts must be a
// structurally valid IR graph with outputs.
#include "fuzz_util.h"
#include "onnx/importer.h"
#include "onnx/onnx_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  onnx::ModelProto model;
  if (!vitrt::fuzz::step_ok("parse_onnx_model",
                            vitrt::convert::parse_onnx_model(data, size, "<fuzz>", &model)))
    return 0;
  vitrt::convert::OnnxImportOptions options;  // no model_dir: external data is refused
  // With several graph outputs, one of them (picked by the input's size) as vitrt-convert --onnx-output does:
  // only the nodes it needs are imported.
  if (model.graph().output_size() > 1)
    options.output = model.graph().output(static_cast<int>(size % model.graph().output_size())).name();
  vitrt::Graph graph;
  std::string log;
  if (!vitrt::fuzz::step_ok("import_onnx", vitrt::convert::import_onnx(model, options, &graph, &log)))
    return 0;
  VITRT_FUZZ_CHECK(graph.validate_structure().ok(), "an imported graph is structurally valid");
  VITRT_FUZZ_CHECK(!graph.outputs.empty() && graph.inputs.size() == 1,
                   "an imported graph has its input and outputs");
  return 0;
}
