// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The session's batch tile (runtime/batch_tile.h) on an inverted-residual start at odd sizes: the leading
// per-image steps whose activations are large enough run image by image, with the same outputs as the
// untiled session at batches 1..3 (exact on ref, to rounding on cpu), an interior tensor, a residual read
// across the tile and a boundary tensor produced mid-tile and read after it among them; near misses (too
// small per image, weights too large, a graph output in the chain, a leading op that is not per image,
// max_batch 1) get no tile or a shorter one.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "arch/graph_builder.h"
#include "graph_session_util.h"
#include "vitrt.h"

using namespace vitrt;
using namespace vitrt::convert;
using namespace vitrt::test;

namespace {

struct Config {
  int64_t h = 16, w = 13, c = 8, e = 24;  // every boundary tensor a multiple of 64 bytes per image
  bool lead_sub = false;                  // a Sub of a constant (not one of the tile's ops) before the stem
  bool stem_output = false;               // the stem's output is also a graph output
  // A standalone Relu after project (in place over project's interior output at opt_level 0) whose output
  // the residual reads inside the tile and a third global pool reads after it.
  bool project_relu = false;
};

// stem 3x3 -> expand 1x1 (+ReLU) -> depthwise 3x3 -> project 1x1 -> + stem -> 3x3/2 max pool, then (outside
// the tile) global pools of the pooled sum and of the expanded tensor, concatenated.
Graph build(const Config& k) {
  Checkpoint ck;
  uint32_t seed = 5;
  auto add = [&](const std::string& name, std::vector<int64_t> shape) {
    add_random(&ck, name, std::move(shape), seed++);
  };
  add("stem.weight", {k.c, 3, 3, 3}), add("stem.bias", {k.c});
  if (k.lead_sub) add("mean", {1, 3, 1, 1});
  add("expand.weight", {k.e, k.c, 1, 1}), add("expand.bias", {k.e});
  add("dw.weight", {k.e, 1, 3, 3}), add("dw.bias", {k.e});
  add("project.weight", {k.c, k.e, 1, 1});
  GraphBuilder b(ck);
  int32_t x = b.input("image", Shape{1, 3, k.h, k.w});
  if (k.lead_sub) {
    x = b.op(OpType::kSub, NoAttrs{}, {x, b.weight("mean")}, "normalize");
  }
  Conv2dAttrs same;
  same.pad_h = same.pad_w = 1;
  const int32_t stem =
      b.op(OpType::kConv2d, same, {x, b.weight("stem.weight"), b.weight("stem.bias")}, "stem");
  if (k.stem_output) b.mark_output(stem);
  Conv2dAttrs relu;
  relu.activation = Activation::kRelu;
  const int32_t expanded =
      b.op(OpType::kConv2d, relu, {stem, b.weight("expand.weight"), b.weight("expand.bias")}, "expand");
  Conv2dAttrs dw = same;
  dw.groups = static_cast<int32_t>(k.e);
  const int32_t mixed =
      b.op(OpType::kConv2d, dw, {expanded, b.weight("dw.weight"), b.weight("dw.bias")}, "dw");
  const int32_t projected =
      b.op(OpType::kConv2d, Conv2dAttrs{}, {mixed, b.weight("project.weight")}, "project");
  const int32_t branch =
      k.project_relu ? b.op(OpType::kRelu, NoAttrs{}, {projected}, "project_relu") : projected;
  const int32_t sum = b.op(OpType::kAdd, NoAttrs{}, {stem, branch}, "residual");
  Pool2dAttrs pool;
  pool.kernel_h = pool.kernel_w = 3;
  pool.stride_h = pool.stride_w = 2;
  const int32_t pooled = b.op(OpType::kPool2d, pool, {sum}, "pool");
  const int32_t a = b.op(OpType::kAdaptiveAvgPool2d, AdaptiveAvgPool2dAttrs{1, 1}, {pooled}, "gap");
  const int32_t e =
      b.op(OpType::kAdaptiveAvgPool2d, AdaptiveAvgPool2dAttrs{1, 1}, {expanded}, "gap_expanded");
  std::vector<int32_t> pools = {a, e};
  if (k.project_relu)
    pools.push_back(b.op(OpType::kAdaptiveAvgPool2d, AdaptiveAvgPool2dAttrs{1, 1}, {branch}, "gap_relu"));
  b.mark_output(b.op(OpType::kConcat, ConcatAttrs{1}, pools, "concat"));
  return finish_image_graph(b, k.h, k.w);
}

std::unique_ptr<Session> tiled_session(std::shared_ptr<const Model> m, const std::string& backend,
                                       int64_t max_batch, BatchTileLimits limits, int opt_level = 1) {
  SessionOptions o;
  o.opt_level = opt_level;
  o.backend = backend;
  o.max_batch = max_batch;
  o.num_threads = 2;
  o.poison_activations = true;
  o.batch_tile = limits;
  std::unique_ptr<Session> s;
  Status st = Session::create(std::move(m), o, &s);
  REQUIRE_MESSAGE(st.ok(), st.message());
  return s;
}

// The tile's last step, -1 for none.
int tile_last(const Session& s) {
  const StepRange r = s.batch_tile();
  if (r.last < r.first) return -1;
  REQUIRE(r.first == 0);
  return r.last;
}

// The step of the node named `name` (fused nodes join their parts' names with '+'), -1 if none.
int step_of(const Session& s, const std::string& name) {
  const std::vector<Node>& nodes = s.graph().nodes;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].name == name || nodes[i].name.find(name + "+") == 0 ||
        nodes[i].name.find("+" + name) != std::string::npos)
      return static_cast<int>(i);
  return -1;
}

// Sets (or with nullptr unsets) an environment variable for the scope, restoring its value after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_, old_.c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

}  // namespace

TEST_CASE("batch tile: the leading per-image steps run image by image, same outputs as untiled") {
  BatchTileLimits small;  // every activation of the test graph is a few KiB per image
  small.min_image_bytes = 1024;
  BatchTileLimits off;
  off.min_image_bytes = UINT64_MAX;
  for (const Config& k : {Config{}, Config{9, 16, 8, 20}}) {
    CAPTURE(k.h);
    CAPTURE(k.w);
    std::vector<uint8_t> storage;
    const auto model = load(build(k), &storage);
    for (const char* backend : {"ref", "cpu"}) {
      CAPTURE(backend);
      auto tiled = tiled_session(model, backend, 3, small);
      auto untiled = tiled_session(model, backend, 3, off);
      // stem .. max pool (its input is above 1 KiB per image); the global pools and the concat are not
      // per image.
      CHECK(tile_last(*tiled) == step_of(*tiled, "pool"));
      CHECK(step_of(*tiled, "residual") >= 3);
      CHECK(tile_last(*untiled) == -1);
      // cpu: every kernel of the per-image steps is reentrant, so its two threads run images side by side
      // over them (batch 3: one image on the first, two on the second); ref's kernels are not.
      const bool cpu = std::string(backend) == "cpu";
      CHECK(tiled->batch_trunk_slots() == (cpu ? 2 : 1));
      if (cpu) CHECK(tiled->batch_trunk().last == tile_last(*tiled));
      CHECK(untiled->batch_trunk_slots() == 1);  // min_image_bytes UINT64_MAX: neither
      check_same_outputs(*tiled, *untiled, 3, 17, std::string(backend) == "ref" ? 0.0 : 1e-5);
    }
  }
}

TEST_CASE("batch trunk: each thread runs its images image by image over the tile, then together") {
  // Weights over 900 bytes end the tile after expand (dw's 24 × 9 floats and bias); the trunk runs on to
  // the max pool: dw, project, the residual and the pool run at each thread's images at once, reading the
  // tile's boundary tensors (the stem's and expand's outputs) from the thread's slot.
  BatchTileLimits early;
  early.min_image_bytes = 1024;
  early.max_weight_bytes = 900;
  BatchTileLimits off;
  off.min_image_bytes = UINT64_MAX;
  for (const Config& k : {Config{}, Config{9, 16, 8, 24}}) {
    CAPTURE(k.h);
    std::vector<uint8_t> storage;
    const auto model = load(build(k), &storage);
    for (int64_t max_batch : {2, 3, 5}) {
      CAPTURE(max_batch);
      auto tiled = tiled_session(model, "cpu", max_batch, early);
      auto untiled = tiled_session(model, "cpu", max_batch, off);
      CHECK(tile_last(*tiled) == step_of(*tiled, "expand"));
      CHECK(tiled->batch_trunk_slots() == 2);
      CHECK(tiled->batch_trunk().last == step_of(*tiled, "pool"));
      check_same_outputs(*tiled, *untiled, max_batch, 23, 1e-5);
    }
  }
}

TEST_CASE("batch trunk: only with every kernel reentrant and more than one thread") {
  BatchTileLimits small;
  small.min_image_bytes = 1024;
  std::vector<uint8_t> storage;
  // opt_level 0 keeps project_relu a standalone Relu: the reference kernel, not reentrant.
  Config k;
  k.project_relu = true;
  const auto model = load(build(k), &storage);
  auto plain = tiled_session(model, "cpu", 3, small, 0);
  CHECK(tile_last(*plain) >= step_of(*plain, "project_relu"));
  CHECK(plain->batch_trunk_slots() == 1);
  CHECK(plain->batch_trunk().last == -1);
  SessionOptions o;
  o.backend = "cpu";
  o.max_batch = 3;
  o.num_threads = 1;
  o.batch_tile = small;
  std::vector<uint8_t> storage_one;
  std::unique_ptr<Session> one;
  REQUIRE(Session::create(load(build(Config{}), &storage_one), o, &one).ok());
  CHECK(tile_last(*one) >= 1);
  CHECK(one->batch_trunk_slots() == 1);
}

TEST_CASE("batch tile: near misses get no tile or a shorter one") {
  BatchTileLimits small;
  small.min_image_bytes = 1400;
  const Config plain;
  std::vector<uint8_t> storage;
  const auto model = load(build(plain), &storage);
  // Max pool's output (8 x 7 x 6 floats, 1344 bytes per image) is below 1400 bytes, its input above: it
  // joins.
  auto full = tiled_session(model, "cpu", 2, small);
  CHECK(tile_last(*full) == step_of(*full, "pool"));
  BatchTileLimits above = small;
  above.min_image_bytes = 8 * 16 * 13 * 4 + 4;  // above the stem's output, below the expanded tensor
  // stem reads 3x16x13 and writes 8x16x13 floats: both below; no step joins.
  CHECK(tile_last(*tiled_session(model, "cpu", 2, above)) == -1);
  BatchTileLimits light = small;
  light.max_weight_bytes = 900;  // the stem's 896 and expand's 864 bytes of weights, not dw's 960
  auto stem_expand = tiled_session(model, "cpu", 2, light);
  CHECK(tile_last(*stem_expand) == step_of(*stem_expand, "expand"));
  CHECK(step_of(*stem_expand, "expand") == 1);
  light.max_weight_bytes = 880;  // below the stem's 896: no step joins
  CHECK(tile_last(*tiled_session(model, "cpu", 2, light)) == -1);
  CHECK(tile_last(*tiled_session(model, "cpu", 1, small)) == -1);  // max_batch 1
  Config lead = plain;
  lead.lead_sub = true;
  std::vector<uint8_t> storage2;
  CHECK(tile_last(*tiled_session(load(build(lead), &storage2), "cpu", 2, small)) == -1);
  Config leak = plain;
  leak.stem_output = true;
  std::vector<uint8_t> storage3;
  CHECK(tile_last(*tiled_session(load(build(leak), &storage3), "cpu", 2, small)) == -1);
}

TEST_CASE("batch tile: no in-place join of an interior and a boundary tensor inside the tile") {
  // opt_level 0 keeps the Relu standalone: it may run in place over project's output, which lives inside the
  // tile (slice 0 for every image), while the Relu's output is read after the tile (slice b). Joined, image
  // b + 1's project would overwrite image b's Relu output.
  BatchTileLimits small;
  small.min_image_bytes = 1024;
  BatchTileLimits off;
  off.min_image_bytes = UINT64_MAX;
  Config k{16, 13};
  k.project_relu = true;
  std::vector<uint8_t> storage;
  const auto model = load(build(k), &storage);
  for (const char* backend : {"ref", "cpu"}) {
    CAPTURE(backend);
    auto tiled = tiled_session(model, backend, 3, small, 0);
    auto untiled = tiled_session(model, backend, 3, off, 0);
    REQUIRE(step_of(*tiled, "project_relu") >= 0);
    CHECK(step_of(*tiled, "project_relu") < tile_last(*tiled));
    check_same_outputs(*tiled, *untiled, 3, 29, std::string(backend) == "ref" ? 0.0 : 1e-5);
  }
}

TEST_CASE("batch tile: VITRT_BATCH_TILE_KIB replaces only the default limits") {
  BatchTileLimits small;
  small.min_image_bytes = 1024;
  BatchTileLimits off;
  off.min_image_bytes = UINT64_MAX;
  std::vector<uint8_t> storage;
  const auto model = load(build(Config{16, 13}), &storage);
  {
    ScopedEnv unset("VITRT_BATCH_TILE_KIB", nullptr);
    CHECK(tile_last(*tiled_session(model, "cpu", 2, BatchTileLimits{})) == -1);  // a few KiB < 256 KiB
  }
  {
    ScopedEnv one("VITRT_BATCH_TILE_KIB", "1");
    auto from_env = tiled_session(model, "cpu", 2, BatchTileLimits{});
    CHECK(tile_last(*from_env) == step_of(*from_env, "pool"));
    CHECK(tile_last(*tiled_session(model, "cpu", 2, off)) == -1);  // the caller's "off" wins
  }
  {
    ScopedEnv zero("VITRT_BATCH_TILE_KIB", "0");
    CHECK(tile_last(*tiled_session(model, "cpu", 2, BatchTileLimits{})) == -1);
    auto explicit_small = tiled_session(model, "cpu", 2, small);  // the caller's limits win over "0"
    CHECK(tile_last(*explicit_small) == step_of(*explicit_small, "pool"));
  }
}

TEST_CASE("batch tile: VITRT_BATCH_TILE_WEIGHT_KIB replaces only the default weight limit") {
  BatchTileLimits small;
  small.min_image_bytes = 1024;
  std::vector<uint8_t> storage;
  const auto model = load(build(Config{16, 13}), &storage);
  ScopedEnv min_one("VITRT_BATCH_TILE_KIB", "1");  // every step's activations are over 1 KiB per image
  {
    ScopedEnv unset("VITRT_BATCH_TILE_WEIGHT_KIB", nullptr);
    auto from_env = tiled_session(model, "cpu", 2, BatchTileLimits{});
    CHECK(tile_last(*from_env) == step_of(*from_env, "pool"));  // every weight is under the default limit
  }
  {
    ScopedEnv zero("VITRT_BATCH_TILE_WEIGHT_KIB", "0");  // the stem's 896 bytes of weights are too many
    CHECK(tile_last(*tiled_session(model, "cpu", 2, BatchTileLimits{})) == -1);
    auto explicit_small = tiled_session(model, "cpu", 2, small);  // the caller's limits win
    CHECK(tile_last(*explicit_small) == step_of(*explicit_small, "pool"));
    CHECK(batch_tile_limits_from_env(BatchTileLimits{}).max_weight_bytes == 0);
  }
  {
    ScopedEnv one("VITRT_BATCH_TILE_WEIGHT_KIB", "1");
    auto from_env = tiled_session(model, "cpu", 2, BatchTileLimits{});
    CHECK(tile_last(*from_env) == step_of(*from_env, "pool"));
    CHECK(batch_tile_limits_from_env(BatchTileLimits{}).max_weight_bytes == 1024);
  }
  for (const char* bad : {"abc", "-1", "1e3"}) {  // ignored (one-time warning): the default stays
    CAPTURE(bad);
    ScopedEnv env("VITRT_BATCH_TILE_WEIGHT_KIB", bad);
    const BatchTileLimits limits = batch_tile_limits_from_env(BatchTileLimits{});
    CHECK(limits.max_weight_bytes == BatchTileLimits{}.max_weight_bytes);
    CHECK(limits.min_image_bytes == 1024);  // VITRT_BATCH_TILE_KIB still applies
  }
}

TEST_CASE("batch tile: VITRT_BATCH_TILE_KIB takes plain decimal KiB within the bound, nothing else") {
  uint64_t kib = 7;
  CHECK(parse_batch_tile_kib("0", &kib));
  CHECK(kib == 0);
  CHECK(parse_batch_tile_kib("300", &kib));
  CHECK(kib == 300);
  CHECK(parse_batch_tile_kib("000256", &kib));
  CHECK(kib == 256);
  CHECK(parse_batch_tile_kib(std::to_string(kMaxBatchTileKib).c_str(), &kib));
  CHECK(kib == kMaxBatchTileKib);
  kib = 7;
  for (const char* bad : {"", "off", "abc", "1e3", "0x10", "300 ", " 300", "+4", "-1",
                          "-18446744073709551615", "18446744073709551621", "16777217", "3.5", "12k"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_batch_tile_kib(bad, &kib));
    CHECK(kib == 7);  // untouched
  }
  CHECK_FALSE(parse_batch_tile_kib(nullptr, &kib));
  // A rejected value leaves the default limits as they are (with a one-time warning on stderr).
  for (const char* bad : {"-18446744073709551615", "abc"}) {
    ScopedEnv env("VITRT_BATCH_TILE_KIB", bad);
    const BatchTileLimits limits = batch_tile_limits_from_env(BatchTileLimits{});
    CHECK(limits.min_image_bytes == BatchTileLimits{}.min_image_bytes);
  }
}

TEST_CASE("batch tile: image slices that would break the backend's alignment get no tile or a shorter one") {
  // Image b's slice of a boundary tensor starts at b x its bytes per image; backends align tensors to 64.
  BatchTileLimits small;
  small.min_image_bytes = 1024;
  BatchTileLimits off;
  off.min_image_bytes = UINT64_MAX;
  // 13x11: the input's 3x13x11 floats are 1716 bytes per image (52 mod 64), and every tile reads the input.
  std::vector<uint8_t> storage;
  const auto odd = load(build(Config{13, 11}), &storage);
  for (const char* backend : {"ref", "cpu"}) CHECK(tile_last(*tiled_session(odd, backend, 3, small)) == -1);
  // 16x12: only max pool's output (8x7x5 floats, 1120 bytes, 32 mod 64) is off; the tile ends before the
  // pool, whose input then is a boundary tensor (8x16x12 floats, aligned).
  std::vector<uint8_t> storage2;
  const auto short_pool = load(build(Config{16, 12}), &storage2);
  for (const char* backend : {"ref", "cpu"}) {
    CAPTURE(backend);
    auto tiled = tiled_session(short_pool, backend, 3, small);
    CHECK(tile_last(*tiled) == step_of(*tiled, "residual"));
    CHECK(step_of(*tiled, "pool") == step_of(*tiled, "residual") + 1);
    check_same_outputs(*tiled, *tiled_session(short_pool, backend, 3, off), 3, 31,
                       std::string(backend) == "ref" ? 0.0 : 1e-5);
  }
}

TEST_CASE("batch trunk: the C API reports it as a tile of kind trunk") {
  // The default limits give the test graph no batch tile (its activations are a few KiB per image); the trunk
  // has no size limits, so it is the only tile: steps 0 .. the max pool, 2 threads, up to 2 of 3 images each.
  std::vector<uint8_t> storage;
  size_t size = 0;
  const uint8_t* bytes = model_bytes(build(Config{}), &storage, &size);
  vitrt_model_t* model = nullptr;
  REQUIRE_MESSAGE(vitrt_model_load_from_memory(bytes, size, &model) == VITRT_OK, vitrt_last_error_message());
  vitrt_session_options_t o = vitrt_session_default_options();
  o.backend = VITRT_BACKEND_CPU;
  o.num_threads = 2;
  o.max_batch = 3;
  vitrt_session_t* session = nullptr;
  REQUIRE(vitrt_session_create(model, &o, &session) == VITRT_OK);
  vitrt_plan_info_t plan = {};
  plan.struct_size = sizeof plan;
  REQUIRE(vitrt_session_get_plan(session, &plan) == VITRT_OK);
  CHECK(plan.num_tiles == 1);
  vitrt_tile_info_t tile = {};
  tile.struct_size = sizeof tile;
  REQUIRE(vitrt_session_get_tile(session, 0, &tile) == VITRT_OK);
  CHECK(std::string(tile.kind) == "trunk");
  CHECK(tile.first_step == 0);
  CHECK(tile.last_step >= 4);  // stem, expand, dw, project (+ the residual), the pool
  CHECK(tile.threads == 2);
  CHECK(tile.block == 2);
  CHECK(vitrt_session_get_tile(session, 1, &tile) == VITRT_ERR_INVALID_ARGUMENT);
  vitrt_session_free(session);
  vitrt_model_free(model);
}
