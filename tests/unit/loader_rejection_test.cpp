// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The loader rejects every corrupt, truncated or inconsistent file with a Status naming the problem, and
// never crashes (run under ASan/valgrind to see the "never reads out of bounds" half).
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>

#include "file_checksum.h"
#include "loader/model_loader.h"
#include "model_bytes.h"
#include "model_writer.h"
#include "test_graphs.h"
#include "vitrt_generated.h"

using namespace vitrt;

namespace {

Status load_bytes(const std::vector<uint8_t>& b) {
  return test::load_model_bytes(b);
}

std::vector<uint8_t> good_bytes() {
  std::vector<uint8_t> b;
  REQUIRE(write_model_memory(test::tiny_classifier(), &b).ok());
  return b;
}

std::vector<uint8_t> edited(const std::function<void(fb::Model*)>& edit) {
  return test::edited_model_bytes(good_bytes(), edit);
}

void expect_error(const std::vector<uint8_t>& b, const char* fragment) {
  Status st = load_bytes(b);
  CHECK_FALSE(st.ok());
  CHECK_MESSAGE(st.message().find(fragment) != std::string::npos, "message: " << st.message());
}

}  // namespace

TEST_CASE("loader: the unmodified file loads") {
  CHECK(load_bytes(good_bytes()).ok());
}

TEST_CASE("loader: every truncation is rejected") {
  const std::vector<uint8_t> b = good_bytes();
  for (size_t len = 0; len < b.size(); ++len) {
    std::vector<uint8_t> t(b.begin(), b.begin() + len);
    Status st = load_bytes(t);
    CHECK_MESSAGE(!st.ok(), "a file truncated to " << len << " bytes loaded");
    CHECK(!st.message().empty());
  }
}

TEST_CASE("loader: every single-bit flip is rejected") {
  const std::vector<uint8_t> b = good_bytes();
  std::mt19937 rng(7);
  // All bits of the header, and a sample of the data section.
  uint32_t fb_len;
  std::memcpy(&fb_len, b.data(), 4);
  std::vector<size_t> bits;
  for (size_t i = 0; i < (4 + static_cast<size_t>(fb_len)) * 8; ++i) bits.push_back(i);
  for (int i = 0; i < 2000; ++i) bits.push_back(rng() % (b.size() * 8));
  for (size_t bit : bits) {
    std::vector<uint8_t> c = b;
    c[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    Status st = load_bytes(c);
    CHECK_MESSAGE(!st.ok(), "flipping bit " << bit << " went unnoticed");
  }
}

TEST_CASE("loader: random garbage and wrong identifiers are rejected with a clear message") {
  expect_error({}, "too small");
  std::vector<uint8_t> g(4096);
  std::mt19937 rng(3);
  for (auto& x : g) x = static_cast<uint8_t>(rng());
  expect_error(g, "not a vitrt model");
  std::vector<uint8_t> b = good_bytes();
  std::memcpy(b.data() + 8, "TFL3", 4);
  expect_error(b, "file identifier is 'TFL3'");
}

TEST_CASE("loader: semantic checks name what is wrong") {
  expect_error(edited([](fb::Model* m) { m->mutate_format_version(99); }), "format version 99");
  expect_error(edited([](fb::Model* m) {
                 auto* bufs = m->mutable_buffers();
                 const_cast<fb::Buffer*>(bufs->Get(1))->mutate_offset(bufs->Get(1)->offset() + 4);
               }),
               "aligned");
  expect_error(edited([](fb::Model* m) {
                 auto* bufs = m->mutable_buffers();
                 const_cast<fb::Buffer*>(bufs->Get(2))->mutate_size(1ull << 40);
               }),
               "beyond the end of the file");
  expect_error(edited([](fb::Model* m) {
                 auto* bufs = m->mutable_buffers();
                 const_cast<fb::Buffer*>(bufs->Get(1))->mutate_size(bufs->Get(1)->size() - 4);
               }),
               "needs");
  expect_error(edited([](fb::Model* m) {
                 m->mutable_graph()->mutable_tensors()->GetMutableObject(1)->mutate_buffer(9999);
               }),
               "buffer index 9999 out of range");
  expect_error(
      edited([](fb::Model* m) { m->mutable_operator_codes()->GetMutableObject(0)->mutate_version(7); }),
      "version 7");
  expect_error(
      edited([](fb::Model* m) {
        m->mutable_operator_codes()->GetMutableObject(0)->mutate_builtin(static_cast<fb::BuiltinOp>(999));
      }),
      "unknown op 999");
  expect_error(edited([](fb::Model* m) {
                 m->mutable_graph()->mutable_operators()->GetMutableObject(0)->mutable_inputs()->Mutate(
                     0, 12345);
               }),
               "out of range");
  expect_error(edited([](fb::Model* m) {
                 m->mutable_graph()->mutable_operators()->GetMutableObject(1)->mutable_inputs()->Mutate(
                     0, static_cast<int32_t>(m->graph()->tensors()->size() - 2));
               }),
               "before any op writes it");
  expect_error(edited([](fb::Model* m) {
                 auto* shape = m->mutable_graph()->mutable_tensors()->GetMutableObject(1)->mutable_shape();
                 shape->Mutate(0, -5);
               }),
               "invalid dimension");
  expect_error(edited([](fb::Model* m) {
                 auto* shape = m->mutable_graph()->mutable_tensors()->GetMutableObject(2)->mutable_shape();
                 shape->Mutate(0, 16);  // conv weight [8,3,4,4] -> [16,3,4,4]: bytes no longer match
               }),
               "needs");
  expect_error(edited([](fb::Model* m) { m->mutable_preprocess()->mutate_channels(2); }), "channels");
}

TEST_CASE("loader: a missing file and a directory give i/o errors naming the path") {
  std::shared_ptr<const Model> m;
  Status st = load_model("/nonexistent/model.vitrt", &m);
  CHECK(st.code() == StatusCode::kIo);
  CHECK(st.message().find("/nonexistent/model.vitrt") != std::string::npos);
  st = load_model("/tmp", &m);
  CHECK_FALSE(st.ok());
}
