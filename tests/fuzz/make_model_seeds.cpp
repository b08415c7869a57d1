// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Writes the `model` fuzz target's seed corpus (tests/fuzz/corpus/model/): small models that load, plan and
// run on the ref backend, between them using every op type the converter emits and most the planner makes.
//   vitrt_fuzz_make_seeds OUT_DIR
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "arch/arch.h"
#include "ir/shape_propagation.h"
#include "loader/model_loader.h"
#include "model_writer.h"
#include "ops/op_registry.h"
#include "runtime/session.h"
#include "tiny_deit.h"
#include "unit/test_graphs.h"

using namespace vitrt;

namespace {

void finish_metadata(Graph* g, int side) {
  g->metadata.producer = "make_model_seeds";
  g->metadata.arch = "zoo";
  g->metadata.preprocess.resize_shorter = side;
  g->metadata.preprocess.crop_h = g->metadata.preprocess.crop_w = side;
}

// image [B,3,8,8] through conv, batch norm, relu, pooling, linear attention, attention, matmul and
// elementwise / reduction ops to [B,4] logits.
Graph zoo() {
  Graph g;
  uint32_t seed = 11;
  auto w = [&](const char* name, Shape s) {
    return g.add_constant(name, s, test::pseudo_random(s.numel(), seed++));
  };
  auto pos = [&](const char* name, Shape s) {
    std::vector<float> v = test::pseudo_random(s.numel(), seed++);
    for (float& x : v) x = 1.0f + 0.5f * x;
    return g.add_constant(name, s, v);
  };
  auto act = [&](const char* name) { return g.add_activation(name, Shape()); };
  auto node = [&](OpType t, OpAttrs a, std::vector<int32_t> in, const char* name) {
    const int32_t o = act(name);
    g.add_node(t, a, std::move(in), {o}, name);
    return o;
  };
  const int32_t x = g.add_activation("image", Shape{kDynamicDim, 3, 8, 8});
  g.inputs = {x};
  Conv2dAttrs conv;
  conv.stride_h = conv.stride_w = 2;
  conv.pad_h = conv.pad_w = 1;
  int32_t h = node(OpType::kConv2d, conv, {x, w("conv.w", Shape{4, 3, 3, 3}), w("conv.b", Shape{4})}, "conv");
  h = node(OpType::kBatchNorm2d, BatchNorm2dAttrs{1e-5f},
           {h, w("bn.g", Shape{4}), w("bn.b", Shape{4}), w("bn.m", Shape{4}), pos("bn.v", Shape{4})}, "bn");
  h = node(OpType::kRelu, NoAttrs{}, {h}, "relu");
  h = node(OpType::kAdaptiveAvgPool2d, AdaptiveAvgPool2dAttrs{2, 2}, {h}, "pool");       // [B,4,2,2]
  h = node(OpType::kReshape, ReshapeAttrs{{0, 0, -1}}, {h}, "flatten");                  // [B,4,4]
  const int32_t t = node(OpType::kTranspose, TransposeAttrs{{0, 2, 1}}, {h}, "tokens");  // [B,N=4,C=4]
  LinearAttentionAttrs la;
  la.num_heads = 1;
  la.height = la.width = 2;
  la.q_scale = 0.7f;
  la.landmark_ratio = 1;
  la.newton_iterations = 3;
  const int32_t l = node(OpType::kLinearAttention, la,
                         {t, t, w("la.lw", Shape{4, 4, 1, 1}), pos("la.g", Shape{4}), w("la.b", Shape{4}),
                          w("la.vconv", Shape{1, 1, 3, 3})},
                         "linear_attention");
  const int32_t a = node(OpType::kSoftmaxAttention,
                         SoftmaxAttentionAttrs{2, 0.5f, AttentionInputs::kSeparate}, {l, t, t}, "attention");
  const int32_t kt = node(OpType::kTranspose, TransposeAttrs{{0, 2, 1}}, {a}, "kt");
  const int32_t m = node(OpType::kMatMul, NoAttrs{}, {a, kt}, "matmul");  // [B,4,4]
  const int32_t s = node(OpType::kSub, NoAttrs{}, {m, w("sub.c", Shape{4})}, "sub");
  const int32_t d = node(OpType::kDiv, NoAttrs{}, {s, pos("div.c", Shape{1})}, "div");
  const int32_t mx = node(OpType::kReduceMax, ReduceMeanAttrs{{2}, true}, {d}, "rmax");
  const int32_t e = node(OpType::kExp, NoAttrs{}, {node(OpType::kSub, NoAttrs{}, {d, mx}, "shift")}, "exp");
  const int32_t sum = node(OpType::kReduceSum, ReduceMeanAttrs{{2}, true}, {e}, "rsum");
  const int32_t p = node(OpType::kDiv, NoAttrs{}, {e, sum}, "normalize");
  const int32_t sm = node(OpType::kSoftmax, SoftmaxAttrs{-1}, {p}, "softmax");
  const int32_t ln =
      node(OpType::kLayerNorm, LayerNormAttrs{1e-6f}, {sm, pos("ln.g", Shape{4}), w("ln.b", Shape{4})}, "ln");
  const int32_t lin = node(OpType::kLinear, LinearAttrs{Activation::kGeluTanh},
                           {ln, w("fc.w", Shape{4, 4}), w("fc.b", Shape{4})}, "fc");
  const int32_t gl = node(OpType::kGelu, GeluAttrs{GeluApproximation::kTanh}, {lin}, "gelu");
  const int32_t mul = node(OpType::kMul, NoAttrs{}, {gl, w("mul.c", Shape{1, 1, 4})}, "mul");
  const int32_t sl = node(OpType::kSlice, SliceAttrs{1, 1, 3}, {mul}, "slice");  // [B,2,4]
  const int32_t cat = node(OpType::kConcat, ConcatAttrs{1}, {sl, w("cat.c", Shape{1, 1, 4})}, "concat");
  const int32_t add = node(OpType::kAdd, NoAttrs{}, {cat, w("add.c", Shape{3, 4})}, "add");
  const int32_t logits = node(OpType::kReduceMean, ReduceMeanAttrs{{1}, false}, {add}, "mean");  // [B,4]
  g.outputs = {logits};
  finish_metadata(&g, 8);
  g.metadata.labels = {"w", "x", "y", "z"};
  return g;
}

// LaViT's pieces: attention exporting its scores, a Less-Attention layer reusing them, and the attention
// residual feeding a score bias into an attention of Swin V2's cosine form (op version 3).
// image [B,3,4,4] -> [B,4] logits.
Graph lavit_bits() {
  Graph g;
  uint32_t seed = 41;
  auto w = [&](const char* name, Shape s) {
    return g.add_constant(name, s, test::pseudo_random(s.numel(), seed++));
  };
  auto act = [&](const char* name) { return g.add_activation(name, Shape()); };
  auto node = [&](OpType t, OpAttrs a, std::vector<int32_t> in, const char* name) {
    const int32_t o = act(name);
    g.add_node(t, a, std::move(in), {o}, name);
    return o;
  };
  const int32_t x = g.add_activation("image", Shape{kDynamicDim, 3, 4, 4});
  g.inputs = {x};
  Conv2dAttrs conv;
  conv.stride_h = conv.stride_w = 2;
  int32_t h =
      node(OpType::kConv2d, conv, {x, w("pe.w", Shape{4, 3, 2, 2}), w("pe.b", Shape{4})}, "patch_embed");
  h = node(OpType::kReshape, ReshapeAttrs{{0, 0, -1}}, {h}, "flatten");
  const int32_t t = node(OpType::kTranspose, TransposeAttrs{{0, 2, 1}}, {h}, "tokens");  // [B,4,4], grid 2x2
  const int32_t a = act("va"), scores = act("va.scores");
  g.add_node(OpType::kSoftmaxAttention, SoftmaxAttentionAttrs{2, 0.5f, AttentionInputs::kSeparate}, {t, t, t},
             {a, scores}, "va");
  const int32_t r = node(OpType::kReusedAttention, ReusedAttentionAttrs{2},
                         {scores, a, w("la.theta", Shape{4, 4}), w("la.theta_b", Shape{4}),
                          w("la.psi", Shape{4, 4}), w("la.psi_b", Shape{4})},
                         "la");
  const int32_t bias = node(OpType::kAttentionResidual, AttentionResidualAttrs{2, 2},
                            {scores, w("ar.dw", Shape{2, 1, 2, 2}), w("ar.dw_b", Shape{2}),
                             w("ar.pw", Shape{2, 2, 1, 1}), w("ar.pw_b", Shape{2}), w("ar.gamma", Shape{2})},
                            "attn_res");  // [B,2,1,4]
  const int32_t q = node(OpType::kSlice, SliceAttrs{1, 0, 1}, {r}, "q");
  // Swin V2's cosine form (op version 3): q and k rows normalised, a scale per head.
  SoftmaxAttentionAttrs cosine{2, 1.0f, AttentionInputs::kSeparate};
  cosine.qk_norm = true;
  cosine.qk_norm_eps = 1e-6f;
  cosine.head_scales = {12.5f, 3.5f};
  const int32_t a2 = node(OpType::kSoftmaxAttention, cosine, {q, r, r, bias}, "va2");  // [B,1,4]
  g.nodes.back().version = lowest_op_version(OpType::kSoftmaxAttention, cosine);
  const int32_t pooled = node(OpType::kReduceMean, ReduceMeanAttrs{{1}, false}, {r}, "pool");
  const int32_t flat = node(OpType::kReshape, ReshapeAttrs{{0, -1}}, {a2}, "flat");
  const int32_t logits = node(OpType::kAdd, NoAttrs{}, {pooled, flat}, "logits");
  g.outputs = {logits};
  finish_metadata(&g, 4);
  g.metadata.arch = "lavit_bits";
  g.metadata.labels = {"a", "b", "c", "d"};
  return g;
}

// The ONNX importer's index and resampling ops (docs/onnx.md): Resize, Trilu, CumSum, TopK, ArgMax,
// ScatterND, GatherElements and ConvTranspose, so that the fuzzer's mutations of their attributes, index
// constants and shapes start from a model that runs. image [B,3,8,8] -> [B,4] logits.
Graph index_ops() {
  Graph g;
  uint32_t seed = 71;
  auto w = [&](const char* name, Shape s) {
    return g.add_constant(name, s, test::pseudo_random(s.numel(), seed++));
  };
  auto act = [&](const char* name) { return g.add_activation(name, Shape()); };
  auto node = [&](OpType t, OpAttrs a, std::vector<int32_t> in, const char* name) {
    const int32_t o = act(name);
    g.add_node(t, a, std::move(in), {o}, name);
    return o;
  };
  const int32_t x = g.add_activation("image", Shape{kDynamicDim, 3, 8, 8});
  g.inputs = {x};
  ResizeAttrs rs;
  rs.mode = ResizeMode::kLinear;
  rs.sizes = {4, 4};
  rs.steps = {2.0f, 2.0f};
  rs.scales = {0.5, 0.5};
  int32_t h = node(OpType::kResize, rs, {x}, "resize");  // [B,3,4,4]
  h = node(OpType::kTrilu, TriluAttrs{true, -1}, {h}, "trilu");
  h = node(OpType::kCumSum, CumSumAttrs{-1, true, false}, {h}, "cumsum");
  ConvTransposeAttrs ct;
  ct.stride_h = ct.stride_w = 2;
  ct.pad_top = ct.pad_left = ct.pad_bottom = ct.pad_right = 1;
  ct.output_padding_h = ct.output_padding_w = 1;
  h = node(OpType::kConvTranspose, ct, {h, w("ct.w", Shape{3, 3, 3, 3}), w("ct.b", Shape{3})},
           "conv_transpose");  // [B,3,8,8]
  const int32_t top = act("topk"), top_index = act("topk.indices");
  g.add_node(OpType::kTopK, TopKAttrs{-1, 3, false}, {h}, {top, top_index}, "topk");  // [B,3,8,3] twice
  const int32_t arg = node(OpType::kArgMax, ArgMaxAttrs{ArgKind::kMin, 2, true, true}, {top}, "argmin");
  // ScatterND over the channels (axis 0 after the transpose, away from the batch): channels 2 and 0 take
  // the first two channels of the indices.
  const int32_t t = node(OpType::kTranspose, TransposeAttrs{{1, 0, 2, 3}}, {top_index}, "channels_first");
  const int32_t upd = node(OpType::kSlice, SliceAttrs{0, 0, 2}, {t}, "updates");
  const int32_t sc = node(OpType::kScatterND, ScatterNDAttrs{ScatterReduction::kAdd},
                          {t, g.add_constant("scatter.indices", Shape{2, 1}, {2, 0}), upd}, "scatter_nd");
  const int32_t back = node(OpType::kTranspose, TransposeAttrs{{1, 0, 2, 3}}, {sc}, "to_images");
  // GatherElements of a constant (its output has the indices' shape, without the batch) added to it.
  const int32_t ge = node(OpType::kGatherElements, GatherElementsAttrs{2},
                          {w("ge.data", Shape{1, 3, 8, 3}),
                           g.add_constant("ge.indices", Shape{1, 3, 2, 3},
                                          {7, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0})},
                          "gather_elements");                                    // [1,3,2,3]
  const int32_t sl = node(OpType::kSlice, SliceAttrs{2, 0, 2}, {back}, "rows");  // [B,3,2,3]
  const int32_t sum = node(OpType::kAdd, NoAttrs{}, {sl, ge}, "add");
  const int32_t mix =
      node(OpType::kMul, NoAttrs{}, {sum, node(OpType::kSlice, SliceAttrs{2, 0, 1}, {arg}, "arg_row")},
           "mix");  // [B,3,2,3]
  const int32_t flat = node(OpType::kReshape, ReshapeAttrs{{0, -1}}, {mix}, "flatten");
  const int32_t logits =
      node(OpType::kLinear, LinearAttrs{}, {flat, w("fc.w", Shape{4, 18}), w("fc.b", Shape{4})}, "fc");
  g.outputs = {logits};
  finish_metadata(&g, 8);
  g.metadata.arch = "index_ops";
  g.metadata.labels = {"a", "b", "c", "d"};
  return g;
}

bool write_and_check(const Graph& g0, const std::string& path) {
  Graph g = g0;
  Status st = resolve_activation_shapes(&g);
  if (st.ok()) st = write_model_file(g, path);
  std::shared_ptr<const Model> model;
  if (st.ok()) st = load_model(path, &model);
  std::unique_ptr<Session> session;
  SessionOptions opt;
  opt.backend = "ref";
  if (st.ok()) st = Session::create(model, opt, &session);
  if (st.ok()) {
    std::vector<float> in(session->input_shape(1).numel(), 0.25f), out(session->output_shape(1).numel());
    st = session->run(in.data(), 1, out.data(), out.size());
  }
  std::printf("%s: %s\n", path.c_str(), st.ok() ? "ok" : st.message().c_str());
  return st.ok();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 1;
  }
  const std::string dir = argv[1];
  bool ok = write_and_check(test::tiny_classifier(), dir + "/tiny_classifier.vitrt");
  ok = write_and_check(zoo(), dir + "/zoo.vitrt") && ok;
  ok = write_and_check(lavit_bits(), dir + "/lavit_bits.vitrt") && ok;
  ok = write_and_check(index_ops(), dir + "/index_ops.vitrt") && ok;
  convert::ConvertOptions opt;
  opt.arch = "deit";
  opt.heads = "1";
  Graph deit;
  std::string log;
  Status st = convert::convert_checkpoint(fuzz::tiny_deit(3), opt, &deit, &log);
  if (!st.ok()) std::printf("tiny deit: %s\n", st.message().c_str());
  ok = st.ok() && write_and_check(deit, dir + "/tiny_deit.vitrt") && ok;
  return ok ? 0 : 1;
}
