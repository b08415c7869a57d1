// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The writer and the loader agree: every field survives a round trip, weights land 64-byte aligned.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "format_version.h"
#include "loader/model_loader.h"
#include "model_writer.h"
#include "test_graphs.h"

using namespace vitrt;

namespace {

// Loads bytes through an aligned copy (the in-memory loader requires 64-byte alignment).
struct AlignedCopy {
  explicit AlignedCopy(const std::vector<uint8_t>& b) : size(b.size()) {
    data = static_cast<uint8_t*>(std::aligned_alloc(64, (b.size() + 63) / 64 * 64));
    std::memcpy(data, b.data(), b.size());
  }
  ~AlignedCopy() { std::free(data); }
  uint8_t* data;
  size_t size;
};

void check_same(const Graph& a, const Graph& b) {
  REQUIRE(a.tensors.size() == b.tensors.size());
  REQUIRE(a.nodes.size() == b.nodes.size());
  CHECK(a.inputs == b.inputs);
  CHECK(a.outputs == b.outputs);
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    const Tensor& x = a.tensors[i];
    const Tensor& y = b.tensors[i];
    CHECK(x.name == y.name);
    CHECK(x.shape == y.shape);
    CHECK(x.dtype == y.dtype);
    REQUIRE(x.is_constant == y.is_constant);
    if (x.is_constant) {
      REQUIRE(x.constant.size == y.constant.size);
      CHECK(std::memcmp(x.constant.data, y.constant.data, x.constant.size) == 0);
      CHECK(reinterpret_cast<uintptr_t>(y.constant.data) % kDataAlignment == 0);
    }
  }
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    CHECK(a.nodes[i].type == b.nodes[i].type);
    CHECK(a.nodes[i].name == b.nodes[i].name);
    CHECK(a.nodes[i].inputs == b.nodes[i].inputs);
    CHECK(a.nodes[i].outputs == b.nodes[i].outputs);
    CHECK(a.nodes[i].attrs.index() == b.nodes[i].attrs.index());
  }
  const auto& ca = std::get<Conv2dAttrs>(a.nodes[0].attrs);
  const auto& cb = std::get<Conv2dAttrs>(b.nodes[0].attrs);
  CHECK(ca.stride_h == cb.stride_h);
  CHECK(std::get<SoftmaxAttentionAttrs>(b.nodes[6].attrs).num_heads == 2);
  CHECK(std::get<SoftmaxAttentionAttrs>(b.nodes[6].attrs).inputs == AttentionInputs::kQkvPacked);
  CHECK(std::get<ReshapeAttrs>(b.nodes[1].attrs).shape == std::vector<int64_t>{0, 0, -1});
  CHECK(b.metadata.labels == a.metadata.labels);
  CHECK(b.metadata.arch == "tiny");
  CHECK(b.metadata.preprocess.resize_shorter == 9);
  CHECK(b.metadata.preprocess.mean == a.metadata.preprocess.mean);
  CHECK(b.metadata.extra.at("note") == "hello");
}

}  // namespace

TEST_CASE("format: a graph survives write -> load in memory and on disk") {
  const Graph g = test::tiny_classifier();
  std::vector<uint8_t> bytes;
  REQUIRE(write_model_memory(g, &bytes).ok());
  CHECK(std::memcmp(bytes.data() + 8, kFileIdentifier, 4) == 0);
  AlignedCopy copy(bytes);
  std::shared_ptr<const Model> m;
  Status st = load_model_from_memory(copy.data, copy.size, &m);
  REQUIRE_MESSAGE(st.ok(), st.message());
  CHECK(m->format_version == kFormatVersion);
  check_same(g, m->graph);

  const std::string path = "format_roundtrip_test.vitrt";
  REQUIRE(write_model_file(g, path).ok());
  std::shared_ptr<const Model> f;
  st = load_model(path, &f);
  REQUIRE_MESSAGE(st.ok(), st.message());
  check_same(g, f->graph);
  std::remove(path.c_str());
}

TEST_CASE("format: writing is deterministic and the data section starts aligned") {
  const Graph g = test::tiny_classifier();
  std::vector<uint8_t> a, b;
  REQUIRE(write_model_memory(g, &a).ok());
  REQUIRE(write_model_memory(g, &b).ok());
  CHECK(a == b);
  uint32_t fb_len;
  std::memcpy(&fb_len, a.data(), 4);
  CHECK(4 + fb_len <= a.size());
}

TEST_CASE("format: the writer refuses a constant whose bytes do not match its shape") {
  Graph g = test::tiny_classifier();
  for (Tensor& t : g.tensors)
    if (t.is_constant) {
      t.constant.size -= 4;
      break;
    }
  std::vector<uint8_t> bytes;
  Status st = write_model_memory(g, &bytes);
  CHECK_FALSE(st.ok());
  CHECK(st.message().find("does not match its shape") != std::string::npos);
}

TEST_CASE("format: a failed file write leaves nothing behind") {
  const Graph g = test::tiny_classifier();
  Status st = write_model_file(g, "/nonexistent-dir/x.vitrt");
  CHECK_FALSE(st.ok());
  CHECK(st.code() == StatusCode::kIo);
}

TEST_CASE(
    "format: SoftmaxAttention's scale_on_q survives as op version 2; a version-1 node with it is refused") {
  Graph g = test::tiny_classifier();
  Node& attn = g.nodes[6];
  REQUIRE(attn.type == OpType::kSoftmaxAttention);
  std::get<SoftmaxAttentionAttrs>(attn.attrs).scale_on_q = true;
  attn.version = 2;
  std::vector<uint8_t> bytes;
  REQUIRE(write_model_memory(g, &bytes).ok());
  AlignedCopy copy(bytes);
  std::shared_ptr<const Model> m;
  Status st = load_model_from_memory(copy.data, copy.size, &m);
  REQUIRE_MESSAGE(st.ok(), st.message());
  CHECK(std::get<SoftmaxAttentionAttrs>(m->graph.nodes[6].attrs).scale_on_q);
  CHECK(m->graph.nodes[6].version == 2);
  // Written as version 1 (what an older reader would take for scale·(q·kᵀ)): refused, naming the op.
  attn.version = 1;
  bytes.clear();
  REQUIRE(write_model_memory(g, &bytes).ok());
  AlignedCopy old(bytes);
  st = load_model_from_memory(old.data, old.size, &m);
  REQUIRE_FALSE(st.ok());
  CHECK_MESSAGE(st.message().find("scale_on_q needs op version 2") != std::string::npos, st.message());
}

TEST_CASE(
    "format: SoftmaxAttention's cosine form survives as op version 3; a version-2 node with it is refused") {
  Graph g = test::tiny_classifier();
  Node& attn = g.nodes[6];
  REQUIRE(attn.type == OpType::kSoftmaxAttention);
  auto& a = std::get<SoftmaxAttentionAttrs>(attn.attrs);
  REQUIRE(a.num_heads == 2);
  a.qk_norm = true;
  a.qk_norm_eps = 0.25f;
  a.head_scales = {12.5f, 3.25f};
  a.scale = 1.0f;
  attn.version = 3;
  std::vector<uint8_t> bytes;
  REQUIRE(write_model_memory(g, &bytes).ok());
  AlignedCopy copy(bytes);
  std::shared_ptr<const Model> m;
  Status st = load_model_from_memory(copy.data, copy.size, &m);
  REQUIRE_MESSAGE(st.ok(), st.message());
  const auto& got = std::get<SoftmaxAttentionAttrs>(m->graph.nodes[6].attrs);
  CHECK(got.qk_norm);
  CHECK(got.qk_norm_eps == 0.25f);
  CHECK(got.head_scales == std::vector<float>{12.5f, 3.25f});
  CHECK(m->graph.nodes[6].version == 3);
  // A head_scales of the wrong length: refused at load, naming the op and the count.
  a.head_scales = {1.0f, 2.0f, 3.0f};
  bytes.clear();
  REQUIRE(write_model_memory(g, &bytes).ok());
  AlignedCopy wrong(bytes);
  st = load_model_from_memory(wrong.data, wrong.size, &m);
  REQUIRE_FALSE(st.ok());
  CHECK_MESSAGE(st.message().find("head_scales must hold num_heads (2) values, got 3") != std::string::npos,
                st.message());
  // Written as version 2 (an older reader would run plain attention): refused.
  a.head_scales = {12.5f, 3.25f};
  attn.version = 2;
  bytes.clear();
  REQUIRE(write_model_memory(g, &bytes).ok());
  AlignedCopy old(bytes);
  st = load_model_from_memory(old.data, old.size, &m);
  REQUIRE_FALSE(st.ok());
  CHECK_MESSAGE(st.message().find("qk_norm and head_scales need op version 3") != std::string::npos,
                st.message());
}
