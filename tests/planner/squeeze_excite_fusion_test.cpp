// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The fuse_squeeze_excite pass on odd sizes: squeeze-and-excitation blocks written as plain ops (global
// average pool or ReduceMean -> 1x1 conv or Linear -> Relu/Silu -> 1x1 conv or Linear -> Sigmoid/HardSigmoid
// -> Mul) become one SqueezeExcite op on ref and cpu, the reference giving the unfused graph's exact bits and
// the cpu backend the same outputs to rounding, at batches 1..3; blocks the op cannot express (another gate,
// a grouped conv, a Mul scaling another tensor) or whose intermediates are read elsewhere are left alone.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "arch/graph_builder.h"
#include "graph_session_util.h"
#include "ops/op_registry.h"

using namespace vitrt;
using namespace vitrt::convert;
using namespace vitrt::test;

namespace {

enum class Squeeze { kPool, kMeanKeep, kPoolReshape, kMeanFlat };  // the last two feed Linear layers
enum class Leak { kNone, kPooled, kHidden, kGate };                // an intermediate also a graph output

struct Config {
  int64_t h, w, c, cr;
  Squeeze squeeze = Squeeze::kPool;
  bool silu = false;        // Unary Silu between the layers, else Relu
  bool hard_gate = false;   // HardSigmoid(1/6, 1/2) (MobileNetV3), else Sigmoid
  bool bias = true;         // both layers have biases
  bool gate_first = false;  // Mul(g, x) instead of Mul(x, g)
  bool expand = false;      // g broadcast to x's shape by an Expand first (SENet's expand_as)
  bool residual = true;     // x + se(x): x has readers outside the block
  UnaryKind gate_kind = UnaryKind::kSigmoid;  // a kind other than Sigmoid/HardSigmoid is left alone
  int32_t groups = 1;                         // a grouped 1x1 conv is left alone
  bool scale_other = false;                   // the Mul scales another tensor than the pooled one
  Leak leak = Leak::kNone;
  bool vector_form() const { return squeeze == Squeeze::kPoolReshape || squeeze == Squeeze::kMeanFlat; }
  bool fused() const {
    return (gate_kind == UnaryKind::kSigmoid || hard_gate) && groups == 1 && !scale_other &&
           leak == Leak::kNone;
  }
};

Graph build(const Config& k) {
  Checkpoint ck;
  uint32_t seed = 11;
  auto add = [&](const std::string& name, std::vector<int64_t> shape) {
    add_random(&ck, name, std::move(shape), seed++);
  };
  const bool vec = k.vector_form();
  auto fc_shape = [&](int64_t out, int64_t in) {
    return vec ? std::vector<int64_t>{out, in} : std::vector<int64_t>{out, in / k.groups, 1, 1};
  };
  add("stem.weight", {k.c, 3, 3, 3}), add("stem.bias", {k.c});
  add("se.fc1.weight", fc_shape(k.cr, k.c)), add("se.fc2.weight", fc_shape(k.c, k.cr));
  if (k.bias) add("se.fc1.bias", {k.cr}), add("se.fc2.bias", {k.c});
  GraphBuilder b(ck);
  const int32_t image = b.input("image", Shape{1, 3, k.h, k.w});
  const int32_t x = b.op(OpType::kConv2d, Conv2dAttrs{1, 1, 1, 1},
                         {image, b.weight("stem.weight"), b.weight("stem.bias")}, "stem");
  // A second image the Mul may scale instead of x (scale_other).
  const int32_t other = b.op(OpType::kRelu, NoAttrs{}, {x}, "other");
  int32_t s = kAbsent;
  switch (k.squeeze) {
    case Squeeze::kPool:
    case Squeeze::kPoolReshape:
      s = b.op(OpType::kAdaptiveAvgPool2d, AdaptiveAvgPool2dAttrs{1, 1}, {x}, "se.pool");
      break;
    case Squeeze::kMeanKeep:
      s = b.op(OpType::kReduceMean, ReduceMeanAttrs{{-1, 2}, true}, {x}, "se.pool");
      break;
    case Squeeze::kMeanFlat:
      s = b.op(OpType::kReduceMean, ReduceMeanAttrs{{2, 3}, false}, {x}, "se.pool");
      break;
  }
  if (k.squeeze == Squeeze::kPoolReshape) s = b.op(OpType::kReshape, ReshapeAttrs{{0, -1}}, {s}, "se.flat");
  if (k.leak == Leak::kPooled) b.mark_output(s);
  auto fc = [&](int32_t v, const std::string& name) {
    std::vector<int32_t> in{v, b.weight(name + ".weight")};
    if (k.bias) in.push_back(b.weight(name + ".bias"));
    if (vec) return b.op(OpType::kLinear, LinearAttrs{}, in, name);
    Conv2dAttrs a;
    a.groups = k.groups;
    return b.op(OpType::kConv2d, a, in, name);
  };
  int32_t h = fc(s, "se.fc1");
  if (k.leak == Leak::kHidden) b.mark_output(h);
  h = k.silu ? b.op(OpType::kUnary, UnaryAttrs{UnaryKind::kSilu}, {h}, "se.act")
             : b.op(OpType::kRelu, NoAttrs{}, {h}, "se.act");
  int32_t g = fc(h, "se.fc2");
  const UnaryAttrs gate = k.hard_gate ? UnaryAttrs{UnaryKind::kHardSigmoid, 1.0f / 6.0f, 0.5f}
                                      : UnaryAttrs{k.gate_kind, 0.0f, 0.0f};
  g = b.op(OpType::kUnary, gate, {g}, "se.gate");
  if (vec) g = b.op(OpType::kReshape, ReshapeAttrs{{0, -1, 1, 1}}, {g}, "se.view");
  if (k.expand) g = b.op(OpType::kExpand, ExpandAttrs{{1, 1, k.h, k.w}}, {g}, "se.expand");
  if (k.leak == Leak::kGate) b.mark_output(g);
  const int32_t scaled = k.scale_other ? other : x;
  int32_t y =
      b.op(OpType::kMul, NoAttrs{},
           k.gate_first ? std::vector<int32_t>{g, scaled} : std::vector<int32_t>{scaled, g}, "se.scale");
  if (k.residual) y = b.op(OpType::kAdd, NoAttrs{}, {x, y}, "residual");
  if (k.scale_other || !k.residual) y = b.op(OpType::kAdd, NoAttrs{}, {other, y}, "join");
  b.mark_output(y);
  return finish_image_graph(b, k.h, k.w);
}

}  // namespace

TEST_CASE("fuse_squeeze_excite: SE blocks become one SqueezeExcite, same outputs as unfused") {
  Config silu_hard{5, 3, 24, 6};  // EfficientNet's SiLU, MobileNetV3's hard-sigmoid gate
  silu_hard.silu = silu_hard.hard_gate = true;
  silu_hard.squeeze = Squeeze::kMeanKeep;
  silu_hard.gate_first = true;
  Config no_bias{11, 1, 37, 9};
  no_bias.bias = false;
  no_bias.residual = false;
  Config linear{6, 7, 16, 4};  // SENet's original: pool, flatten, Linear layers, view back, expand_as
  linear.squeeze = Squeeze::kPoolReshape;
  linear.expand = true;
  Config linear_mean{3, 8, 19, 7};
  linear_mean.squeeze = Squeeze::kMeanFlat;
  linear_mean.hard_gate = true;
  linear_mean.gate_first = true;
  Config tanh_gate{5, 5, 12, 3};
  tanh_gate.gate_kind = UnaryKind::kTanh;
  Config grouped{5, 4, 12, 6};
  grouped.groups = 2;
  Config other{4, 6, 10, 5};
  other.scale_other = true;
  Config pooled_read{7, 5, 13, 5}, hidden_read = pooled_read, gate_read = pooled_read;
  pooled_read.leak = Leak::kPooled;
  hidden_read.leak = Leak::kHidden;
  gate_read.leak = Leak::kGate;
  const Config configs[] = {{7, 9, 13, 5}, silu_hard, no_bias,     linear,      linear_mean, tanh_gate,
                            grouped,       other,     pooled_read, hidden_read, gate_read};
  for (const Config& k : configs) {
    CAPTURE(k.h);
    CAPTURE(k.w);
    CAPTURE(k.c);
    CAPTURE(k.cr);
    std::vector<uint8_t> storage;
    const auto model = load(build(k), &storage);
    for (const char* backend : {"ref", "cpu"}) {
      CAPTURE(backend);
      const int64_t max_batch = 3;
      auto fused = session(model, backend, max_batch);
      auto unfused = session(model, backend, max_batch, "fuse_squeeze_excite");
      CHECK(count(fused->graph(), OpType::kSqueezeExcite) == (k.fused() ? 1 : 0));
      CHECK(count(unfused->graph(), OpType::kSqueezeExcite) == 0);
      // the block's ops are gone into the fused op; the stem conv stays
      const int layer = k.vector_form() ? 0 : 2;
      CHECK(count(fused->graph(), OpType::kConv2d) == 1 + (k.fused() ? 0 : layer));
      CHECK(count(fused->graph(), OpType::kMul) == (k.fused() ? 0 : 1));
      CHECK(count(fused->graph(), OpType::kExpand) == (k.fused() ? 0 : int{k.expand}));
      CHECK(count(fused->graph(), OpType::kUnary) == (k.fused() ? 0 : 1 + k.silu));
      // the reference computes the fused op with the unfused kernels' arithmetic: identical bits
      check_same_outputs(*fused, *unfused, max_batch, 5, std::string(backend) == "ref" ? 0.0 : 2e-6);
    }
  }
}

TEST_CASE(
    "SqueezeExcite: wrong shapes and attributes are a clear error naming the op and what was expected") {
  Node n;
  n.type = OpType::kSqueezeExcite;
  n.attrs = SqueezeExciteAttrs{};
  n.outputs = {0};
  const Shape x{2, 6, 5, 3}, w1{4, 6}, w1_conv{4, 6, 1, 1}, b1{4}, w2{6, 4}, w2_conv{6, 4, 1, 1}, b2{6};
  Shape out;
  auto infer = [&](std::vector<const Shape*> in) {
    return infer_node_shapes(n, in.data(), static_cast<int>(in.size()), &out);
  };
  REQUIRE(infer({&x, &w1, &b1, &w2, &b2}).ok());
  CHECK(out == x);
  CHECK(infer({&x, &w1_conv, nullptr, &w2_conv}).ok());
  const Shape w1_off{4, 5}, w2_off{6, 3}, w2_k3{6, 4, 3, 3}, b1_off{5}, x3{2, 6, 5};
  auto message = [&](std::vector<const Shape*> in) { return infer(std::move(in)).message(); };
  CHECK(message({&x, &w1_off, nullptr, &w2}).find("fc1_weight must be [Cr,6] or [Cr,6,1,1], got [4,5]") !=
        std::string::npos);
  CHECK(message({&x, &w1, nullptr, &w2_off}).find("fc2_weight must be [6,4] or [6,4,1,1]") !=
        std::string::npos);
  CHECK(message({&x, &w1, nullptr, &w2_k3}).find("fc2_weight must be") != std::string::npos);
  CHECK(message({&x, &w1, &b1_off, &w2}).find("fc1_bias must be [4]") != std::string::npos);
  CHECK(message({&x, &w1, &b1, &w2, &b1}).find("fc2_bias must be [6]") != std::string::npos);
  CHECK(message({&x3, &w1, &b1, &w2}).find("src must be [B,C,H,W]") != std::string::npos);
  CHECK(message({&x, &w1, &b1}).find("fc2_weight is required") != std::string::npos);
  CHECK(message({&x, &w1, &b1, nullptr}).find("fc2_weight is required") != std::string::npos);
  SqueezeExciteAttrs bad;
  bad.gate_alpha = 0.5f;  // the sigmoid gate has no parameters
  n.attrs = bad;
  CHECK(message({&x, &w1, &b1, &w2}).find("SqueezeExcite: gate Sigmoid's alpha") != std::string::npos);
  bad.gate = ExciteGate::kHardSigmoid;
  bad.gate_beta = NAN;
  n.attrs = bad;
  CHECK(message({&x, &w1, &b1, &w2}).find("beta nan is not finite") != std::string::npos);
  bad = SqueezeExciteAttrs{};
  bad.activation = static_cast<SqueezeActivation>(7);
  n.attrs = bad;
  CHECK(message({&x, &w1, &b1, &w2}).find("activation 7 is unknown") != std::string::npos);
  bad = SqueezeExciteAttrs{};
  bad.gate = static_cast<ExciteGate>(-1);
  n.attrs = bad;
  CHECK(message({&x, &w1, &b1, &w2}).find("gate -1 is unknown") != std::string::npos);
}
