// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// memory/placement.h on small hand-built graphs: which tensors take an earlier tensor's bytes (in-place
// chains, views of multi-reader tensors), which must not (graph inputs and outputs, tensors read later,
// constants, size changes, the options that turn sharing off), the arena each tensor lands in, and that no
// two tensors live at the same step share bytes unless one aliases the other.
#include "memory/placement.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

using namespace vitrt;

namespace {

constexpr NodeMemoryTraits kInplace{true, false};
constexpr NodeMemoryTraits kView{true, true};
constexpr NodeMemoryTraits kOwnOutput{false, false};

// A graph with its shapes (already at the maximum batch) and its kernels' traits, built node by node.
struct TestGraph {
  Graph g;
  std::vector<Shape> shapes;
  std::vector<NodeMemoryTraits> traits;

  int32_t input(const std::string& name, Shape s) {
    const int32_t t = g.add_activation(name, s);
    shapes.push_back(s);
    g.inputs.push_back(t);
    return t;
  }
  int32_t constant(const std::string& name, Shape s) {
    const int32_t t = g.add_constant(name, s, std::vector<float>(static_cast<size_t>(s.numel()), 1.0f));
    shapes.push_back(s);
    return t;
  }
  int32_t op(OpType type, std::vector<int32_t> src, Shape s, NodeMemoryTraits kernel,
             const std::string& name) {
    const int32_t dst = g.add_activation(name, s);
    shapes.push_back(s);
    g.add_node(type, NoAttrs{}, std::move(src), {dst}, name);
    traits.push_back(kernel);
    return dst;
  }
  MemoryPlan plan(PlacementOptions o = PlacementOptions()) const { return plan_memory(g, shapes, traits, o); }
};

bool overlap_in_time(const Lifetime& a, const Lifetime& b) {
  return a.first <= b.last && b.first <= a.last;
}

// Every pair of activations alive at a common step either shares a root or has disjoint bytes.
void check_no_conflicts(const TestGraph& t, const MemoryPlan& p, uint64_t padding) {
  for (size_t i = 0; i < p.placements.size(); ++i) {
    const TensorPlacement& a = p.placements[i];
    if (a.arena != ArenaKind::kActivations) continue;
    CHECK(a.offset % 64 == 0);
    CHECK(a.offset + a.bytes + padding <= p.activation_bytes);
    for (size_t j = i + 1; j < p.placements.size(); ++j) {
      const TensorPlacement& b = p.placements[j];
      if (b.arena != ArenaKind::kActivations || p.root[i] == p.root[j]) continue;
      if (!overlap_in_time(a.life, b.life)) continue;
      const bool disjoint = a.offset + a.bytes <= b.offset || b.offset + b.bytes <= a.offset;
      CHECK_MESSAGE(disjoint,
                    t.g.tensors[i].name << " and " << t.g.tensors[j].name << " share bytes while both live");
    }
  }
}

}  // namespace

TEST_CASE("placement: an in-place chain shares one block, its lifetime covering the whole chain") {
  // x (input) -> a = relu(x) -> b = gelu(a) -> c = exp(b) -> out = relu(c) (graph output)
  TestGraph t;
  const Shape s{2, 16, 32};
  const int32_t x = t.input("x", s);
  const int32_t a = t.op(OpType::kRelu, {x}, s, kInplace, "a");
  const int32_t b = t.op(OpType::kGelu, {a}, s, kInplace, "b");
  const int32_t c = t.op(OpType::kExp, {b}, s, kInplace, "c");
  const int32_t out = t.op(OpType::kRelu, {c}, s, kInplace, "out");
  t.g.outputs = {out};
  const MemoryPlan p = t.plan();

  CHECK(p.alias_of[a] == -1);  // its source is the graph input, which belongs to the caller
  CHECK(p.alias_of[b] == a);
  CHECK(p.alias_of[c] == b);
  CHECK(p.alias_of[out] == -1);  // a graph output keeps its own bytes
  CHECK(p.root[b] == a);
  CHECK(p.root[c] == a);
  CHECK(p.placements[b].offset == p.placements[a].offset);
  CHECK(p.placements[c].offset == p.placements[a].offset);
  // The shared block lives from a's producer to c's last reader, for every tensor in it.
  for (int32_t m : {a, b, c}) {
    CHECK(p.placements[m].arena == ArenaKind::kActivations);
    CHECK(p.placements[m].life.last == 3);
  }
  CHECK(p.placements[a].life.first == 0);
  CHECK(p.placements[out].life.last == 4);  // outputs live to the end
  CHECK(p.placements[x].arena == ArenaKind::kInput);
  CHECK(p.placements[out].offset != p.placements[a].offset);  // the block is still live when out is written
  const uint64_t bytes = 2 * 16 * 32 * 4;
  CHECK(p.placements[a].bytes == bytes);
  // Two blocks of (bytes + 64 padding) rounded to 64: the chain and the output.
  PlacementOptions o;
  o.padding = 64;
  const MemoryPlan padded = t.plan(o);
  CHECK(padded.activation_bytes == 2 * (bytes + 64));
  check_no_conflicts(t, padded, 64);
}

TEST_CASE(
    "placement: a view shares a multi-reader input; an in-place write into it waits for the last reader") {
  for (bool late_reader : {true, false}) {
    CAPTURE(late_reader);
    // a = relu(x); v = view(a); g = gelu(v) in place; u = relu(a); out = g + u. With late_reader, u runs
    // after g, so g must not write over a's bytes; otherwise u has read a before g runs, and g may.
    TestGraph t;
    const int32_t x = t.input("x", Shape{2, 4, 8});
    const int32_t a = t.op(OpType::kRelu, {x}, Shape{2, 4, 8}, kInplace, "a");
    const int32_t v = t.op(OpType::kReshape, {a}, Shape{2, 32}, kView, "v");
    int32_t g = -1, u = -1;
    if (late_reader) {
      g = t.op(OpType::kGelu, {v}, Shape{2, 32}, kInplace, "g");
      u = t.op(OpType::kRelu, {a}, Shape{2, 4, 8}, kOwnOutput, "u");
    } else {
      u = t.op(OpType::kRelu, {a}, Shape{2, 4, 8}, kOwnOutput, "u");
      g = t.op(OpType::kGelu, {v}, Shape{2, 32}, kInplace, "g");
    }
    const int32_t w = t.op(OpType::kReshape, {u}, Shape{2, 32}, kView, "w");
    const int32_t out = t.op(OpType::kAdd, {g, w}, Shape{2, 32}, kOwnOutput, "out");
    t.g.outputs = {out};
    const MemoryPlan p = t.plan();

    CHECK(p.alias_of[v] == a);  // a has two readers, yet the view takes its bytes
    CHECK(p.placements[v].offset == p.placements[a].offset);
    CHECK(p.alias_of[w] == u);
    if (late_reader) {
      CHECK(p.alias_of[g] == -1);
      CHECK(p.placements[g].offset != p.placements[a].offset);
    } else {
      CHECK(p.alias_of[g] == v);
      CHECK(p.root[g] == a);
    }
    // The block of a lasts until the last read of any tensor in it: u's read (late) or out's read of g.
    CHECK(p.placements[a].life.last == (late_reader ? 3 : 5));
    check_no_conflicts(t, p, 0);
  }
}

TEST_CASE("placement: no aliasing into a tensor read later, a graph output, a constant or a different size") {
  TestGraph t;
  const int32_t x = t.input("x", Shape{4, 8});
  const int32_t k = t.constant("k", Shape{4, 8});
  const int32_t a = t.op(OpType::kRelu, {x}, Shape{4, 8}, kOwnOutput, "a");
  // b would write over a, but a is read again by `late`; late, a's last reader, still may not: a has two
  // readers (only views share a multi-reader tensor).
  const int32_t b = t.op(OpType::kGelu, {a}, Shape{4, 8}, kInplace, "b");
  const int32_t late = t.op(OpType::kAdd, {a, b}, Shape{4, 8}, kInplace, "late");
  // A constant's bytes are not the session's to write.
  const int32_t from_k = t.op(OpType::kRelu, {k}, Shape{4, 8}, kInplace, "from_k");
  const int32_t sum = t.op(OpType::kAdd, {late, from_k}, Shape{4, 8}, kOwnOutput, "sum");
  const int32_t grown = t.op(OpType::kConcat, {sum}, Shape{8, 8}, kInplace, "grown");  // the size changes
  const int32_t kept = t.op(OpType::kRelu, {grown}, Shape{8, 8}, kOwnOutput, "kept");
  // kept is a graph output: the caller reads it after the run, so nothing may write over it.
  const int32_t after_output = t.op(OpType::kGelu, {kept}, Shape{8, 8}, kInplace, "after_output");
  const int32_t out = t.op(OpType::kRelu, {after_output}, Shape{8, 8}, kInplace, "out");  // a graph output
  t.g.outputs = {out, kept};
  const MemoryPlan p = t.plan();

  CHECK(p.alias_of[b] == -1);
  CHECK(p.alias_of[late] == -1);
  CHECK(p.alias_of[from_k] == -1);
  CHECK(p.alias_of[grown] == -1);
  CHECK(p.alias_of[after_output] == -1);
  CHECK(p.alias_of[out] == -1);
  for (int32_t m : {a, b, late, from_k, sum, grown, kept, after_output, out}) CHECK(p.root[m] == m);
  CHECK(p.placements[k].arena == ArenaKind::kPersistent);  // not in a mapped file
  CHECK(p.persistent_bytes == 4 * 8 * 4);
  // Control: the same chain with no graph output in the middle does share (after_output over a dead tensor).
  TestGraph control = t;
  control.g.outputs = {out};
  CHECK(control.plan().alias_of[after_output] == kept);
  check_no_conflicts(t, p, 0);
}

TEST_CASE("placement: allow_inplace off and preserve_intermediates give every activation its own bytes") {
  TestGraph t;
  const Shape s{3, 64};
  const int32_t x = t.input("x", s);
  const int32_t a = t.op(OpType::kRelu, {x}, s, kOwnOutput, "a");
  const int32_t b = t.op(OpType::kGelu, {a}, s, kInplace, "b");
  const int32_t v = t.op(OpType::kReshape, {b}, Shape{192}, kView, "v");
  const int32_t c = t.op(OpType::kExp, {v}, Shape{192}, kOwnOutput, "c");
  const int32_t out = t.op(OpType::kRelu, {c}, Shape{192}, kOwnOutput, "out");
  t.g.outputs = {out};
  REQUIRE(t.plan().alias_of[b] == a);
  REQUIRE(t.plan().alias_of[v] == b);

  PlacementOptions no_inplace;
  no_inplace.allow_inplace = false;
  const MemoryPlan p = t.plan(no_inplace);
  for (int32_t m : {a, b, v, c, out}) {
    CHECK(p.alias_of[m] == -1);
    CHECK(p.root[m] == m);
  }
  check_no_conflicts(t, p, 0);
  // Without in-place, blocks still reuse bytes once their lifetimes end (a is dead when c is written).
  CHECK(p.activation_bytes < 5 * 3 * 64 * 4);

  PlacementOptions preserve;
  preserve.preserve_intermediates = true;
  const MemoryPlan q = t.plan(preserve);
  std::vector<uint64_t> offsets;
  for (int32_t m : {a, b, v, c, out}) {
    CHECK(q.alias_of[m] == -1);
    for (uint64_t o : offsets) CHECK(q.placements[m].offset != o);
    offsets.push_back(q.placements[m].offset);
  }
  CHECK(q.activation_bytes == 5 * 3 * 64 * 4);
}

TEST_CASE("placement: weights at their file offset, folded constants persistent, unused tensors nowhere") {
  TestGraph t;
  const int32_t x = t.input("x", Shape{2, 4});
  const int32_t w = t.constant("w", Shape{2, 4});
  const int32_t unread = t.constant("unread", Shape{16});
  const int32_t folded = t.constant("folded", Shape{2, 4});
  const int32_t orphan = t.g.add_activation("orphan", Shape{2, 4});  // neither produced nor read
  t.shapes.push_back(Shape{2, 4});
  const int32_t a = t.op(OpType::kAdd, {x, w}, Shape{2, 4}, kOwnOutput, "a");
  const int32_t out = t.op(OpType::kAdd, {a, folded}, Shape{2, 4}, kOwnOutput, "out");
  t.g.outputs = {out};
  // A stand-in for the mapped file: w at byte 64 of it, unread at byte 128.
  std::vector<uint8_t> file(256, 0);
  t.g.tensors[w].constant.data = file.data() + 64;
  t.g.tensors[unread].constant.data = file.data() + 128;
  PlacementOptions o;
  o.file = file.data();
  o.file_size = file.size();
  const MemoryPlan p = t.plan(o);

  CHECK(p.placements[w].arena == ArenaKind::kWeights);
  CHECK(p.placements[w].offset == 64);
  CHECK(p.placements[unread].arena == ArenaKind::kWeights);
  CHECK(p.placements[unread].offset == 128);
  CHECK(p.weight_bytes == 2 * 4 * 4);  // only what the graph reads
  CHECK(p.placements[folded].arena == ArenaKind::kPersistent);
  CHECK(p.persistent_bytes == 2 * 4 * 4);
  CHECK(p.placements[orphan].arena == ArenaKind::kNone);
  CHECK(p.placements[x].arena == ArenaKind::kInput);
  CHECK(p.placements[a].arena == ArenaKind::kActivations);
  CHECK(p.placements[out].arena == ArenaKind::kActivations);
}
