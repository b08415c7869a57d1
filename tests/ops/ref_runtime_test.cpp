// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The reference backend's run-time contract: bad shapes and operands give a Status (never a crash), weights
// that are not constants work, every op is supported. (Speed is measured in bench/, not here.)
#include <doctest/doctest.h>

#include <random>

#include "op_test_util.h"

namespace vitrt {
namespace test {
namespace {

HostTensor random_tensor(const Shape& s, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  HostTensor t;
  t.shape = s;
  t.data.resize(static_cast<size_t>(s.numel()));
  for (float& v : t.data) v = dist(rng);
  return t;
}

TEST_CASE("ref backend supports every op at every version the core knows, and no other") {
  auto backend = create_reference_backend();
  CHECK(std::string(backend->name()) == "ref");
  for (int32_t i = 0; i < kNumOpTypes; ++i) {
    Node n;
    n.type = static_cast<OpType>(i);
    const int32_t max_version = find_op_schema(n.type)->max_version;
    // Slice 2: the step; SoftmaxAttention 2: scale_on_q, 3: cosine attention (docs/format.md).
    CHECK(max_version == (n.type == OpType::kSlice ? 2 : n.type == OpType::kSoftmaxAttention ? 3 : 1));
    for (n.version = 1; n.version <= max_version; ++n.version) CHECK(backend->supports(n));
    CHECK_FALSE(backend->supports(n));
    n.version = 0;
    CHECK_FALSE(backend->supports(n));
  }
}

TEST_CASE("wrong-shaped inputs at run give a runtime error naming the op") {
  auto backend = create_reference_backend();
  SUBCASE("Linear with the wrong number of input features") {
    HostTensor x = random_tensor({2, 5, 8}, 1), w = random_tensor({3, 8}, 2), b = random_tensor({3}, 3);
    OpRunner r;
    REQUIRE(r.plan(*backend, OpType::kLinear, LinearAttrs{}, {&x, &w, &b}, {false, true, true}, "fc").ok());
    HostTensor bad = random_tensor({2, 5, 9}, 4);
    Status s = r.run({&bad, &w, &b}, nullptr);
    CHECK(s.code() == StatusCode::kRuntime);
    CHECK(s.message().find("Linear 'fc'") != std::string::npos);
  }
  SUBCASE("Conv2d with the wrong number of channels") {
    HostTensor x = random_tensor({2, 3, 8, 8}, 1), w = random_tensor({4, 3, 3, 3}, 2);
    OpRunner r;
    REQUIRE(r.plan(*backend, OpType::kConv2d, Conv2dAttrs{}, {&x, &w}, {false, true}, "conv").ok());
    HostTensor bad = random_tensor({2, 4, 8, 8}, 3);
    CHECK(r.run({&bad, &w}, nullptr).code() == StatusCode::kRuntime);
    HostTensor rank3 = random_tensor({2, 3, 8}, 3);
    CHECK(r.run({&rank3, &w}, nullptr).code() == StatusCode::kRuntime);
  }
  SUBCASE("Conv2d with a larger image than planned does not overrun its workspace") {
    HostTensor x = random_tensor({1, 3, 8, 8}, 1), w = random_tensor({4, 3, 3, 3}, 2);
    OpRunner r;
    REQUIRE(r.plan(*backend, OpType::kConv2d, Conv2dAttrs{}, {&x, &w}, {false, true}, "conv").ok());
    HostTensor big = random_tensor({1, 3, 16, 16}, 3);
    CHECK(r.run({&big, &w}, nullptr).code() == StatusCode::kRuntime);
  }
  SUBCASE("SoftmaxAttention: packed width not 3C, or more keys than planned") {
    SoftmaxAttentionAttrs a;
    a.num_heads = 2;
    a.inputs = AttentionInputs::kQkvPacked;
    HostTensor qkv = random_tensor({2, 5, 24}, 1);
    OpRunner r;
    REQUIRE(r.plan(*backend, OpType::kSoftmaxAttention, a, {&qkv}, {false}, "attn").ok());
    HostTensor bad = random_tensor({2, 5, 25}, 2);
    CHECK(r.run({&bad}, nullptr).code() == StatusCode::kRuntime);
    HostTensor longer = random_tensor({2, 9, 24}, 3);  // Nk beyond the planned workspace
    Status s = r.run({&longer}, nullptr);
    CHECK(s.code() == StatusCode::kRuntime);
    CHECK(s.message().find("workspace") != std::string::npos);
  }
  SUBCASE("Add with shapes that do not broadcast") {
    HostTensor a = random_tensor({2, 3, 4}, 1), b = random_tensor({4}, 2);
    OpRunner r;
    REQUIRE(r.plan(*backend, OpType::kAdd, NoAttrs{}, {&a, &b}, {false, false}, "add").ok());
    HostTensor bad = random_tensor({5}, 3);
    CHECK(r.run({&a, &bad}, nullptr).code() == StatusCode::kRuntime);
  }
  SUBCASE("Reshape whose element count changed") {
    HostTensor x = random_tensor({2, 6}, 1);
    OpRunner r;
    REQUIRE(r.plan(*backend, OpType::kReshape, ReshapeAttrs{{2, 3, 2}}, {&x}, {false}, "rs").ok());
    HostTensor bad = random_tensor({2, 7}, 2);
    CHECK(r.run({&bad}, nullptr).code() == StatusCode::kRuntime);
  }
  SUBCASE("missing data or workspace") {
    SoftmaxAttentionAttrs a;
    HostTensor q = random_tensor({1, 4, 8}, 1);
    OpRunner r;
    REQUIRE(r.plan(*backend, OpType::kSoftmaxAttention, a, {&q, &q, &q}, {false, false, false}, "attn").ok());
    REQUIRE(r.info().workspace_bytes > 0);
    std::vector<float> out(32);
    TensorRef tq{q.data.data(), q.shape};
    TensorRef tnull{nullptr, q.shape};
    TensorRef dst{out.data(), q.shape};
    KernelArgs args;
    args.num_src = 3;
    args.src[0] = &tq;
    args.src[1] = &tnull;
    args.src[2] = &tq;
    args.num_dst = 1;
    args.dst[0] = &dst;
    CHECK(r.kernel()->run(args).code() == StatusCode::kRuntime);  // null input data
    args.src[1] = &tq;
    CHECK(r.kernel()->run(args).code() == StatusCode::kRuntime);  // no workspace
    args.num_dst = 0;
    CHECK(r.kernel()->run(args).code() == StatusCode::kRuntime);  // no output
  }
}

TEST_CASE("plan-time errors are Statuses") {
  auto backend = create_reference_backend();
  HostTensor x = random_tensor({2, 5, 8}, 1), w = random_tensor({3, 7}, 2);
  OpRunner r;
  CHECK_FALSE(r.plan(*backend, OpType::kLinear, LinearAttrs{}, {&x, &w}, {false, true}).ok());
  // Attributes of the wrong kind for the op.
  Graph g;
  const int32_t in = g.add_activation("x", Shape{2, 3});
  const int32_t out = g.add_activation("y", Shape{2, 3});
  g.add_node(OpType::kGelu, SoftmaxAttrs{}, {in}, {out}, "gelu");
  KernelPlan plan;
  plan.node = &g.nodes[0];
  plan.graph = &g;
  plan.num_src = 1;
  plan.src_tensors[0] = &g.tensors[in];
  plan.src_shapes[0] = Shape{2, 3};
  plan.num_dst = 1;
  plan.dst_shapes[0] = Shape{2, 3};
  std::unique_ptr<Kernel> k;
  KernelInfo info;
  CHECK_FALSE(backend->create_kernel(plan, &k, &info).ok());
}

// Reference: out[m, n] = Σ_k x[m, k] w[n, k] + b[n] in double.
std::vector<double> naive_linear(const HostTensor& x, const HostTensor& w, const HostTensor& b) {
  const int64_t n = w.shape[0], k = w.shape[1], m = x.shape.numel() / k;
  std::vector<double> y(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = b.data[j];
      for (int64_t t = 0; t < k; ++t) s += static_cast<double>(x.data[i * k + t]) * w.data[j * k + t];
      y[i * n + j] = s;
    }
  return y;
}

TEST_CASE("Linear and Conv2d with weights that are not constants") {
  auto backend = create_reference_backend();
  HostTensor x = random_tensor({3, 7, 13}, 1), w = random_tensor({5, 13}, 2), b = random_tensor({5}, 3);
  OpRunner packed, dynamic;
  REQUIRE(packed.plan(*backend, OpType::kLinear, LinearAttrs{}, {&x, &w, &b}, {false, true, true}).ok());
  REQUIRE(dynamic.plan(*backend, OpType::kLinear, LinearAttrs{}, {&x, &w, &b}, {false, false, false}).ok());
  CHECK(packed.info().workspace_bytes == 0);
  CHECK(dynamic.info().workspace_bytes >= 5 * 13 * sizeof(float));
  HostTensor y1, y2;
  REQUIRE(packed.run({&x, &w, &b}, &y1).ok());
  REQUIRE(dynamic.run({&x, &w, &b}, &y2).ok());
  CHECK(y1.data == y2.data);
  const std::vector<double> ref = naive_linear(x, w, b);
  for (size_t i = 0; i < ref.size(); ++i) CHECK(std::fabs(y1.data[i] - ref[i]) < 1e-5);

  HostTensor img = random_tensor({2, 4, 6, 6}, 4), cw = random_tensor({6, 2, 3, 3}, 5);
  Conv2dAttrs ca;
  ca.groups = 2;
  ca.pad_h = ca.pad_w = 1;
  OpRunner c1, c2;
  REQUIRE(c1.plan(*backend, OpType::kConv2d, ca, {&img, &cw}, {false, true}).ok());
  REQUIRE(c2.plan(*backend, OpType::kConv2d, ca, {&img, &cw}, {false, false}).ok());
  HostTensor o1, o2;
  REQUIRE(c1.run({&img, &cw}, &o1).ok());
  REQUIRE(c2.run({&img, &cw}, &o2).ok());
  CHECK(o1.data == o2.data);
}

}  // namespace
}  // namespace test
}  // namespace vitrt
