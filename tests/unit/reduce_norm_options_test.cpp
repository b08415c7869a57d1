// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The Reduce, LogSoftmax and InstanceNorm ops in a model file (ReduceOptions, SoftmaxOptions,
// InstanceNormOptions; formats/op_options.cpp): a written file loads back to the same attributes, and a file
// edited to hold an unknown reduction, an axis out of range or a bad epsilon is refused at load, naming the
// operator.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "model_bytes.h"
#include "model_writer.h"
#include "test_graphs.h"

using namespace vitrt;

namespace {

// tiny_classifier's logits [B,5] -> LogSoftmax -> Reshape [B,1,5] -> InstanceNorm -> Reduce(LogSumExp over
// axis 1, keepdims) [B,1,5] -> Reduce(L2 over axis -2) [B,5].
Graph classifier_with_reductions() {
  Graph g = test::tiny_classifier();
  const int32_t logits = g.outputs[0];
  auto act = [&](const char* name) { return g.add_activation(name, Shape()); };
  const int32_t lsm = act("lsm"), r = act("r"), in = act("inorm"), lse = act("lse"), l2 = act("l2");
  g.add_node(OpType::kLogSoftmax, SoftmaxAttrs{-1}, {logits}, {lsm}, "lsm");
  g.add_node(OpType::kReshape, ReshapeAttrs{{0, 1, 5}}, {lsm}, {r}, "r");
  g.add_node(OpType::kInstanceNorm, InstanceNormAttrs{1e-3f},
             {r, g.add_constant("in.scale", Shape{1}, {1.5f}), g.add_constant("in.bias", Shape{1}, {0.25f})},
             {in}, "inorm");
  g.add_node(OpType::kReduce, ReduceAttrs{ReduceKind::kLogSumExp, {1}, true}, {in}, {lse}, "lse");
  g.add_node(OpType::kReduce, ReduceAttrs{ReduceKind::kL2, {-2}, false}, {lse}, {l2}, "l2");
  g.outputs = {l2};
  REQUIRE(resolve_activation_shapes(&g).ok());
  return g;
}

std::vector<uint8_t> written() {
  std::vector<uint8_t> bytes;
  const Status st = write_model_memory(classifier_with_reductions(), &bytes);
  REQUIRE_MESSAGE(st.ok(), st.message());
  return bytes;
}

fb::Operator* op_named(fb::Model* m, const std::string& name) {
  auto* ops = m->mutable_graph()->mutable_operators();
  for (flatbuffers::uoffset_t i = 0; i < ops->size(); ++i) {
    fb::Operator* op = ops->GetMutableObject(i);
    if (op->name() && op->name()->str() == name) return op;
  }
  FAIL("no operator ", name);
  return nullptr;
}

fb::ReduceOptions* reduce_options(fb::Model* m, const std::string& name) {
  fb::Operator* op = op_named(m, name);
  REQUIRE(op->options_type() == fb::OpOptions::ReduceOptions);
  return static_cast<fb::ReduceOptions*>(op->mutable_options());
}

}  // namespace

TEST_CASE("Reduce, LogSoftmax, InstanceNorm: a model file keeps their ops and attributes") {
  std::shared_ptr<const Model> model;
  const Status st = test::load_model_bytes(written(), &model);
  REQUIRE_MESSAGE(st.ok(), st.message());
  const std::vector<Node>& nodes = model->graph.nodes;
  REQUIRE(nodes.size() >= 5);
  const Node* tail = &nodes[nodes.size() - 5];
  CHECK(tail[0].type == OpType::kLogSoftmax);
  CHECK(std::get<SoftmaxAttrs>(tail[0].attrs).axis == -1);
  CHECK(tail[2].type == OpType::kInstanceNorm);
  CHECK(std::get<InstanceNormAttrs>(tail[2].attrs).eps == 1e-3f);
  CHECK(tail[3].type == OpType::kReduce);
  const ReduceAttrs& lse = std::get<ReduceAttrs>(tail[3].attrs);
  CHECK(lse.kind == ReduceKind::kLogSumExp);
  CHECK(lse.axes == std::vector<int32_t>{1});
  CHECK(lse.keepdims);
  CHECK(tail[4].type == OpType::kReduce);
  const ReduceAttrs& l2 = std::get<ReduceAttrs>(tail[4].attrs);
  CHECK(l2.kind == ReduceKind::kL2);
  CHECK(l2.axes == std::vector<int32_t>{-2});
  CHECK_FALSE(l2.keepdims);
}

TEST_CASE("Reduce and InstanceNorm options that no writer makes are refused at load, naming the operator") {
  struct Edit {
    const char* what;
    std::function<void(fb::Model*)> edit;
    const char* needle;
    const char* op;
  };
  REQUIRE(test::load_model_bytes(written()).ok());  // each edit below is what breaks it
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Edit edits[] = {
      {"unknown reduction",
       [](fb::Model* m) { reduce_options(m, "l2")->mutate_kind(static_cast<fb::ReduceKind>(7)); },
       "invalid value of option 'kind'", "l2"},
      {"negative reduction",
       [](fb::Model* m) { reduce_options(m, "lse")->mutate_kind(static_cast<fb::ReduceKind>(-1)); },
       "invalid value of option 'kind'", "lse"},
      {"axis out of range", [](fb::Model* m) { reduce_options(m, "l2")->mutable_axes()->Mutate(0, 3); },
       "Reduce: bad axis 3", "l2"},
      {"NaN epsilon",
       [&](fb::Model* m) {
         static_cast<fb::InstanceNormOptions*>(op_named(m, "inorm")->mutable_options())->mutate_eps(nan);
       },
       "InstanceNorm epsilon must be finite and >= 0", "inorm"},
      {"negative epsilon",
       [](fb::Model* m) {
         static_cast<fb::InstanceNormOptions*>(op_named(m, "inorm")->mutable_options())->mutate_eps(-1.0f);
       },
       "InstanceNorm epsilon must be finite and >= 0", "inorm"},
      {"LogSoftmax axis out of range",
       [](fb::Model* m) {
         static_cast<fb::SoftmaxOptions*>(op_named(m, "lsm")->mutable_options())->mutate_axis(2);
       },
       "LogSoftmax: axis out of range", "lsm"},
  };
  for (const Edit& e : edits) {
    CAPTURE(e.what);
    const Status st = test::load_model_bytes(test::edited_model_bytes(written(), e.edit));
    CHECK(st.code() == StatusCode::kBadModel);
    CHECK_MESSAGE(st.message().find(e.needle) != std::string::npos, st.message());
    CHECK_MESSAGE(st.message().find(std::string("'") + e.op + "'") != std::string::npos, st.message());
  }
}
