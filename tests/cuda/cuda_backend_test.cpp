// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The CUDA backend. Everywhere: create_cuda_backend fails cleanly without a GPU, and the host-side planning
// (supported ops, cuBLAS arguments of Linear, broadcast plans, and the attention layout its kernel indexes
// by) is checked against host emulations and the reference backend. With a GPU: every PyTorch op case of a
// supported op runs on the "cuda" backend (poisoned outputs, full and smaller batch, twice) and is compared
// with the float64 expectation and with the reference backend; every other op must be refused with a clear
// "not supported" Status.
#include "backends/cuda/cuda_backend.h"

#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <fstream>
#include <random>

#include "backends/cuda/host_plan.h"
#include "ops/op_cases.h"
#include "ops/softmax_attention_layout.h"

namespace vitrt {
namespace test {
namespace {

bool have_cases() {
  const std::string dir = op_cases_dir();
  return !dir.empty() && std::ifstream(dir + "/manifest.json").good();
}

const std::vector<OpCase>& all_cases() {
  static std::vector<OpCase> cases;
  static bool loaded = false;
  if (!loaded) {
    loaded = true;
    Status s = load_op_cases(op_cases_dir(), &cases);
    REQUIRE_MESSAGE(s.ok(), s.message());
    REQUIRE(!cases.empty());
  }
  return cases;
}

HostTensor first_item(const HostTensor& t) {
  HostTensor r;
  r.shape = t.shape;
  r.shape[0] = 1;
  r.data.assign(t.data.begin(), t.data.begin() + r.shape.numel());
  return r;
}

Node make_node(OpType type, OpAttrs attrs, int num_inputs, int num_outputs = 1) {
  Node n;
  n.type = type;
  n.attrs = std::move(attrs);
  for (int i = 0; i < num_inputs; ++i) n.inputs.push_back(i);
  for (int o = 0; o < num_outputs; ++o) n.outputs.push_back(100 + o);
  return n;
}

// What this step of the CUDA backend implements: single-output Linear, LayerNorm, Gelu, Add, Mul, and
// SoftmaxAttention without a score bias.
bool cuda_implements(const OpCase& c) {
  if (c.num_outputs != 1) return false;
  switch (c.type) {
    case OpType::kLinear:  // the residual input (fuse_epilogue's) is declined: no fused residual on CUDA yet
      return c.inputs.size() < 4 || !c.inputs[3].present;
    case OpType::kLayerNorm:
    case OpType::kGelu:
    case OpType::kAdd:
    case OpType::kMul:
      return true;
    case OpType::kSoftmaxAttention: {
      const size_t nb = static_cast<size_t>(
          softmax_attention_layout_inputs(std::get<SoftmaxAttentionAttrs>(c.attrs).inputs));
      for (size_t i = nb; i < c.inputs.size(); ++i)
        if (c.inputs[i].present) return false;
      return true;
    }
    default:
      return false;
  }
}

}  // namespace

TEST_CASE("create_cuda_backend returns nullptr with a reason, or a working backend") {
  Status why;
  std::unique_ptr<Backend> b = create_cuda_backend(0, &why);
  if (!b) {
    CHECK(!why.ok());
    CHECK(why.code() == StatusCode::kUnsupported);
    CHECK_MESSAGE(why.message().rfind("no CUDA device: ", 0) == 0, why.message());
    CHECK(why.message().size() > std::string("no CUDA device: ").size());
    MESSAGE("no CUDA backend here, as expected without a GPU: ", why.message());
  } else {
    CHECK(why.ok());
    CHECK(std::string(b->name()) == "cuda");
    CHECK(b->api_version() == kBackendApiVersion);
  }
  // A null `why` is allowed; a device that does not exist is refused, never a crash.
  std::unique_ptr<Backend> none = create_cuda_backend(1 << 20, nullptr);
  CHECK(!none);
  Status why2;
  CHECK(!create_cuda_backend(-1, &why2));
  CHECK(!why2.ok());
  // Repeated probing stays clean (the sticky/non-sticky error state is reset).
  Status why3;
  std::unique_ptr<Backend> again = create_cuda_backend(0, &why3);
  CHECK(static_cast<bool>(again) == static_cast<bool>(b));
  if (!again) CHECK(why3.message() == why.message());
}

TEST_CASE("cuda_supports_node: the ops of this step, nothing else") {
  using cuda::cuda_supports_node;
  CHECK(cuda_supports_node(make_node(OpType::kLinear, LinearAttrs{Activation::kGeluErf}, 3)));
  CHECK(cuda_supports_node(make_node(OpType::kLayerNorm, LayerNormAttrs{1e-6f}, 3)));
  CHECK(cuda_supports_node(make_node(OpType::kGelu, GeluAttrs{GeluApproximation::kTanh}, 1)));
  CHECK(cuda_supports_node(make_node(OpType::kAdd, NoAttrs{}, 2)));
  CHECK(cuda_supports_node(make_node(OpType::kMul, NoAttrs{}, 2)));
  SoftmaxAttentionAttrs sa;
  sa.num_heads = 3;
  for (AttentionInputs l :
       {AttentionInputs::kSeparate, AttentionInputs::kQkvPacked, AttentionInputs::kQKvPacked}) {
    sa.inputs = l;
    const int nb = softmax_attention_layout_inputs(l);
    CHECK(cuda_supports_node(make_node(OpType::kSoftmaxAttention, sa, nb)));
    Node absent_bias = make_node(OpType::kSoftmaxAttention, sa, nb);
    absent_bias.inputs.push_back(kAbsent);
    CHECK(cuda_supports_node(absent_bias));
    CHECK_FALSE(cuda_supports_node(make_node(OpType::kSoftmaxAttention, sa, nb + 1)));  // score bias
    CHECK_FALSE(cuda_supports_node(make_node(OpType::kSoftmaxAttention, sa, nb, 2)));   // score export
  }
  Node v2 = make_node(OpType::kAdd, NoAttrs{}, 2);
  v2.version = 2;
  CHECK_FALSE(cuda_supports_node(v2));
  CHECK_FALSE(cuda_supports_node(make_node(OpType::kLinear, LayerNormAttrs{}, 3)));  // wrong attributes
  for (OpType t : {OpType::kConv2d,
                   OpType::kBatchNorm2d,
                   OpType::kRelu,
                   OpType::kConcat,
                   OpType::kSlice,
                   OpType::kReshape,
                   OpType::kTranspose,
                   OpType::kReduceMean,
                   OpType::kSoftmax,
                   OpType::kAdaptiveAvgPool2d,
                   OpType::kLinearAttention,
                   OpType::kReusedAttention,
                   OpType::kAttentionResidual,
                   OpType::kConvMlp,
                   OpType::kPool2d,
                   OpType::kReduce,
                   OpType::kLogSoftmax,
                   OpType::kInstanceNorm,
                   OpType::kCompare,
                   OpType::kWhere,
                   OpType::kPad,
                   OpType::kExpand,
                   OpType::kSqueezeExcite,
                   OpType::kFmod,
                   OpType::kMod,
                   OpType::kConvTranspose,
                   OpType::kArgMax,
                   OpType::kTrilu,
                   OpType::kCumSum,
                   OpType::kGatherElements,
                   OpType::kTopK,
                   OpType::kResize,
                   OpType::kExternalAttention,
                   OpType::kPerformerAttention,
                   OpType::kNystromAttention,
                   OpType::kSelectiveKernel,
                   OpType::kScatterND,
                   OpType::kFastformerAttention,
                   OpType::kKernelizedAttention,
                   OpType::kPRelu,
                   OpType::kLrn})
    CHECK_FALSE(cuda_supports_node(make_node(t, NoAttrs{}, 1)));
}

// cublasSgemm's column-major semantics, on the host: C(m x n) = op(A)(m x k) · op(B)(k x n).
void host_sgemm(const cuda::GemmArgs& g, const float* a, const float* b, float* c) {
  for (int i = 0; i < g.m; ++i)
    for (int j = 0; j < g.n; ++j) {
      double s = 0;
      for (int p = 0; p < g.k; ++p) {
        const float av = g.trans_a ? a[p + i * g.lda] : a[i + p * g.lda];
        const float bv = g.trans_b ? b[j + p * g.ldb] : b[p + j * g.ldb];
        s += static_cast<double>(av) * bv;
      }
      c[i + j * g.ldc] = static_cast<float>(s);
    }
}

TEST_CASE("linear_gemm_args: cuBLAS on the PyTorch [N,K] weight gives x·Wᵀ") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  for (auto [m, n, k] : {std::array<int, 3>{1, 1, 1}, {5, 7, 3}, {197, 48, 32}, {3, 1, 9}, {1, 10, 17}}) {
    std::vector<float> x(static_cast<size_t>(m * k)), w(static_cast<size_t>(n * k)),
        y(static_cast<size_t>(m * n));
    for (float& v : x) v = u(rng);
    for (float& v : w) v = u(rng);
    cuda::GemmArgs g;
    REQUIRE(cuda::linear_gemm_args(m, n, k, &g).ok());
    host_sgemm(g, w.data(), x.data(), y.data());
    double err = 0;
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double s = 0;
        for (int p = 0; p < k; ++p) s += static_cast<double>(x[i * k + p]) * w[j * k + p];
        err = std::fmax(err, std::fabs(s - y[i * n + j]));
      }
    CHECK_MESSAGE(err < 1e-5, m, "x", k, " by ", n, ": ", err);
  }
  cuda::GemmArgs g;
  CHECK(cuda::linear_gemm_args(int64_t{1} << 32, 4, 4, &g).code() == StatusCode::kUnsupported);
}

TEST_CASE("plan_broadcast + broadcast_offsets agree with numpy broadcasting") {
  const std::vector<std::array<Shape, 3>> cases = {{Shape{2, 3, 4}, Shape{2, 3, 4}, Shape{2, 3, 4}},
                                                   {Shape{2, 3, 4}, Shape{4}, Shape{2, 3, 4}},
                                                   {Shape{2, 1, 4}, Shape{1, 3, 1}, Shape{2, 3, 4}},
                                                   {Shape{1}, Shape{5, 6}, Shape{5, 6}},
                                                   {Shape{3, 1}, Shape{1, 1, 7}, Shape{1, 3, 7}},
                                                   {Shape{}, Shape{2, 2}, Shape{2, 2}},
                                                   {Shape{2, 197, 1}, Shape{2, 197, 64}, Shape{2, 197, 64}},
                                                   {Shape{1, 1, 1}, Shape{1}, Shape{1, 1, 1}},
                                                   {Shape{4, 1, 5, 1}, Shape{3, 1, 6}, Shape{4, 3, 5, 6}}};
  for (const auto& [a, b, y] : cases) {
    INFO(a.str(), " + ", b.str());
    cuda::BroadcastPlan p;
    REQUIRE(cuda::plan_broadcast(a, b, y, &p).ok());
    CHECK(p.numel == y.numel());
    for (int64_t i = 0; i < y.numel(); ++i) {
      int64_t idx[kMaxRank], r = i;
      for (int d = y.rank - 1; d >= 0; --d) {
        idx[d] = r % y.dims[d];
        r /= y.dims[d];
      }
      auto offset = [&](const Shape& s) {
        int64_t off = 0;
        for (int d = 0; d < s.rank; ++d) {
          const int64_t yi = idx[d + y.rank - s.rank];
          off = off * s.dims[d] + (s.dims[d] == 1 ? 0 : yi);
        }
        return off;
      };
      int64_t oa, ob;
      cuda::broadcast_offsets(p, i, &oa, &ob);
      if (oa != offset(a) || ob != offset(b)) {
        FAIL_CHECK("element ", i, ": got ", oa, ",", ob, " want ", offset(a), ",", offset(b));
        break;
      }
    }
  }
  cuda::BroadcastPlan p;
  CHECK_FALSE(cuda::plan_broadcast(Shape{3}, Shape{4}, Shape{4}, &p).ok());
}

TEST_CASE("cuda_supports_node agrees with the op cases' nodes") {
  if (!have_cases()) {
    MESSAGE("SKIPPED: VITRT_FIXTURE_DIR/op_cases not available");
    return;
  }
  auto ref = create_reference_backend();
  int yes = 0, no = 0;
  for (const OpCase& c : all_cases()) {
    INFO("case ", c.name);
    OpRunner r;  // builds the one-node graph exactly as the GPU test does
    REQUIRE(r.plan(*ref, c.type, c.attrs, c.input_ptrs(), c.constant_flags(), c.name).ok());
    const bool s = cuda::cuda_supports_node(r.graph().nodes.back());
    CHECK_MESSAGE(s == cuda_implements(c), c.name);
    (s ? yes : no)++;
  }
  MESSAGE("cuda supports ", yes, " op cases and refuses ", no);
}

TEST_CASE(
    "the SoftmaxAttention layout decoder places Q, K and V as the reference reads them (host emulation)") {
  if (!have_cases()) {
    MESSAGE("SKIPPED: VITRT_FIXTURE_DIR/op_cases not available");
    return;
  }
  int checked = 0;
  for (const OpCase& c : all_cases()) {
    if (c.type != OpType::kSoftmaxAttention || !cuda_implements(c)) continue;  // no score bias/export
    INFO("case ", c.name);
    const auto& a = std::get<SoftmaxAttentionAttrs>(c.attrs);
    const Shape* shapes[kMaxOpInputs] = {};
    const float* data[kMaxOpInputs] = {};
    for (size_t i = 0; i < c.inputs.size(); ++i)
      if (c.inputs[i].present) {
        shapes[i] = &c.inputs[i].tensor.shape;
        data[i] = c.inputs[i].tensor.data.data();
      }
    SoftmaxAttentionLayout o;
    Status s = decode_softmax_attention_layout(a, shapes, static_cast<int>(c.inputs.size()), &o);
    REQUIRE_MESSAGE(s.ok(), s.message());
    // Plain float64 attention through the located operands, as the device kernel indexes them.
    std::vector<float> out(static_cast<size_t>(o.batch * o.nq * o.c));
    const int64_t d = o.head_dim;
    for (int64_t b = 0; b < o.batch; ++b)
      for (int64_t h = 0; h < o.heads; ++h)
        for (int64_t i = 0; i < o.nq; ++i) {
          const float* qi = data[o.q_src] + o.q_off + b * o.q_batch + i * o.q_stride + h * d;
          std::vector<double> sc(static_cast<size_t>(o.nk));
          double mx = -INFINITY, sum = 0;
          for (int64_t j = 0; j < o.nk; ++j) {
            const float* kj = data[o.k_src] + o.k_off + b * o.k_batch + j * o.k_stride + h * d;
            double dot = 0;
            for (int64_t t = 0; t < d; ++t) dot += static_cast<double>(qi[t]) * kj[t];
            sc[j] = dot * a.scale;
            mx = std::fmax(mx, sc[j]);
          }
          for (double& v : sc) sum += (v = std::exp(v - mx));
          for (int64_t t = 0; t < d; ++t) {
            double acc = 0;
            for (int64_t j = 0; j < o.nk; ++j)
              acc += sc[j] * data[o.v_src][o.v_off + b * o.v_batch + j * o.v_stride + h * d + t];
            out[(b * o.nq + i) * o.c + h * d + t] = static_cast<float>(acc / sum);
          }
        }
    Comparison cmp = compare_to_reference(out, c.expected64, c.expected32);
    CHECK_MESSAGE(cmp.ok, c.name, ": ", cmp.message);
    ++checked;
  }
  CHECK(checked > 0);
  MESSAGE("checked ", checked, " attention cases through decode_softmax_attention_layout");
}

TEST_CASE("cuda backend matches PyTorch and the reference on every supported op case") {
  Status why;
  std::unique_ptr<Backend> cuda_backend = create_cuda_backend(0, &why);
  if (!cuda_backend) {
    MESSAGE("SKIPPED: no CUDA device (",
            why.message().substr(why.message().rfind("no CUDA device: ", 0) == 0 ? 16 : 0), ")");
    return;
  }
  REQUIRE_MESSAGE(have_cases(), "VITRT_FIXTURE_DIR/op_cases is needed when a GPU is present");
  auto ref = create_reference_backend();
  int checked = 0, refused = 0, batched = 0;
  for (const OpCase& c : all_cases()) {
    INFO("case ", c.name);
    const bool expected_supported = cuda_implements(c);
    OpRunner r;
    Status s = r.plan(*cuda_backend, c.type, c.attrs, c.input_ptrs(), c.constant_flags(), c.name);
    if (!expected_supported) {
      CHECK_MESSAGE(s.code() == StatusCode::kUnsupported, c.name, ": ", s.message());
      CHECK_MESSAGE(s.message().find("not supported by backend 'cuda'") != std::string::npos, s.message());
      ++refused;
      continue;
    }
    REQUIRE_MESSAGE(s.ok(), c.name, ": plan: ", s.message());
    CHECK(r.planned_output_shape() == c.out_shape);
    OpRunner rr;
    REQUIRE(rr.plan(*ref, c.type, c.attrs, c.input_ptrs(), c.constant_flags(), c.name).ok());
    HostTensor ref_out;
    REQUIRE(rr.run(c.input_ptrs(), &ref_out).ok());
    for (int rep = 0; rep < 2; ++rep) {  // the second run reuses the staging buffers and uploaded weights
      HostTensor out;
      s = r.run(c.input_ptrs(), &out);
      REQUIRE_MESSAGE(s.ok(), c.name, ": run: ", s.message());
      REQUIRE(out.shape == c.out_shape);
      Comparison cmp = compare_to_reference(out.data, c.expected64, c.expected32);
      CHECK_MESSAGE(cmp.ok, c.name, " (run ", rep, "): ", cmp.message);
      double vs_ref = 0;
      for (size_t i = 0; i < out.data.size(); ++i)
        vs_ref = std::fmax(vs_ref, std::fabs(static_cast<double>(out.data[i]) - ref_out.data[i]));
      CHECK_MESSAGE(vs_ref <= 2 * cmp.tolerance, c.name, ": max |cuda - ref| ", vs_ref, " vs tolerance ",
                    cmp.tolerance);
      if (rep == 0 && std::getenv("VITRT_OPS_VERBOSE"))
        MESSAGE(c.name, ": ", cmp.message, "; vs ref ", vs_ref);
    }
    ++checked;
    if (!c.batchable) continue;
    // A smaller batch than planned: the first item, compared with the reference on the same item.
    std::vector<HostTensor> small(c.inputs.size());
    std::vector<const HostTensor*> ptrs;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      if (!c.inputs[i].present) {
        ptrs.push_back(nullptr);
        continue;
      }
      small[i] = c.inputs[i].batched ? first_item(c.inputs[i].tensor) : c.inputs[i].tensor;
      ptrs.push_back(&small[i]);
    }
    HostTensor a, b;
    s = r.run(ptrs, &a);
    REQUIRE_MESSAGE(s.ok(), c.name, ": small batch: ", s.message());
    REQUIRE(rr.run(ptrs, &b).ok());
    REQUIRE(a.shape == b.shape);
    REQUIRE(a.data.size() == b.data.size());
    double err = 0;
    for (size_t i = 0; i < a.data.size(); ++i)
      err = std::fmax(err, std::isnan(a.data[i]) ? INFINITY : std::fabs(double(a.data[i]) - b.data[i]));
    // The full-batch bound: the first item's values are part of the full-batch output.
    const Comparison whole = compare_to_reference(ref_out.data, c.expected64, c.expected32);
    CHECK_MESSAGE(err <= 2 * whole.tolerance, c.name, ": small batch max |cuda - ref| ", err, " vs ",
                  2 * whole.tolerance);
    ++batched;
  }
  CHECK(checked > 0);
  MESSAGE("cuda: checked ", checked, " op cases (", batched, " also at batch 1), refused ", refused,
          " of unsupported ops as expected");
}

TEST_CASE("cuda kernels reject bad run-time operands with a Status") {
  Status why;
  std::unique_ptr<Backend> cuda_backend = create_cuda_backend(0, &why);
  if (!cuda_backend) {
    MESSAGE("SKIPPED: no CUDA device (",
            why.message().substr(why.message().rfind("no CUDA device: ", 0) == 0 ? 16 : 0), ")");
    return;
  }
  HostTensor a{Shape{2, 3}, std::vector<float>(6, 1.0f)}, b{Shape{3}, {1, 2, 3}};
  OpRunner r;
  REQUIRE(r.plan(*cuda_backend, OpType::kAdd, NoAttrs{}, {&a, &b}, {false, true}).ok());
  HostTensor out;
  REQUIRE(r.run({&a, &b}, &out).ok());
  CHECK(out.data == std::vector<float>{2, 3, 4, 2, 3, 4});
  HostTensor big{Shape{4, 3}, std::vector<float>(12, 1.0f)};
  Status s = r.run({&big, &b}, &out);  // larger than planned
  CHECK(!s.ok());
  CHECK_MESSAGE(s.message().find("larger than planned") != std::string::npos, s.message());
  HostTensor wrong{Shape{2, 4}, std::vector<float>(8, 1.0f)};
  CHECK(!r.run({&wrong, &b}, &out).ok());  // shapes that do not broadcast
  KernelArgs none;
  CHECK(!r.kernel()->run(none).ok());
}

}  // namespace test
}  // namespace vitrt
