// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// ConvTranspose's and ArgMax's options in a model file (ConvTransposeOptions, ArgMaxOptions,
// formats/op_options.cpp; op codes 41 and 42): a written file loads back to the same attributes, and a file
// edited to hold an unknown kind or attributes that do not fit the shapes is refused at load, naming the op.
#include <doctest/doctest.h>

#include <functional>
#include <string>

#include "model_bytes.h"
#include "model_writer.h"
#include "test_graphs.h"

using namespace vitrt;

namespace {

ConvTransposeAttrs up_attrs() {
  ConvTransposeAttrs a;
  a.stride_h = 2;
  a.stride_w = 3;
  a.pad_top = 1;
  a.pad_left = 0;
  a.pad_bottom = 2;
  a.pad_right = 1;
  a.dilation_h = 1;
  a.dilation_w = 2;
  a.output_padding_h = 1;
  a.output_padding_w = 2;
  a.groups = 3;
  return a;
}

// image [B,3,5,6] -> ConvTranspose (up_attrs, weight [3,2,3,2]) [B,6,9,19] -> ArgMin over the last axis,
// last index, keepdims [B,6,9,1].
Graph upsample_arg_graph() {
  Graph g;
  const int32_t x = g.add_activation("image", Shape{kDynamicDim, 3, 5, 6});
  g.inputs = {x};
  const int32_t w = g.add_constant("up.w", Shape{3, 2, 3, 2}, test::pseudo_random(36, 3, 0.5f));
  const int32_t up = g.add_activation("up", Shape());
  g.add_node(OpType::kConvTranspose, up_attrs(), {x, w, kAbsent}, {up}, "up");
  const int32_t idx = g.add_activation("idx", Shape());
  g.add_node(OpType::kArgMax, ArgMaxAttrs{ArgKind::kMin, -1, true, true}, {up}, {idx}, "arg");
  g.outputs = {idx};
  g.metadata.producer = "conv_transpose_arg_max_options_test";
  g.metadata.arch = "tiny";
  g.metadata.preprocess.resize_shorter = 6;
  g.metadata.preprocess.crop_h = 5;
  g.metadata.preprocess.crop_w = 6;
  REQUIRE(resolve_activation_shapes(&g).ok());
  return g;
}

std::vector<uint8_t> written() {
  std::vector<uint8_t> bytes;
  const Status st = write_model_memory(upsample_arg_graph(), &bytes);
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

}  // namespace

TEST_CASE("ConvTranspose and ArgMax: a model file keeps their ops and attributes") {
  const Graph g = upsample_arg_graph();
  CHECK(g.tensors[g.nodes[0].outputs[0]].shape == Shape({kDynamicDim, 6, 9, 19}));
  CHECK(g.tensors[g.outputs[0]].shape == Shape({kDynamicDim, 6, 9, 1}));
  std::shared_ptr<const Model> model;
  const Status st = test::load_model_bytes(written(), &model);
  REQUIRE_MESSAGE(st.ok(), st.message());
  const std::vector<Node>& nodes = model->graph.nodes;
  REQUIRE(nodes.size() == 2);
  REQUIRE(nodes[0].type == OpType::kConvTranspose);
  const auto& a = std::get<ConvTransposeAttrs>(nodes[0].attrs);
  const ConvTransposeAttrs want = up_attrs();
  CHECK(a.stride_h == want.stride_h);
  CHECK(a.stride_w == want.stride_w);
  CHECK(a.pad_top == want.pad_top);
  CHECK(a.pad_left == want.pad_left);
  CHECK(a.pad_bottom == want.pad_bottom);
  CHECK(a.pad_right == want.pad_right);
  CHECK(a.dilation_h == want.dilation_h);
  CHECK(a.dilation_w == want.dilation_w);
  CHECK(a.output_padding_h == want.output_padding_h);
  CHECK(a.output_padding_w == want.output_padding_w);
  CHECK(a.groups == want.groups);
  REQUIRE(nodes[1].type == OpType::kArgMax);
  const auto& m = std::get<ArgMaxAttrs>(nodes[1].attrs);
  CHECK(m.kind == ArgKind::kMin);
  CHECK(m.axis == -1);
  CHECK(m.keepdims);
  CHECK(m.select_last_index);
}

TEST_CASE("ConvTranspose and ArgMax options that do not fit are refused at load, naming the op") {
  struct Edit {
    const char* what;
    std::function<void(fb::Model*)> edit;
    const char* needle;
  };
  auto ct = [](fb::Model* m) {
    return static_cast<fb::ConvTransposeOptions*>(op_named(m, "up")->mutable_options());
  };
  auto am = [](fb::Model* m) {
    return static_cast<fb::ArgMaxOptions*>(op_named(m, "arg")->mutable_options());
  };
  const Edit edits[] = {
      {"unknown ArgMax kind", [&](fb::Model* m) { am(m)->mutate_kind(static_cast<fb::ArgKind>(2)); },
       "invalid value of option 'kind'"},
      {"ArgMax axis out of range", [&](fb::Model* m) { am(m)->mutate_axis(4); }, "axis 4 is out of range"},
      {"groups not dividing the channels", [&](fb::Model* m) { ct(m)->mutate_groups(2); },
       "do not agree for groups=2"},
      {"negative pad", [&](fb::Model* m) { ct(m)->mutate_pad_left(-1); },
       "padding and output_padding non-negative"},
      {"zero stride", [&](fb::Model* m) { ct(m)->mutate_stride_h(0); },
       "stride and dilation must be positive"},
      {"pads cropping everything", [&](fb::Model* m) { ct(m)->mutate_pad_top(20); }, "gives no output"},
      {"a stride making the output too large", [&](fb::Model* m) { ct(m)->mutate_stride_w(0x7fffffff); },
       "the per-tensor limit"},
  };
  for (const Edit& e : edits) {
    CAPTURE(e.what);
    const Status st = test::load_model_bytes(test::edited_model_bytes(written(), e.edit));
    CHECK(st.code() == StatusCode::kBadModel);
    CHECK_MESSAGE(st.message().find(e.needle) != std::string::npos, st.message());
    const bool names_op = st.message().find("'up'") != std::string::npos ||
                          st.message().find("'arg'") != std::string::npos ||
                          st.message().find("ArgMax") != std::string::npos;
    CHECK_MESSAGE(names_op, st.message());
  }
}
