// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "ops/op_registry.h"

namespace vitrt {
namespace {

// One row per line of ops/op_list.h, indexed by OpType.
const OpSchema kSchemas[kNumOpTypes] = {
#define VITRT_OP_SCHEMA(name, attrs, infer, min_in, max_in, min_out, max_out, version, origin) \
  {OpType::k##name, #name, min_in, max_in, min_out, max_out, version, detail::origin, infer},
    VITRT_OP_LIST(VITRT_OP_SCHEMA)
#undef VITRT_OP_SCHEMA
};

}  // namespace

const OpSchema* find_op_schema(OpType type) {
  const int32_t v = static_cast<int32_t>(type);
  if (!op_type_valid(v)) return nullptr;
  return &kSchemas[v];
}

const char* op_type_name(OpType type) {
  const OpSchema* s = find_op_schema(type);
  return s ? s->name : "UnknownOp";
}

std::string describe_node(const Node& node, size_t index) {
  std::string s = "op #" + std::to_string(index) + " " + op_type_name(node.type);
  if (!node.name.empty()) s += " '" + node.name + "'";
  return s;
}

Status infer_node_shapes(const Node& node, const Shape* const* src, int num_src, Shape* dst) {
  const OpSchema* schema = find_op_schema(node.type);
  if (!schema) return unsupported("unknown op type " + std::to_string(static_cast<int32_t>(node.type)));
  if (node.version < 1 || node.version > schema->max_version)
    return unsupported(std::string(schema->name) + " version " + std::to_string(node.version) +
                       " is not supported (this build knows versions 1.." +
                       std::to_string(schema->max_version) + ")");
  if (num_src < schema->min_inputs || num_src > schema->max_inputs)
    return bad_model(std::string(schema->name) + " expects " + std::to_string(schema->min_inputs) + ".." +
                     std::to_string(schema->max_inputs) + " inputs, got " + std::to_string(num_src));
  const int num_dst = static_cast<int>(node.outputs.size());
  if (num_dst < schema->min_outputs || num_dst > schema->max_outputs)
    return bad_model(std::string(schema->name) + " expects " + std::to_string(schema->min_outputs) + ".." +
                     std::to_string(schema->max_outputs) + " outputs, got " + std::to_string(num_dst));
  for (int i = 0; i < schema->min_inputs; ++i)
    if (!src[i])
      return bad_model(std::string(schema->name) + ": required input " + std::to_string(i) + " is absent");
  VITRT_RETURN_IF_ERROR(schema->infer(node, src, num_src, dst));
  // One check for every op: no inference result, however its arithmetic went, reaches the planner unless it
  // is a shape the arena can hold (positive dims, at most kMaxTensorElements elements).
  for (int o = 0; o < num_dst; ++o) {
    const std::string why = shape_violation(dst[o]);
    if (!why.empty())
      return bad_model(std::string(schema->name) + " output " + std::to_string(o) + ": " + why);
  }
  return Status::Ok();
}

int32_t lowest_op_version(OpType type, const OpAttrs& attrs) {
  if (type == OpType::kSlice) {
    const auto* a = std::get_if<SliceAttrs>(&attrs);
    if (a && a->step != 1) return 2;
  }
  if (type == OpType::kSoftmaxAttention) {
    const auto* a = std::get_if<SoftmaxAttentionAttrs>(&attrs);
    if (a && (a->qk_norm || !a->head_scales.empty())) return 3;
    if (a && a->scale_on_q) return 2;
  }
  return 1;
}

bool broadcast_shapes(const Shape& a, const Shape& b, Shape* out) {
  const int rank = a.rank > b.rank ? a.rank : b.rank;
  Shape r;
  r.rank = rank;
  for (int i = 0; i < rank; ++i) {
    const int ia = i - (rank - a.rank), ib = i - (rank - b.rank);
    const int64_t da = ia >= 0 ? a.dims[ia] : 1, db = ib >= 0 ? b.dims[ib] : 1;
    if (da != db && da != 1 && db != 1) return false;
    r.dims[i] = da == 1 ? db : da;
  }
  *out = r;
  return true;
}

bool normalize_axis(int64_t axis, int rank, int* out) {
  if (axis < -rank || axis >= rank) return false;
  *out = static_cast<int>(axis < 0 ? axis + rank : axis);
  return true;
}

}  // namespace vitrt
