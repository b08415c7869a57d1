// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Session: batches inside the planned maximum, arena reuse vs no reuse, poisoning, no allocation in run().
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>

#include "loader/model_loader.h"
#include "model_writer.h"
#include "runtime/session.h"
#include "test_graphs.h"

using namespace vitrt;

// Counts every C++ heap allocation in this test binary.
static std::atomic<long> g_allocations{0};
void* operator new(size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }

namespace {

std::shared_ptr<const Model> tiny_model() {
  static std::vector<uint8_t> bytes;
  static uint8_t* aligned = nullptr;
  if (!aligned) {
    REQUIRE(write_model_memory(test::tiny_classifier(), &bytes).ok());
    aligned = static_cast<uint8_t*>(std::aligned_alloc(64, (bytes.size() + 63) / 64 * 64));
    std::memcpy(aligned, bytes.data(), bytes.size());
  }
  std::shared_ptr<const Model> m;
  Status st = load_model_from_memory(aligned, bytes.size(), &m);
  REQUIRE_MESSAGE(st.ok(), st.message());
  return m;
}

std::unique_ptr<Session> make_session(int64_t max_batch, bool preserve = false, bool poison = true) {
  SessionOptions o;
  o.backend = "ref";
  o.max_batch = max_batch;
  o.preserve_intermediates = preserve;
  o.poison_activations = poison;
  std::unique_ptr<Session> s;
  Status st = Session::create(tiny_model(), o, &s);
  REQUIRE_MESSAGE(st.ok(), st.message());
  return s;
}

}  // namespace

TEST_CASE("session: every batch up to the planned maximum equals the images run one by one") {
  auto one = make_session(1);
  auto many = make_session(4);
  const auto x = test::pseudo_random(4 * 3 * 8 * 8, 99, 2.0f);
  std::vector<float> single(4 * 5), batched(4 * 5);
  for (int i = 0; i < 4; ++i) REQUIRE(one->run(x.data() + i * 192, 1, single.data() + i * 5, 5).ok());
  for (int b : {4, 1, 3, 2, 4}) {
    std::fill(batched.begin(), batched.end(), NAN);
    Status st = many->run(x.data(), b, batched.data(), batched.size());
    REQUIRE_MESSAGE(st.ok(), st.message());
    for (int i = 0; i < b * 5; ++i) CHECK(batched[i] == doctest::Approx(single[i]).epsilon(1e-6));
  }
  for (float v : single) CHECK(std::isfinite(v));
}

TEST_CASE("session: arena reuse gives the same logits as keeping every intermediate") {
  auto reuse = make_session(2);
  auto keep = make_session(2, true);
  CHECK(keep->memory().activation_bytes > reuse->memory().activation_bytes);
  CHECK(reuse->memory().activation_bytes >= reuse->memory().activation_lower_bound);
  const auto x = test::pseudo_random(2 * 192, 5, 1.0f);
  std::vector<float> a(10), b(10);
  REQUIRE(reuse->run(x.data(), 2, a.data(), a.size()).ok());
  REQUIRE(keep->run(x.data(), 2, b.data(), b.size()).ok());
  CHECK(a == b);
  // With preserve_intermediates every tensor is still there after the run.
  const Graph& g = keep->model().graph;
  for (size_t i = 0; i < g.tensors.size(); ++i)
    if (keep->placements()[i].arena == ArenaKind::kActivations) {
      const float* p = keep->tensor_data(static_cast<int32_t>(i));
      for (int64_t k = 0; k < keep->tensor_shape(static_cast<int32_t>(i)).numel(); ++k)
        REQUIRE_MESSAGE(std::isfinite(p[k]), "tensor " << g.tensors[i].name << " has unwritten elements");
    }
}

TEST_CASE("session: run() performs no heap allocation") {
  auto s = make_session(3, false, false);
  const auto x = test::pseudo_random(3 * 192, 8, 1.0f);
  std::vector<float> y(15);
  REQUIRE(s->run(x.data(), 3, y.data(), y.size()).ok());  // warm: first run at this batch
  const long before = g_allocations.load();
  for (int i = 0; i < 10; ++i) REQUIRE(s->run(x.data(), 3, y.data(), y.size()).ok());
  CHECK(g_allocations.load() == before);
}

TEST_CASE("session: bad arguments are statuses, not crashes") {
  auto s = make_session(2);
  const auto x = test::pseudo_random(3 * 192, 8, 1.0f);
  std::vector<float> y(15);
  CHECK(s->run(x.data(), 3, y.data(), y.size()).code() == StatusCode::kBadInput);
  CHECK(s->run(x.data(), 0, y.data(), y.size()).code() == StatusCode::kBadInput);
  CHECK(s->run(nullptr, 1, y.data(), y.size()).code() == StatusCode::kInvalidArgument);
  CHECK(s->run(x.data(), 2, y.data(), 9).code() == StatusCode::kInvalidArgument);
  SessionOptions o;
  o.max_batch = 0;
  std::unique_ptr<Session> bad;
  CHECK(Session::create(tiny_model(), o, &bad).code() == StatusCode::kInvalidArgument);
  o.max_batch = 1;
  o.backend = "tpu";
  CHECK(Session::create(tiny_model(), o, &bad).code() == StatusCode::kInvalidArgument);
}
