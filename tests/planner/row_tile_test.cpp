// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Row tiles (runtime/row_tile.h) on a small token-mixing transformer: each block mixes tokens (Transpose,
// Linear over the tokens, Transpose: not row-wise) and then runs a row-wise chain (projection, residual Add,
// LayerNorm, fc1, Gelu, fc2, residual Add, layer-scale Mul). The chooser picks each block's chain and cuts it
// at the non-row-wise steps, a broadcast between activations and a constant broadcast over the tokens; leaves
// chains below the threshold alone; keeps every crossing slice aligned. Sessions with the chains run block of
// rows by block of rows (blocks of 16 rows across image boundaries) give bit-identical outputs to untiled
// ones on ref and cpu, at 1 and 2 threads and batches 1..3.
#include "runtime/row_tile.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "arch/blocks.h"
#include "arch/graph_builder.h"
#include "graph_session_util.h"
#include "ir/shape_propagation.h"

using namespace vitrt;
using namespace vitrt::convert;
using namespace vitrt::test;

namespace {

struct Config {
  int64_t h = 16, w = 20, patch = 4, c = 24, hidden = 96;  // 4 x 5 = 20 tokens
  int depth = 2;
  bool token_scale = false;    // the layer scale is [1, N, C] (broadcast over the batch only): not row-wise
  bool broadcast_add = false;  // + a [B, 1, C] slice of the block's input after the mixing residual
};

int64_t tokens(const Config& k) {
  return (k.h / k.patch) * (k.w / k.patch);
}

Graph build(const Config& k) {
  Checkpoint ck;
  uint32_t seed = 11;
  auto add = [&](const std::string& name, std::vector<int64_t> shape) {
    add_random(&ck, name, std::move(shape), seed++);
  };
  const int64_t n = tokens(k);
  add("patch.weight", {k.c, 3, k.patch, k.patch}), add("patch.bias", {k.c});
  for (int i = 0; i < k.depth; ++i) {
    const std::string p = "blocks." + std::to_string(i);
    add(p + ".mix.weight", {n, n}), add(p + ".mix.bias", {n});
    add(p + ".proj.weight", {k.c, k.c}), add(p + ".proj.bias", {k.c});
    add(p + ".norm.weight", {k.c}), add(p + ".norm.bias", {k.c});
    add(p + ".fc1.weight", {k.hidden, k.c}), add(p + ".fc1.bias", {k.hidden});
    add(p + ".fc2.weight", {k.c, k.hidden}), add(p + ".fc2.bias", {k.c});
    if (k.token_scale)
      add(p + ".scale", {1, n, k.c});
    else
      add(p + ".scale", {k.c});
  }
  add("head.weight", {10, k.c}), add("head.bias", {10});
  GraphBuilder b(ck);
  const int32_t image = b.input("image", Shape{1, 3, k.h, k.w});
  Conv2dAttrs patch;
  patch.stride_h = patch.stride_w = static_cast<int32_t>(k.patch);
  int32_t x =
      b.op(OpType::kConv2d, patch, {image, b.weight("patch.weight"), b.weight("patch.bias")}, "patch");
  x = image_to_tokens(b, x, "patch");
  for (int i = 0; i < k.depth; ++i) {
    const std::string p = "blocks." + std::to_string(i);
    SliceAttrs first_token;
    first_token.axis = 1, first_token.start = 0, first_token.end = 1;
    const int32_t token0 = k.broadcast_add ? b.op(OpType::kSlice, first_token, {x}, p + ".token0") : -1;
    int32_t t = b.op(OpType::kTranspose, TransposeAttrs{{0, 2, 1}}, {x}, p + ".to_channels");
    t = linear(b, t, p + ".mix", n, n);
    t = b.op(OpType::kTranspose, TransposeAttrs{{0, 2, 1}}, {t}, p + ".to_tokens");
    t = linear(b, t, p + ".proj", k.c, k.c);  // a narrow inside tensor that dies before fc1's wide one
    int32_t x1 = b.op(OpType::kAdd, NoAttrs{}, {x, t}, p + ".mix_residual");
    if (k.broadcast_add) x1 = b.op(OpType::kAdd, NoAttrs{}, {x1, token0}, p + ".token0_add");
    int32_t h = layer_norm(b, x1, p + ".norm", k.c, 1e-6f);
    h = linear(b, h, p + ".fc1", k.c, k.hidden);
    h = gelu(b, h, GeluApproximation::kErf, p + ".gelu");
    h = linear(b, h, p + ".fc2", k.hidden, k.c);
    x = b.op(OpType::kAdd, NoAttrs{}, {x1, h}, p + ".mlp_residual");
    x = b.op(OpType::kMul, NoAttrs{}, {x, b.weight(p + ".scale")}, p + ".scale");
  }
  ReduceMeanAttrs mean;
  mean.axes = {1};
  const int32_t pooled = b.op(OpType::kReduceMean, mean, {x}, "pool");
  b.mark_output(linear(b, pooled, "head", k.c, 10));
  return finish_image_graph(b, k.h, k.w);
}

std::vector<Shape> shapes_at(const Graph& g, int64_t batch) {
  std::vector<Shape> shapes(g.tensors.size());
  REQUIRE(propagate_shapes(g, batch, shapes.data()).ok());
  return shapes;
}

int node_named(const Graph& g, const std::string& name) {
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].name == name) return static_cast<int>(i);
  FAIL("no node " << name);
  return -1;
}

RowTileLimits small_limits(uint64_t block_bytes = 1) {
  RowTileLimits l;
  l.min_inside_bytes = 1;  // every chain of the test graph is a few KiB
  l.block_bytes = block_bytes;
  return l;
}

std::unique_ptr<Session> row_session(std::shared_ptr<const Model> m, const std::string& backend, int threads,
                                     RowTileLimits limits) {
  SessionOptions o;
  o.backend = backend;
  o.max_batch = 3;
  o.num_threads = threads;
  o.poison_activations = true;
  o.row_tile = limits;
  std::unique_ptr<Session> s;
  Status st = Session::create(std::move(m), o, &s);
  REQUIRE_MESSAGE(st.ok(), st.message());
  return s;
}

}  // namespace

TEST_CASE("row tile chooser: each block's row-wise chain, cut at steps that mix rows") {
  const Config k;
  const Graph g = build(k);
  const int64_t rows = 3 * tokens(k);
  const std::vector<RowTile> tiles = choose_row_tiles(g, shapes_at(g, 3), 3, small_limits(), 64, StepRange{});
  REQUIRE(tiles.size() == static_cast<size_t>(k.depth));
  for (int i = 0; i < k.depth; ++i) {
    const std::string p = "blocks." + std::to_string(i);
    CAPTURE(p);
    // From the mixing residual (its Transpose before it is not row-wise) to the layer scale (the next
    // block's Transpose, or the pool, is not).
    CHECK(tiles[i].steps.first == node_named(g, p + ".proj"));
    CHECK(tiles[i].steps.last == node_named(g, p + ".scale"));
    CHECK(tiles[i].block_rows == 16);  // block_bytes 1: the smallest aligned block, whole GEMM row tiles
  }
  // The mixing Linear over the tokens is row-wise too (rows B x C), but alone between two Transposes: a chain
  // of one step is no tile.
  for (const RowTile& t : tiles) CHECK(t.steps.last > t.steps.first);

  SUBCASE("rows per block from block_bytes") {
    // Inside per row: proj, mix_residual, norm, fc1, gelu, fc2, mlp_residual (24 + 24 + 24 + 96 + 96 + 24 +
    // 24 floats).
    const uint64_t inside_row_bytes = (5 * k.c + 2 * k.hidden) * 4;
    const std::vector<RowTile> t =
        choose_row_tiles(g, shapes_at(g, 3), 3, small_limits(40 * inside_row_bytes), 64, StepRange{});
    REQUIRE(t.size() == 2);
    CHECK(t[0].block_rows == 32);  // 40 rows fit, rounded down to 16s
    // A block of all the rows (64 >= 60) is the untiled run: no tile.
    CHECK(
        choose_row_tiles(g, shapes_at(g, 3), 3, small_limits((rows + 16) * inside_row_bytes), 64, StepRange{})
            .empty());
  }
  SUBCASE("below the threshold: no tile") {
    RowTileLimits l = small_limits();
    l.min_inside_bytes = (5 * k.c + 2 * k.hidden) * 4 * rows;  // exactly the inside bytes: not more
    CHECK(choose_row_tiles(g, shapes_at(g, 3), 3, l, 64, StepRange{}).empty());
    l.min_inside_bytes -= 1;
    CHECK(choose_row_tiles(g, shapes_at(g, 3), 3, l, 64, StepRange{}).size() == 2);
    CHECK(choose_row_tiles(g, shapes_at(g, 3), 3, RowTileLimits{}, 64, StepRange{}).empty());  // 16 MiB
  }
  SUBCASE("alignment: crossing slices stay aligned, else no tile") {
    // Crossing row bytes are 24 floats (96 bytes): at 1024-byte alignment a block must be a multiple of 32.
    const std::vector<RowTile> t = choose_row_tiles(g, shapes_at(g, 3), 3, small_limits(), 1024, StepRange{});
    REQUIRE(t.size() == 2);
    CHECK(t[0].block_rows == 32);
    CHECK((t[0].block_rows * k.c * 4) % 1024 == 0);
    // At 64 KiB a block would need 2048 rows, more than the 60 there are.
    CHECK(choose_row_tiles(g, shapes_at(g, 3), 3, small_limits(), 65536, StepRange{}).empty());
  }
  SUBCASE("chains whose weights exceed max_weight_bytes are left alone") {
    RowTileLimits l = small_limits();
    // Each chain's constants: proj, norm, fc1, fc2 (weights and biases) and the layer scale.
    const uint64_t weights = 4 * (k.c * k.c + k.c + 2 * k.c + 2 * (k.c * k.hidden) + k.hidden + k.c + k.c);
    l.max_weight_bytes = weights;
    CHECK(choose_row_tiles(g, shapes_at(g, 3), 3, l, 64, StepRange{}).size() == 2);
    l.max_weight_bytes = weights - 1;
    CHECK(choose_row_tiles(g, shapes_at(g, 3), 3, l, 64, StepRange{}).empty());
  }
  SUBCASE("the batch tile's steps are excluded") {
    const StepRange first_block{0, node_named(g, "blocks.1.to_channels")};
    const std::vector<RowTile> t = choose_row_tiles(g, shapes_at(g, 3), 3, small_limits(), 64, first_block);
    REQUIRE(t.size() == 1);
    CHECK(t[0].steps.first == node_named(g, "blocks.1.proj"));
  }
}

TEST_CASE("row tile chooser: broadcasts that mix rows end the chain") {
  SUBCASE("a constant broadcast over the batch only (a [1, N, C] layer scale)") {
    Config k;
    k.token_scale = true;
    const Graph g = build(k);
    const std::vector<RowTile> t = choose_row_tiles(g, shapes_at(g, 3), 3, small_limits(), 64, StepRange{});
    REQUIRE(t.size() == 2);
    CHECK(t[0].steps.first == node_named(g, "blocks.0.proj"));
    CHECK(t[0].steps.last == node_named(g, "blocks.0.mlp_residual"));
  }
  SUBCASE("an Add of [B, N, C] and [B, 1, C] activations") {
    Config k;
    k.broadcast_add = true;
    const Graph g = build(k);
    const std::vector<RowTile> t = choose_row_tiles(g, shapes_at(g, 3), 3, small_limits(), 64, StepRange{});
    REQUIRE(t.size() == 4);  // two chains per block
    CHECK(t[0].steps.first == node_named(g, "blocks.0.proj"));
    CHECK(t[0].steps.last == node_named(g, "blocks.0.mix_residual"));
    CHECK(t[1].steps.first == node_named(g, "blocks.0.norm"));
    CHECK(t[1].steps.last == node_named(g, "blocks.0.scale"));
  }
}

TEST_CASE("row tile: block-by-block runs give the untiled outputs bit for bit (ref, cpu; 1, 2 threads)") {
  for (const bool token_scale : {false, true}) {
    Config k;
    k.token_scale = token_scale;
    std::vector<uint8_t> storage;
    const auto model = load(build(k), &storage);
    RowTileLimits off;
    off.min_inside_bytes = UINT64_MAX;
    for (const char* backend : {"ref", "cpu"})
      for (int threads : {1, 2})
        for (uint64_t block_bytes : {uint64_t{1}, uint64_t{24} << 10, uint64_t{34} << 10}) {
          CAPTURE(token_scale);
          CAPTURE(backend);
          CAPTURE(threads);
          CAPTURE(block_bytes);
          auto tiled = row_session(model, backend, threads, small_limits(block_bytes));
          auto plain = row_session(model, backend, threads, off);
          REQUIRE(plain->row_tiles().empty());
          const std::vector<RowTile>& tiles = tiled->row_tiles();
          REQUIRE(tiles.size() == static_cast<size_t>(k.depth));
          // Rows 60 at batch 3 (20 per image): blocks of 16 or 32 rows cross image boundaries.
          CHECK(tiles[0].block_rows == (block_bytes == 1 ? 16 : block_bytes == 24 << 10 ? 32 : 48));
          // On cpu at 2 threads every kernel of the chains is reentrant: each thread runs its blocks in its
          // own slot. The reference kernels are not (and single-threaded): one slot, blocks in turn.
          const int slots = std::string(backend) == "cpu" ? threads : 1;
          for (const RowTile& t : tiles) CHECK(t.slots == slots);
          // Inside tensors hold one block's rows per slot.
          const Graph& g = tiled->graph();
          int inside = 0;
          for (const RowTile& t : tiles)
            for (int s = t.steps.first; s < t.steps.last; ++s) {
              const int32_t out = g.nodes[s].outputs[0];
              const TensorPlacement& p = tiled->placements()[out];
              if (p.arena != ArenaKind::kActivations || p.life.last > t.steps.last) continue;
              CHECK(p.bytes ==
                    static_cast<uint64_t>(t.block_rows * slots * g.tensors[out].shape.dim(-1)) * 4);
              ++inside;
            }
          CHECK(inside > 0);
          // Each thread has its own slot of every inside tensor: two inside tensors of a tile never share
          // arena bytes (unless one is written in place of the other), whatever their lifetimes within the
          // tile.
          for (const RowTile& t : tiles)
            for (int s1 = t.steps.first; s1 <= t.steps.last; ++s1)
              for (int s2 = s1 + 1; s2 <= t.steps.last; ++s2) {
                const int32_t a = g.nodes[s1].outputs[0], b = g.nodes[s2].outputs[0];
                const TensorPlacement &pa = tiled->placements()[a], &pb = tiled->placements()[b];
                if (pa.arena != ArenaKind::kActivations || pb.arena != ArenaKind::kActivations) continue;
                // In place: one block, one lifetime. Equal offsets with different lifetimes are a reuse,
                // which would put one thread's slot of the one over another thread's slot of the other.
                const bool in_place = pa.offset == pb.offset && pa.life.last == pb.life.last;
                if (in_place || pa.life.last > t.steps.last || pb.life.last > t.steps.last) continue;
                CHECK((pa.offset + pa.bytes <= pb.offset || pb.offset + pb.bytes <= pa.offset));
              }
          const std::vector<float> x =
              pseudo_random(static_cast<size_t>(tiled->input_shape(3).numel()), 7, 1.5f);
          for (int64_t batch : {3, 1, 2, 3}) {
            CAPTURE(batch);
            const size_t n = static_cast<size_t>(tiled->output_shape(batch).numel());
            std::vector<float> yt(n, NAN), yp(n, NAN);
            REQUIRE(tiled->run(x.data(), batch, yt.data(), n).ok());
            REQUIRE(plain->run(x.data(), batch, yp.data(), n).ok());
            for (float v : yt) REQUIRE(std::isfinite(v));
            CHECK(std::memcmp(yt.data(), yp.data(), n * sizeof(float)) == 0);
          }
        }
  }
}

TEST_CASE("row tile: explicit limits win over the environment; bad values are ignored") {
  const char* old_tile = std::getenv("VITRT_ROW_TILE_KIB");
  const char* old_block = std::getenv("VITRT_ROW_BLOCK_KIB");
  const std::string keep_tile = old_tile ? old_tile : "", keep_block = old_block ? old_block : "";
  setenv("VITRT_ROW_TILE_KIB", "0", 1);
  setenv("VITRT_ROW_BLOCK_KIB", "2048", 1);
  CHECK(row_tile_limits_from_env(RowTileLimits{}).min_inside_bytes == UINT64_MAX);
  CHECK(row_tile_limits_from_env(RowTileLimits{}).block_bytes == 2048u << 10);
  CHECK(row_tile_limits_from_env(small_limits()).min_inside_bytes == 1);  // explicit
  setenv("VITRT_ROW_TILE_KIB", "12k", 1);
  setenv("VITRT_ROW_BLOCK_KIB", "0", 1);  // a block of nothing: ignored
  CHECK(row_tile_limits_from_env(RowTileLimits{}).min_inside_bytes == RowTileLimits{}.min_inside_bytes);
  CHECK(row_tile_limits_from_env(RowTileLimits{}).block_bytes == RowTileLimits{}.block_bytes);
  if (old_tile)
    setenv("VITRT_ROW_TILE_KIB", keep_tile.c_str(), 1);
  else
    unsetenv("VITRT_ROW_TILE_KIB");
  if (old_block)
    setenv("VITRT_ROW_BLOCK_KIB", keep_block.c_str(), 1);
  else
    unsetenv("VITRT_ROW_BLOCK_KIB");
}
