// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The session's in-place rule with views: a Reshape shares its input's bytes even when the input has other
// readers, and an elementwise op may then write over that shared block only if no other reader of the block
// runs after it. Checked by the aliases the session picks and by outputs equal to a session without any
// in-place placement, with activations poisoned, on every CPU backend and batch.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "arch/graph_builder.h"
#include "graph_session_util.h"

using namespace vitrt;
using namespace vitrt::convert;
using namespace vitrt::test;

namespace {

// t = gelu(image); v = view of t; g = gelu(v); u = relu(t); out = g + view of u. With `late_reader` the relu
// runs after g, so g must not overwrite t's bytes; otherwise it runs before g, and g may.
Graph build(bool late_reader) {
  Checkpoint ck;
  GraphBuilder b(ck);
  const int32_t image = b.input("image", Shape{1, 3, 5, 7});
  const int32_t t = b.op(OpType::kGelu, GeluAttrs{}, {image}, "t");
  const int32_t v = b.op(OpType::kReshape, ReshapeAttrs{{0, -1}}, {t}, "v");
  int32_t g = -1, u = -1;
  if (late_reader) {
    g = b.op(OpType::kGelu, GeluAttrs{}, {v}, "g");
    u = b.op(OpType::kRelu, NoAttrs{}, {t}, "u");
  } else {
    u = b.op(OpType::kRelu, NoAttrs{}, {t}, "u");
    g = b.op(OpType::kGelu, GeluAttrs{}, {v}, "g");
  }
  const int32_t w = b.op(OpType::kReshape, ReshapeAttrs{{0, -1}}, {u}, "w");
  b.mark_output(b.op(OpType::kAdd, NoAttrs{}, {g, w}, "out"));
  return finish_image_graph(b, 5, 7);
}

int32_t output_of(const Session& s, const std::string& node) {
  for (const Node& n : s.graph().nodes)
    if (n.name == node) return n.outputs[0];
  FAIL("no node " << node);
  return -1;
}

}  // namespace

TEST_CASE(
    "session: a view shares a multi-reader input, and in-place writes wait for the block's last reader") {
  for (bool late_reader : {true, false}) {
    CAPTURE(late_reader);
    std::vector<uint8_t> storage;
    const auto model = load(build(late_reader), &storage);
    for (const char* backend : {"ref", "cpu"}) {
      CAPTURE(backend);
      auto s = session(model, backend, 3);
      auto copies = session(model, backend, 3, "", false);
      const int32_t t = output_of(*s, "t"), v = output_of(*s, "v"), g = output_of(*s, "g");
      CHECK(s->inplace_of(v) == t);  // t has two readers, yet the view takes its bytes
      CHECK(s->inplace_of(g) == (late_reader ? -1 : v));
      CHECK(copies->inplace_of(v) == -1);
      check_same_outputs(*s, *copies, 3, 23, 1e-6);
    }
  }
}
