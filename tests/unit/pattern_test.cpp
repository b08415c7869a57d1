// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The planner's pattern matcher (planner/pattern.h): op types and attribute checks, captures that must agree,
// Add/Mul operands in either order, and the rule that a value inside a match is read only inside it unless
// the pattern exports it (and then only after the root).
#include "planner/pattern.h"

#include <doctest/doctest.h>

using namespace vitrt;

namespace {

// x -> Transpose(perm) -> t ; r = Relu(t) ; out = Add(r, y)   (+ optional extra reader of t, before or after)
Graph chain(std::vector<int32_t> perm, bool extra_reader_of_t, bool reader_before_root = false,
            bool swap = false, bool same_xy = false) {
  Graph g;
  const int32_t x = g.add_activation("x", Shape{kDynamicDim, 2, 3});
  const int32_t y = same_xy ? x : g.add_activation("y", Shape{kDynamicDim, 3, 2});
  g.inputs = {x};
  const int32_t t = g.add_activation("t", Shape());
  g.add_node(OpType::kTranspose, TransposeAttrs{perm}, {x}, {t}, "transpose");
  const int32_t r = g.add_activation("r", Shape());
  g.add_node(OpType::kRelu, NoAttrs{}, {t}, {r}, "relu");
  const int32_t e = g.add_activation("e", Shape());
  if (extra_reader_of_t && reader_before_root) g.add_node(OpType::kGelu, GeluAttrs{}, {t}, {e}, "extra");
  const int32_t out = g.add_activation("out", Shape());
  g.add_node(OpType::kAdd, NoAttrs{}, swap ? std::vector<int32_t>{y, r} : std::vector<int32_t>{r, y}, {out},
             "add");
  if (extra_reader_of_t && !reader_before_root) g.add_node(OpType::kGelu, GeluAttrs{}, {t}, {e}, "extra");
  g.outputs = {out};
  return g;
}

Pattern transpose_relu_add(bool export_t) {
  return {"test",
          {{"t", OpType::kTranspose, {"x"}, perm_is({0, 2, 1})},
           {"r", OpType::kRelu, {"t"}},
           {"out", OpType::kAdd, {"r", "y"}}},
          export_t ? std::vector<std::string>{"t"} : std::vector<std::string>{}};
}

bool matches(const Graph& g, const Pattern& p, Match* m) {
  GraphIndex index(g);
  return match_pattern(g, index, p, g.nodes.size() - 1 - (g.nodes.back().name == "extra"), m);
}

}  // namespace

TEST_CASE("pattern: a chain matches, binding every op and capture") {
  Match m;
  const Graph g = chain({0, 2, 1}, false);
  REQUIRE(matches(g, transpose_relu_add(false), &m));
  CHECK(m.nodes.size() == 3);
  CHECK(g.tensors[m.tensor("x")].name == "x");
  CHECK(g.tensors[m.tensor("y")].name == "y");
  CHECK(m.node(g, "t").name == "transpose");
}

TEST_CASE("pattern: attribute checks reject") {
  Match m;
  CHECK_FALSE(matches(chain({1, 0, 2}, false), transpose_relu_add(false), &m));
}

TEST_CASE("pattern: Add matches with its operands in either order") {
  Match m;
  const Graph g = chain({0, 2, 1}, false, false, true);
  REQUIRE(matches(g, transpose_relu_add(false), &m));
  CHECK(g.tensors[m.tensor("y")].name == "y");
}

TEST_CASE("pattern: a capture used twice must be the same tensor") {
  Pattern p = transpose_relu_add(false);
  p.ops.back().inputs = {"r", "x"};  // out = relu(transpose(x)) + x
  Match m;
  CHECK_FALSE(matches(chain({0, 2, 1}, false), p, &m));
  CHECK(matches(chain({0, 2, 1}, false, false, false, true), p, &m));
}

TEST_CASE(
    "pattern: an inner value read outside the match blocks it unless exported, and then only after the "
    "root") {
  Match m;
  CHECK_FALSE(matches(chain({0, 2, 1}, true), transpose_relu_add(false), &m));
  CHECK(matches(chain({0, 2, 1}, true), transpose_relu_add(true), &m));
  CHECK_FALSE(matches(chain({0, 2, 1}, true, true), transpose_relu_add(true), &m));
}

TEST_CASE("pattern: a graph output inside the match blocks it") {
  Graph g = chain({0, 2, 1}, false);
  g.outputs.push_back(1 + 1);  // "t"
  REQUIRE(g.tensors[2].name == "t");
  Match m;
  CHECK_FALSE(matches(g, transpose_relu_add(false), &m));
}
