// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "onnx/opset_upgrade.h"

#include <limits>
#include <map>
#include <set>
#include <vector>

#include "onnx/onnx_file.h"
#include "onnx/onnx_limits.h"

namespace vitrt::convert {
namespace {

class Upgrader {
 public:
  Upgrader(onnx::ModelProto* model, int64_t opset) : g_(*model->mutable_graph()), opset_(opset) {
    for (const auto& v : g_.input()) names_.insert(v.name());
    for (const auto& v : g_.initializer()) names_.insert(v.name());
    for (const auto& n : g_.node())
      for (const std::string& o : n.output()) names_.insert(o);
  }

  Status run(std::map<std::string, int>* rewritten) {
    for (int i = 0; i < g_.node_size(); ++i) {
      onnx::NodeProto* n = g_.mutable_node(i);
      if (!n->domain().empty() && n->domain() != "ai.onnx") continue;
      const std::string& op = n->op_type();
      bool done = false;
      if (op == "Upsample" || (op == "Resize" && opset_ < 11))
        return unsupported(where(*n) +
                           ": its sampling is not read from opsets before 11; re-export at opset 11 " +
                           "or later (torch.onnx.export(..., opset_version=17)), where it is Resize");
      if (op == "Clip" && opset_ < 11) VITRT_RETURN_IF_ERROR(clip(n, &done));
      if (op == "Pad" && opset_ < 11) VITRT_RETURN_IF_ERROR(pad(n, &done));
      if (op == "Slice" && opset_ < 10) VITRT_RETURN_IF_ERROR(slice(n, &done));
      if (op == "TopK" && opset_ < 10) VITRT_RETURN_IF_ERROR(top_k(n, &done));
      if (op == "BatchNormalization" && opset_ < 9) VITRT_RETURN_IF_ERROR(batch_norm(n, &done));
      if (done) ++(*rewritten)[op];
    }
    return Status::Ok();
  }

 private:
  std::string where(const onnx::NodeProto& n) const { return onnx_node_where(n, opset_); }

  // Removes attribute `name` from n into *a; false when n has none.
  static bool take(onnx::NodeProto* n, const std::string& name, onnx::AttributeProto* a) {
    auto* attrs = n->mutable_attribute();
    for (int i = 0; i < attrs->size(); ++i)
      if (attrs->Get(i).name() == name) {
        *a = attrs->Get(i);
        attrs->DeleteSubrange(i, 1);
        return true;
      }
    return false;
  }

  // A new initializer named after the node's first output, unique among the graph's values.
  onnx::TensorProto* add_initializer(const onnx::NodeProto& n, const std::string& what) {
    std::string name = (n.output_size() ? n.output(0) : n.name()) + "::" + what;
    for (int k = 1; names_.count(name); ++k) name += "_" + std::to_string(k);
    names_.insert(name);
    onnx::TensorProto* t = g_.add_initializer();
    t->set_name(name);
    return t;
  }

  std::string float_scalar(const onnx::NodeProto& n, const std::string& what, float v) {
    onnx::TensorProto* t = add_initializer(n, what);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_float_data(v);
    return t->name();
  }

  std::string int64_list(const onnx::NodeProto& n, const std::string& what,
                         const google::protobuf::RepeatedField<int64_t>& v) {
    onnx::TensorProto* t = add_initializer(n, what);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(v.size());
    for (int64_t x : v) t->add_int64_data(x);
    return t->name();
  }

  // Attribute `name` of type `type` taken from n (false in *found when absent); bad_input when mistyped.
  Status typed(onnx::NodeProto* n, const std::string& name, onnx::AttributeProto::AttributeType type,
               onnx::AttributeProto* a, bool* found) {
    *found = take(n, name, a);
    if (*found && a->type() != type)
      return bad_input(where(*n) + ": attribute '" + name + "' has the wrong type for this opset");
    return Status::Ok();
  }

  // The node's data input alone, then `inputs`.
  static void set_inputs(onnx::NodeProto* n, const std::vector<std::string>& inputs) {
    const std::string x = n->input_size() ? n->input(0) : std::string();
    n->clear_input();
    n->add_input(x);
    for (const std::string& s : inputs) n->add_input(s);
  }

  // Before its opset-11 form the node's other operands are attributes: it reads one input.
  Status data_input_only(const onnx::NodeProto& n) const {
    if (n.input_size() != 1 || n.input(0).empty())
      return bad_input(where(n) +
                       ": reads one input at this opset (its other operands are attributes), got " +
                       std::to_string(n.input_size()));
    return Status::Ok();
  }

  // Clip-6: min and max attributes, defaults the lowest and highest float.
  Status clip(onnx::NodeProto* n, bool* done) {
    VITRT_RETURN_IF_ERROR(data_input_only(*n));
    onnx::AttributeProto lo, hi;
    bool has_lo = false, has_hi = false;
    VITRT_RETURN_IF_ERROR(typed(n, "min", onnx::AttributeProto::FLOAT, &lo, &has_lo));
    VITRT_RETURN_IF_ERROR(typed(n, "max", onnx::AttributeProto::FLOAT, &hi, &has_hi));
    const float min = has_lo ? lo.f() : std::numeric_limits<float>::lowest();
    const float max = has_hi ? hi.f() : std::numeric_limits<float>::max();
    set_inputs(n, {float_scalar(*n, "min", min), float_scalar(*n, "max", max)});
    *done = true;
    return Status::Ok();
  }

  // Pad-2: pads (required) and value attributes; mode stays an attribute.
  Status pad(onnx::NodeProto* n, bool* done) {
    VITRT_RETURN_IF_ERROR(data_input_only(*n));
    onnx::AttributeProto pads, value;
    bool has_pads = false, has_value = false;
    VITRT_RETURN_IF_ERROR(typed(n, "pads", onnx::AttributeProto::INTS, &pads, &has_pads));
    VITRT_RETURN_IF_ERROR(typed(n, "value", onnx::AttributeProto::FLOAT, &value, &has_value));
    if (!has_pads) return bad_input(where(*n) + ": has no 'pads' attribute");
    set_inputs(
        n, {int64_list(*n, "pads", pads.ints()), float_scalar(*n, "value", has_value ? value.f() : 0.0f)});
    *done = true;
    return Status::Ok();
  }

  // Slice-1: starts and ends (required), axes attributes.
  Status slice(onnx::NodeProto* n, bool* done) {
    VITRT_RETURN_IF_ERROR(data_input_only(*n));
    onnx::AttributeProto starts, ends, axes;
    bool has_starts = false, has_ends = false, has_axes = false;
    VITRT_RETURN_IF_ERROR(typed(n, "starts", onnx::AttributeProto::INTS, &starts, &has_starts));
    VITRT_RETURN_IF_ERROR(typed(n, "ends", onnx::AttributeProto::INTS, &ends, &has_ends));
    VITRT_RETURN_IF_ERROR(typed(n, "axes", onnx::AttributeProto::INTS, &axes, &has_axes));
    if (!has_starts || !has_ends) return bad_input(where(*n) + ": needs 'starts' and 'ends' attributes");
    std::vector<std::string> in = {int64_list(*n, "starts", starts.ints()),
                                   int64_list(*n, "ends", ends.ints())};
    if (has_axes) in.push_back(int64_list(*n, "axes", axes.ints()));
    set_inputs(n, in);
    *done = true;
    return Status::Ok();
  }

  // TopK-1: k attribute (required), as a one-element int64 input.
  Status top_k(onnx::NodeProto* n, bool* done) {
    VITRT_RETURN_IF_ERROR(data_input_only(*n));
    onnx::AttributeProto k;
    bool has_k = false;
    VITRT_RETURN_IF_ERROR(typed(n, "k", onnx::AttributeProto::INT, &k, &has_k));
    if (!has_k) return bad_input(where(*n) + ": has no 'k' attribute");
    google::protobuf::RepeatedField<int64_t> v;
    v.Add(k.i());
    set_inputs(n, {int64_list(*n, "k", v)});
    *done = true;
    return Status::Ok();
  }

  // BatchNormalization-7: `spatial` 1 (the default, and what opset 9 made the only meaning) is removed; 0,
  // statistics per element of C x D1 x ... rather than per channel, is not read. MXNet's exporter wrote 0 by
  // mistake for per-channel statistics (its later versions write 1); the message says so.
  Status batch_norm(onnx::NodeProto* n, bool* done) {
    onnx::AttributeProto spatial;
    bool has = false;
    VITRT_RETURN_IF_ERROR(typed(n, "spatial", onnx::AttributeProto::INT, &spatial, &has));
    if (has && spatial.i() != 1)
      return unsupported(where(*n) + ": spatial " + std::to_string(spatial.i()) +
                         " (statistics per element, not per channel) is not supported; a model whose "
                         "statistics are one per channel (MXNet's older exporter wrote spatial 0 for "
                         "those) means spatial 1");
    *done = has;
    return Status::Ok();
  }

  onnx::GraphProto& g_;
  int64_t opset_;
  std::set<std::string> names_;
};

}  // namespace

Status upgrade_to_opset11(onnx::ModelProto* model, std::string* log) {
  const int64_t opset = onnx_opset(*model);
  if (opset < 0 || opset >= kImportMinOpset) return Status::Ok();
  std::map<std::string, int> rewritten;
  VITRT_RETURN_IF_ERROR(Upgrader(model, opset).run(&rewritten));
  for (auto& o : *model->mutable_opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") o.set_version(kImportMinOpset);
  std::string what;
  for (const auto& [op, count] : rewritten)
    what += (what.empty() ? "" : ", ") + op + " x" + std::to_string(count);
  *log += "onnx: opset " + std::to_string(opset) + " read as opset " + std::to_string(kImportMinOpset) +
          " (" +
          (what.empty() ? std::string("no node changed form") : "rewritten in their opset-11 form: " + what) +
          ")\n";
  return Status::Ok();
}

}  // namespace vitrt::convert
