// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Row tiles (runtime/row_tile.h) on the shipped DeiT (17 tokens of 64 channels per image, a class token,
// softmax attention between the chains): forced onto every row-wise chain in 16- and 32-row blocks, its
// logits are bit-identical to the untiled session's on ref and cpu, at 1 and 2 threads and batches 1..3.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "arch/arch.h"
#include "checkpoint/checkpoint.h"
#include "loader/model_loader.h"
#include "model_writer.h"
#include "runtime/session.h"
#include "unit/test_graphs.h"

using namespace vitrt;

namespace {

std::shared_ptr<const Model> fashion_deit() {
  const char* src = std::getenv("VITRT_SOURCE_DIR");
  REQUIRE_MESSAGE(src, "VITRT_SOURCE_DIR is not set");
  const std::string dir = std::string(src) + "/models/fashion_deit";
  convert::Checkpoint ck;
  Status st = convert::load_checkpoint(dir + "/fashion_deit.pth", &ck);
  REQUIRE_MESSAGE(st.ok(), st.message());
  Graph g;
  std::string log;
  st = convert::convert_checkpoint(ck, convert::ConvertOptions{}, &g, &log);
  REQUIRE_MESSAGE(st.ok(), st.message());
  const std::string path = "row_tile_fashion_deit.vitrt";
  REQUIRE(write_model_file(g, path).ok());
  std::shared_ptr<const Model> m;
  st = load_model(path, &m);
  std::remove(path.c_str());
  REQUIRE_MESSAGE(st.ok(), st.message());
  return m;
}

std::unique_ptr<Session> deit_session(std::shared_ptr<const Model> m, const char* backend, int threads,
                                      RowTileLimits limits) {
  SessionOptions o;
  o.backend = backend;
  o.num_threads = threads;
  o.max_batch = 3;
  o.poison_activations = true;
  o.row_tile = limits;
  std::unique_ptr<Session> s;
  Status st = Session::create(std::move(m), o, &s);
  REQUIRE_MESSAGE(st.ok(), st.message());
  return s;
}

}  // namespace

TEST_CASE("row tiles: DeiT logits bit-identical to the untiled run") {
  const auto model = fashion_deit();
  RowTileLimits off;
  off.min_inside_bytes = UINT64_MAX;
  for (const char* backend : {"ref", "cpu"})
    for (int threads : {1, 2})
      for (uint64_t block_bytes : {uint64_t{1}, uint64_t{64} << 10, uint64_t{100} << 10}) {
        CAPTURE(backend);
        CAPTURE(threads);
        CAPTURE(block_bytes);
        RowTileLimits forced;
        forced.min_inside_bytes = 1;
        forced.block_bytes = block_bytes;
        auto tiled = deit_session(model, backend, threads, forced);
        auto plain = deit_session(model, backend, threads, off);
        REQUIRE(tiled->row_tiles().size() >= 6);  // one chain or more per block of the depth-6 DeiT
        REQUIRE(plain->row_tiles().empty());
        CHECK(tiled->row_tiles()[0].block_rows >= 16);
        const std::vector<float> x =
            test::pseudo_random(static_cast<size_t>(tiled->input_shape(3).numel()), 3, 1.0f);
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
