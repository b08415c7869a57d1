// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// What the lowering files share: lower_ops.cpp (the table, linear algebra, normalisation, layout),
// lower_elementwise.cpp (the elementwise ops), lower_reduce.cpp (the Reduce* ops), lower_logic.cpp
// (comparisons, logic, Where), lower_pad_expand.cpp (Pad, Expand, Tile), lower_einsum.cpp and one file per
// further op (lower_trilu.cpp, ...).
#include <onnx/onnx_pb.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "onnx/import_context.h"

namespace vitrt::convert::lowering {

struct Entry {
  Status (*fn)(ImportContext& cx, int index, const onnx::NodeProto& n);
  std::set<std::string> attrs;  // the attributes it understands
};

// The `epsilon` attribute of a normalisation (default 1e-5): finite and >= 0, else a malformed node.
Status norm_epsilon(ImportContext& cx, const onnx::NodeProto& n, float* eps);

// The IR tensor of input i of `n`: an activation's, or a float constant materialised once.
Status tensor_of(ImportContext& cx, const onnx::NodeProto& n, int i, int32_t* t);

// Adds one IR op reading `inputs` and binds its output to the ONNX value `out_name`.
Status emit(ImportContext& cx, const onnx::NodeProto& n, OpType type, OpAttrs attrs,
            std::vector<int32_t> inputs, const std::string& out_name);

// The symbolic shape of a value (a constant's static one).
std::vector<SymDim> dims_of(const OnnxValue& v);

// Whether an output after the first (a mask, running statistics, Mean / InvStdDev, a cache) is read or is a
// graph output: the IR op computes only the first.
bool extra_output_used(const ImportContext& cx, const onnx::NodeProto& n);

// A Reshape of IR tensor `src` (shape `from`) to `to`, written as the planner's patterns expect it: 0 where a
// dimension equals the source's at the same position, -1 for the one batch-dependent dimension that moved
// (lower_ops.cpp says how `written_infer`, the file's own -1, is kept). Binds nothing: `out` receives the new
// activation named `out_name`.
Status reshape_to(ImportContext& cx, const onnx::NodeProto& n, int32_t src, const std::vector<SymDim>& from,
                  const std::vector<SymDim>& to, const std::string& out_name, OnnxValue* out,
                  int written_infer = -1);

// The entries of the elementwise ops (lower_elementwise.cpp), by ONNX op type.
std::map<std::string, Entry> elementwise_entries();
// Comparisons, logical ops and Where (lower_logic.cpp).
std::map<std::string, Entry> logic_entries();
// Pad, Expand and Tile (lower_pad_expand.cpp).
std::map<std::string, Entry> pad_expand_entries();
// Einsum (lower_einsum.cpp).
std::map<std::string, Entry> einsum_entries();
// DepthToSpace and SpaceToDepth (lower_depth_space.cpp).
std::map<std::string, Entry> depth_space_entries();
// ConvTranspose (lower_conv_transpose.cpp).
std::map<std::string, Entry> conv_transpose_entries();
// ArgMax and ArgMin (lower_arg_max.cpp).
std::map<std::string, Entry> arg_max_entries();
// Trilu (lower_trilu.cpp).
std::map<std::string, Entry> trilu_entries();
// CumSum (lower_cum_sum.cpp).
std::map<std::string, Entry> cum_sum_entries();
// LRN (lower_lrn.cpp).
std::map<std::string, Entry> lrn_entries();
// GroupNormalization (opsets 18 and 21) and RMSNormalization (23) as IR ops (lower_group_rms_norm.cpp).
std::map<std::string, Entry> group_rms_norm_entries();
// Attention, opset 23 (lower_attention.cpp).
std::map<std::string, Entry> attention_entries();
// GatherElements (lower_gather_elements.cpp).
std::map<std::string, Entry> gather_elements_entries();
// TopK (lower_top_k.cpp).
std::map<std::string, Entry> top_k_entries();
// Resize (lower_resize.cpp).
std::map<std::string, Entry> resize_entries();
// ScatterND on activations (lower_scatter_nd.cpp).
std::map<std::string, Entry> scatter_nd_entries();

// The entries of the Reduce* ops (lower_reduce.cpp), by ONNX op type.
std::map<std::string, Entry> reduction_entries();

}  // namespace vitrt::convert::lowering
