// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Attention (opset 23; docs/onnx.md), what torch's exporter writes for F.scaled_dot_product_attention at
// opset 23 and later: softmax(Q·Kᵀ·scale)·V, lowered to the plain ops --emit primitive writes for attention
// (MatMul with kᵀ, Mul by the scale, Softmax, MatMul), so the planner's fuse_attention finds it as it finds
// the decomposed form. 4-D operands [B, heads, N, d] are used as they are; 3-D ones [B, N, heads·d]
// (q_num_heads, kv_num_heads) are split into heads first and the output merged back, as split_heads does.
// ONNX scales Q and K by √scale each before the product; the lowering scales the product once (the last-bit
// difference sdpa_attention.cpp describes). Refused by name: a mask, past key/value (a cache), causal
// masking, softcap, grouped-query heads (kv_num_heads ≠ q_num_heads), and reading the outputs after Y.
#include <cmath>

#include "onnx/lower_common.h"

namespace vitrt::convert::lowering {
namespace {

using NodeProto = onnx::NodeProto;

// Operand i as heads [B,h,N,d]: a 4-D value as it is, a 3-D [B,N,h·d] one reshaped and transposed.
Status heads_of(ImportContext& cx, const NodeProto& n, int i, int64_t heads, const std::string& name,
                OnnxValue* out, int64_t* d) {
  OnnxValue* x;
  VITRT_RETURN_IF_ERROR(cx.input(n, i, &x));
  const std::vector<SymDim> dims = dims_of(*x);
  int32_t t;
  VITRT_RETURN_IF_ERROR(tensor_of(cx, n, i, &t));
  if (dims.size() == 4) {
    if (!dims[3].is_static() || !dims[2].is_static() || dims[1] != SymDim::of(heads))
      return cx.bad_node(
          n, name + " is " + sym_dims_str(dims) + ", expected [B, " + std::to_string(heads) + ", N, d]");
    *d = dims[3].c;
    *out = *x;
    out->tensor = t;
    return Status::Ok();
  }
  if (dims.size() != 3 || !dims[2].is_static() || !dims[1].is_static() || heads < 1 || dims[2].c % heads != 0)
    return cx.bad_node(n, name + " is " + sym_dims_str(dims) + ", expected [B, N, " + std::to_string(heads) +
                              "·d] (or 4-D heads)");
  *d = dims[2].c / heads;
  OnnxValue split;
  VITRT_RETURN_IF_ERROR(cx.add_op(n, OpType::kReshape, ReshapeAttrs{{0, 0, heads, *d}}, {t},
                                  n.output(0) + "." + name + ".heads", &split));
  return cx.add_op(n, OpType::kTranspose, TransposeAttrs{{0, 2, 1, 3}}, {split.tensor},
                   n.output(0) + "." + name, out);
}

Status lower_attention(ImportContext& cx, int, const NodeProto& n) {
  if (cx.opset() < 23) return cx.bad_node(n, "Attention is an operator of opset 23 and later");
  for (int i = 3; i < n.input_size(); ++i)
    if (cx.has_input(n, i))
      return cx.unsupported_node(n, std::string(i == 3  ? "an attention mask"
                                                : i < 6 ? "a past key/value cache"
                                                        : "nonpad_kv_seqlen") +
                                        " (input " + std::to_string(i) + ")");
  if (extra_output_used(cx, n)) return cx.unsupported_node(n, "its present key/value or qk outputs are read");
  if (cx.attr_int(n, "is_causal", 0) != 0) return cx.unsupported_node(n, "is_causal 1 (causal masking)");
  if (cx.attr_float(n, "softcap", 0.0f) != 0.0f) return cx.unsupported_node(n, "a softcap");
  OnnxValue *q, *k, *v;
  VITRT_RETURN_IF_ERROR(cx.input(n, 0, &q));
  VITRT_RETURN_IF_ERROR(cx.input(n, 1, &k));
  VITRT_RETURN_IF_ERROR(cx.input(n, 2, &v));
  const bool tokens = q->rank() == 3;
  if (k->rank() != q->rank() || v->rank() != q->rank() || (q->rank() != 3 && q->rank() != 4))
    return cx.bad_node(n, "Q, K and V must all be 3-D or all 4-D");
  int64_t heads = cx.attr_int(n, "q_num_heads", 0);
  const int64_t kv_heads = cx.attr_int(n, "kv_num_heads", heads);
  if (!tokens) {
    const std::vector<SymDim> qd = dims_of(*q);
    if (!qd[1].is_static()) return cx.bad_node(n, "Q's heads depend on the batch");
    heads = qd[1].c;
    if (dims_of(*k)[1] != qd[1])
      return cx.unsupported_node(n, "grouped-query heads (K has other heads than Q)");
  } else if (heads < 1 || kv_heads != heads) {
    return heads < 1
               ? cx.bad_node(n, "3-D operands need q_num_heads")
               : cx.unsupported_node(n, "grouped-query heads (kv_num_heads " + std::to_string(kv_heads) +
                                            ", q_num_heads " + std::to_string(heads) + ")");
  }
  OnnxValue qh, kh, vh;
  int64_t dq, dk, dv;
  VITRT_RETURN_IF_ERROR(heads_of(cx, n, 0, heads, "q", &qh, &dq));
  VITRT_RETURN_IF_ERROR(heads_of(cx, n, 1, heads, "k", &kh, &dk));
  VITRT_RETURN_IF_ERROR(heads_of(cx, n, 2, heads, "v", &vh, &dv));
  if (dq != dk)
    return cx.bad_node(n, "Q's head width " + std::to_string(dq) + " is not K's " + std::to_string(dk));
  const float scale = cx.attr_float(n, "scale", static_cast<float>(1.0 / std::sqrt(static_cast<double>(dq))));
  if (!std::isfinite(scale) || scale == 0) return cx.bad_node(n, "scale must be finite and not 0");
  const std::string& y = n.output(0);
  OnnxValue kt, qk, scaled, probs, out;
  VITRT_RETURN_IF_ERROR(
      cx.add_op(n, OpType::kTranspose, TransposeAttrs{{0, 1, 3, 2}}, {kh.tensor}, y + ".k_t", &kt));
  VITRT_RETURN_IF_ERROR(cx.add_op(n, OpType::kMatMul, NoAttrs{}, {qh.tensor, kt.tensor}, y + ".qk", &qk));
  const int32_t c = cx.add_constant(y + ".scale", {1}, {scale});
  VITRT_RETURN_IF_ERROR(cx.add_op(n, OpType::kMul, NoAttrs{}, {qk.tensor, c}, y + ".scores", &scaled));
  VITRT_RETURN_IF_ERROR(
      cx.add_op(n, OpType::kSoftmax, SoftmaxAttrs{-1}, {scaled.tensor}, y + ".probs", &probs));
  if (!tokens) return emit(cx, n, OpType::kMatMul, NoAttrs{}, {probs.tensor, vh.tensor}, y);
  OnnxValue pv, merged;
  VITRT_RETURN_IF_ERROR(cx.add_op(n, OpType::kMatMul, NoAttrs{}, {probs.tensor, vh.tensor}, y + ".pv", &pv));
  VITRT_RETURN_IF_ERROR(
      cx.add_op(n, OpType::kTranspose, TransposeAttrs{{0, 2, 1, 3}}, {pv.tensor}, y + ".merged", &merged));
  return emit(cx, n, OpType::kReshape, ReshapeAttrs{{0, 0, heads * dv}}, {merged.tensor}, y);
}

}  // namespace

std::map<std::string, Entry> attention_entries() {
  return {{"Attention",
           {lower_attention,
            {"is_causal", "kv_num_heads", "q_num_heads", "qk_matmul_output_mode", "scale", "softcap",
             "softmax_precision"}}}};
}

}  // namespace vitrt::convert::lowering
