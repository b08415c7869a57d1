// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The LRN op in a model file (LrnOptions, formats/op_options.cpp): a written file loads back to the same
// attributes, and a file edited to hold a size below 1 or a non-finite parameter is refused at load, naming
// the op.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>

#include "model_bytes.h"
#include "model_writer.h"
#include "test_graphs.h"

using namespace vitrt;

namespace {

// tiny_classifier with an LRN (size 3, alpha 2e-4, beta 0.5, bias 2: none of them the schema's default, so
// each is stored and can be edited in place) between its patch embedding [B,8,h,w] and the flatten.
std::vector<uint8_t> written() {
  Graph g = test::tiny_classifier();
  const int32_t pe = g.nodes[0].outputs[0];
  const int32_t lrn = g.add_activation("lrn", Shape());
  g.add_node(OpType::kLrn, LrnAttrs{3, 2e-4f, 0.5f, 2.0f}, {pe}, {lrn}, "lrn");
  std::rotate(g.nodes.begin() + 1, g.nodes.end() - 1, g.nodes.end());  // run right after the patch conv
  REQUIRE(g.nodes[2].name == "flatten");
  g.nodes[2].inputs[0] = lrn;
  REQUIRE(resolve_activation_shapes(&g).ok());
  std::vector<uint8_t> bytes;
  const Status st = write_model_memory(g, &bytes);
  REQUIRE_MESSAGE(st.ok(), st.message());
  return bytes;
}

fb::LrnOptions* lrn_options(fb::Model* m) {
  auto* ops = m->mutable_graph()->mutable_operators();
  for (flatbuffers::uoffset_t i = 0; i < ops->size(); ++i) {
    fb::Operator* op = ops->GetMutableObject(i);
    if (op->name() && op->name()->str() == "lrn") return static_cast<fb::LrnOptions*>(op->mutable_options());
  }
  FAIL("no operator lrn");
  return nullptr;
}

}  // namespace

TEST_CASE("LRN: a model file keeps its attributes; a size below 1 or a non-finite one is refused at load") {
  std::shared_ptr<const Model> model;
  Status st = test::load_model_bytes(written(), &model);
  REQUIRE_MESSAGE(st.ok(), st.message());
  const Node& n = model->graph.nodes[1];
  REQUIRE(n.type == OpType::kLrn);
  const LrnAttrs& a = std::get<LrnAttrs>(n.attrs);
  CHECK(a.size == 3);
  CHECK(a.alpha == 2e-4f);
  CHECK(a.beta == 0.5f);
  CHECK(a.bias == 2.0f);
  struct Edit {
    const char* what;
    std::function<void(fb::Model*)> edit;
    const char* needle;
  };
  const Edit edits[] = {
      {"size 0", [](fb::Model* m) { lrn_options(m)->mutate_size(0); }, "LRN: size 0, expected 1 or more"},
      {"negative size", [](fb::Model* m) { lrn_options(m)->mutate_size(-5); }, "LRN: size -5"},
      {"NaN alpha", [](fb::Model* m) { lrn_options(m)->mutate_alpha(NAN); },
       "alpha, beta and bias must be finite"},
      {"infinite beta", [](fb::Model* m) { lrn_options(m)->mutate_beta(INFINITY); }, "must be finite"},
      {"infinite bias", [](fb::Model* m) { lrn_options(m)->mutate_bias(-INFINITY); }, "must be finite"},
  };
  for (const Edit& e : edits) {
    CAPTURE(e.what);
    st = test::load_model_bytes(test::edited_model_bytes(written(), e.edit));
    CHECK(st.code() == StatusCode::kBadModel);
    CHECK_MESSAGE(st.message().find(e.needle) != std::string::npos, st.message());
  }
}
