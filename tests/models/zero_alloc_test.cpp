// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// No allocation on the hot path: after Session::create, run() calls no malloc, calloc, realloc, aligned
// allocation or operator new, on every backend of this machine, for the shipped SOFT, LaViT and DeiT models
// (every fused op family: LinearAttention, ReusedAttention, AttentionResidual, SoftmaxAttention, Linear,
// Conv2d through the packed GEMM, channels-last depthwise conv), at 1 and 2 threads and at a smaller batch
// than planned; on the cpu backend also at session precision bf16.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "alloc_counter.h"
#include "arch/arch.h"
#include "checkpoint/checkpoint.h"
#include "loader/model_loader.h"
#include "model_writer.h"
#include "runtime/session.h"

using namespace vitrt;

// Every allocation in this binary is counted while g_counting is set (tests/alloc_counter.h).
using vitrt::test::g_allocations;
using vitrt::test::g_counting;

namespace {

std::shared_ptr<const Model> shipped(const std::string& name) {
  const char* src = std::getenv("VITRT_SOURCE_DIR");
  REQUIRE_MESSAGE(src, "VITRT_SOURCE_DIR is not set");
  const std::string dir = std::string(src) + "/models/" + name;
  convert::Checkpoint ck;
  Status st = convert::load_checkpoint(dir + "/" + name + ".pth", &ck);
  REQUIRE_MESSAGE(st.ok(), st.message());
  Graph g;
  std::string log;
  st = convert::convert_checkpoint(ck, convert::ConvertOptions{}, &g, &log);
  REQUIRE_MESSAGE(st.ok(), st.message());
  const std::string path = "zero_alloc_" + name + ".vitrt";
  REQUIRE(write_model_file(g, path).ok());
  std::shared_ptr<const Model> m;
  st = load_model(path, &m);
  std::remove(path.c_str());
  REQUIRE_MESSAGE(st.ok(), st.message());
  return m;
}

}  // namespace

TEST_CASE("Session::run allocates nothing on any backend (shipped models)") {
  for (const char* name : {"fashion_soft", "fashion_lavit", "fashion_deit"}) {
    const auto model = shipped(name);
    // "cpu bf16": session precision bf16 (the bf16 GEMM and attention where the CPU has AVX512-BF16).
    for (const char* backend : {"ref", "cpu", "cpu bf16"}) {
      for (int threads : {1, 2}) {
        CAPTURE(name);
        CAPTURE(backend);
        CAPTURE(threads);
        SessionOptions o;
        const bool bf16 = std::string(backend) == "cpu bf16";
        o.backend = bf16 ? "cpu" : backend;
        o.precision = bf16 ? Precision::kBf16 : Precision::kFp32;
        o.num_threads = threads;
        o.max_batch = 3;
        std::unique_ptr<Session> s;
        Status st = Session::create(model, o, &s);
        REQUIRE_MESSAGE(st.ok(), st.message());
        const Shape in = s->input_shape(3);
        std::vector<float> x(static_cast<size_t>(in.numel()), 0.25f),
            y(static_cast<size_t>(s->output_shape(3).numel()));
        for (int64_t b : {3, 1, 2, 3})
          REQUIRE(s->run(x.data(), b, y.data(), y.size()).ok());  // warm: every batch bound once
        g_allocations = 0;
        g_counting = true;
        for (int r = 0; r < 4; ++r)
          for (int64_t b : {3, 1, 2}) {
            st = s->run(x.data(), b, y.data(), y.size());
            if (!st.ok()) break;
          }
        g_counting = false;
        REQUIRE_MESSAGE(st.ok(), st.message());
        CHECK(g_allocations.load() == 0);
      }
    }
  }
}

// Row tiles (runtime/row_tile.h) forced onto the DeiT's row-wise chains: 16-row blocks of 17-token images,
// blocks crossing image boundaries at batches 2 and 3, with inside tensors at one block's rows.
TEST_CASE("Session::run allocates nothing with row tiles") {
  const auto model = shipped("fashion_deit");
  for (const char* backend : {"ref", "cpu"}) {
    for (int threads : {1, 2}) {
      CAPTURE(backend);
      CAPTURE(threads);
      SessionOptions o;
      o.backend = backend;
      o.num_threads = threads;
      o.max_batch = 3;
      o.row_tile.min_inside_bytes = 1;
      o.row_tile.block_bytes = 1;
      std::unique_ptr<Session> s;
      Status st = Session::create(model, o, &s);
      REQUIRE_MESSAGE(st.ok(), st.message());
      REQUIRE(!s->row_tiles().empty());
      const Shape in = s->input_shape(3);
      std::vector<float> x(static_cast<size_t>(in.numel()), 0.25f),
          y(static_cast<size_t>(s->output_shape(3).numel()));
      for (int64_t b : {3, 1, 2, 3}) REQUIRE(s->run(x.data(), b, y.data(), y.size()).ok());
      g_allocations = 0;
      g_counting = true;
      for (int r = 0; r < 4; ++r)
        for (int64_t b : {3, 1, 2}) {
          st = s->run(x.data(), b, y.data(), y.size());
          if (!st.ok()) break;
        }
      g_counting = false;
      REQUIRE_MESSAGE(st.ok(), st.message());
      CHECK(g_allocations.load() == 0);
    }
  }
}
