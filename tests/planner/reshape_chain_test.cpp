// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// canonicalize merges Reshape -> Reshape chains. The outer target's 0 copies a dim of the intermediate shape,
// which may be a multiple of the batch (3B where the inner Reshape folded three channels into the batch axis,
// as SOFT's exported attention does with its heads): merged, that 0 must not copy the new source's batch B.
// Each chain runs on ref and cpu at batches 1..3 against the same model with canonicalize disabled,
// activations poisoned, and the planned Reshape count says whether the chain was merged.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "arch/graph_builder.h"
#include "graph_session_util.h"

using namespace vitrt;
using namespace vitrt::convert;
using namespace vitrt::test;

namespace {

// image [B,3,4,6] -> Reshape(inner) -> Reshape(outer) -> Gelu -> Reshape [B,72].
Graph chain(std::vector<int64_t> inner, std::vector<int64_t> outer) {
  Checkpoint ck;
  GraphBuilder b(ck);
  const int32_t image = b.input("image", Shape{1, 3, 4, 6});
  const int32_t r1 = b.op(OpType::kReshape, ReshapeAttrs{std::move(inner)}, {image}, "inner");
  const int32_t r2 = b.op(OpType::kReshape, ReshapeAttrs{std::move(outer)}, {r1}, "outer");
  const int32_t g = b.op(OpType::kGelu, GeluAttrs{}, {r2}, "g");
  b.mark_output(b.op(OpType::kReshape, ReshapeAttrs{{-1, 72}}, {g}, "out"));
  return finish_image_graph(b, 4, 6);
}

void check_chain(std::vector<int64_t> inner, std::vector<int64_t> outer, int want_reshapes) {
  std::vector<uint8_t> storage;
  const auto model = load(chain(std::move(inner), std::move(outer)), &storage);
  for (const char* backend : {"ref", "cpu"}) {
    CAPTURE(backend);
    auto merged = session(model, backend, 3);
    auto as_written = session(model, backend, 3, "canonicalize");
    CHECK(count(merged->graph(), OpType::kReshape) == want_reshapes);
    CHECK(count(as_written->graph(), OpType::kReshape) == 3);
    check_same_outputs(*merged, *as_written, 3, 31, 0.0);
  }
}

}  // namespace

TEST_CASE("canonicalize: a 0 copying a batch multiple (3B) becomes the inferred dim when chains merge") {
  // [B,3,4,6] -> [3B,4,6] -> [3B,24]: merged into one Reshape [-1,24] (a 0 kept would give [B,24] and fail).
  check_chain({-1, 4, 6}, {0, 24}, 2);
}

TEST_CASE("canonicalize: a 0 that the inner Reshape copied from the source too stays a 0") {
  // [B,3,4,6] -> [B,12,6] -> [B,72]: both copy the batch, merged into [0,72].
  check_chain({0, 12, 6}, {0, -1}, 2);
}

TEST_CASE("canonicalize: a chain whose outer target already infers a dim and copies a batch multiple stays") {
  // [B,3,4,6] -> [3B,4,6] -> [3B,24] written as [0,-1]: the 0 cannot become -1 too, so nothing merges.
  check_chain({-1, 4, 6}, {0, -1}, 3);
}
