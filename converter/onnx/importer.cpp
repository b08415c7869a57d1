// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "onnx/importer.h"

#include <cmath>
#include <new>
#include <unordered_map>

#include "common/checked_math.h"
#include "ir/shape_propagation.h"
#include "onnx/batch_index_gather.h"
#include "onnx/fold_by_reference.h"
#include "onnx/fold_ops.h"
#include "onnx/graph_normalize.h"
#include "onnx/import_context.h"
#include "onnx/lower_ops.h"
#include "onnx/onnx_file.h"
#include "onnx/onnx_limits.h"
#include "onnx/opset_forms.h"
#include "onnx/opset_upgrade.h"
#include "onnx/patterns.h"

namespace vitrt::convert {
namespace {

// Binds every initializer to its constant value. With `release` (the model's own graph, which the caller
// gives up), each initializer's data is freed as soon as it is converted, so the file's weights and their
// float32 values are never both held in full.
Status bind_initializers(ImportContext& cx, const onnx::GraphProto& g, onnx::GraphProto* release) {
  for (int k = 0; k < g.initializer_size(); ++k) {
    const onnx::TensorProto& t = g.initializer(k);
    if (t.name().empty()) return bad_input("an initializer has no name");
    if (cx.find(t.name())) return bad_input("initializer '" + t.name() + "' is defined twice");
    OnnxValue v;
    VITRT_RETURN_IF_ERROR(tensor_to_value(t, "initializer '" + t.name() + "'", &cx.external(), &v));
    cx.set(t.name(), std::move(v));
    if (release) release_tensor_data(release->mutable_initializer(k));
  }
  if (g.sparse_initializer_size()) return unsupported("sparse initializers are not supported");
  return Status::Ok();
}

// The channels of a 4-D image input whose dimension 1 is symbolic (Hugging Face optimum's exports name it
// 'num_channels'), read from the Convs that take the input as their data: weight [O, C/group, kH, kW] times
// the group. 0 when no Conv with an initializer weight reads it or two disagree.
int64_t channels_from_convs(const onnx::GraphProto& g, const std::string& input, std::string* conv) {
  int64_t channels = 0;
  for (const auto& n : g.node()) {
    if (n.op_type() != "Conv" || !(n.domain().empty() || n.domain() == "ai.onnx") || n.input_size() < 2 ||
        n.input(0) != input)
      continue;
    const onnx::TensorProto* w = nullptr;
    for (const auto& t : g.initializer())
      if (t.name() == n.input(1)) w = &t;
    int64_t group = 1;
    for (const auto& a : n.attribute())
      if (a.name() == "group" && a.type() == onnx::AttributeProto::INT) group = a.i();
    int64_t c = 0;
    if (!w || w->dims_size() != 4 || w->dims(1) < 1 || group < 1 || !checked_mul(w->dims(1), group, &c) ||
        c > kMaxTensorElements || (channels && c != channels))
      return 0;
    channels = c;
    *conv = n.name().empty() ? n.output_size() ? n.output(0) : std::string("?") : n.name();
  }
  return channels;
}

// The one computed input: float32, batch first (dynamic unless options.static_input), every other dim static
// or, for the spatial dims of an image, --image-size.
Status bind_inputs(ImportContext& cx, const onnx::GraphProto& g, const OnnxImportOptions& o,
                   std::string* log) {
  int real = 0;
  for (const auto& in : g.input()) {
    if (cx.find(in.name())) continue;  // an initializer listed as an input (IR version < 4)
    auto c = o.constant_inputs.find(in.name());
    if (c != o.constant_inputs.end()) {
      OnnxValue v;
      VITRT_RETURN_IF_ERROR(tensor_to_value(*c->second, "input '" + in.name() + "'", &cx.external(), &v));
      cx.set(in.name(), std::move(v));
      continue;
    }
    if (++real > 1)
      return unsupported("the model has more than one input ('" + in.name() +
                         "' is the second); vitrt models take one image batch");
    if (!in.type().has_tensor_type()) return unsupported("input '" + in.name() + "' is not a tensor");
    const auto& tt = in.type().tensor_type();
    if (tt.elem_type() != onnx::TensorProto::FLOAT)
      return unsupported("input '" + in.name() + "' is " + onnx_type_name(tt.elem_type()) +
                         "; vitrt models take a float32 input");
    if (!tt.has_shape()) return unsupported("input '" + in.name() + "' has no shape");
    const int rank = tt.shape().dim_size();
    if (rank < 1 || rank > kMaxRank)
      return unsupported("input '" + in.name() + "' has rank " + std::to_string(rank));
    std::vector<SymDim> dims;
    int64_t channels = 0;
    for (int d = 0; d < rank; ++d) {
      const auto& dim = tt.shape().dim(d);
      const std::string label = "input '" + in.name() + "' dimension " + std::to_string(d);
      if (d == 0 && !o.static_input) {
        dims.push_back(SymDim::batch());
        if (dim.has_dim_value()) {
          cx.set_static_batch(dim.dim_value());
          *log += "onnx: " + label + " is " + std::to_string(dim.dim_value()) +
                  " in the model (exported with a static batch); it becomes the batch, and Reshape targets "
                  "starting with it follow the batch\n";
        }
        continue;
      }
      if (dim.has_dim_value()) {
        if (dim.dim_value() < 0) return bad_input(label + " is " + std::to_string(dim.dim_value()));
        if (dim.dim_value() == 0) return unsupported(label + " is 0 (the IR has no empty tensors)");
        if (o.image_size && rank == 4 && d >= 2 && dim.dim_value() != o.image_size)
          return invalid_argument("--image-size " + std::to_string(o.image_size) +
                                  " differs from the model's static " + std::to_string(dim.dim_value()) +
                                  " (" + label + ")");
        dims.push_back(SymDim::of(dim.dim_value()));
      } else if (rank == 4 && d >= 2 && o.image_size) {
        dims.push_back(SymDim::of(o.image_size));
        *log += "onnx: " + label + " ('" + dim.dim_param() + "') resolved to --image-size " +
                std::to_string(o.image_size) + "\n";
      } else if (std::string conv;
                 rank == 4 && d == 1 && (channels = channels_from_convs(g, in.name(), &conv)) > 0) {
        const int64_t c = channels;
        dims.push_back(SymDim::of(c));
        *log += "onnx: " + label + " ('" + dim.dim_param() + "') resolved to " + std::to_string(c) +
                ", the channels of Conv '" + conv + "' that reads it\n";
      } else {
        return unsupported(label + " is symbolic ('" + dim.dim_param() +
                           "'); only the batch may stay dynamic" +
                           (rank == 4 && d >= 2 ? " (give --image-size)" : ""));
      }
    }
    // One image must fit the IR's per-tensor limit: the lowering multiplies an activation's dimensions
    // unchecked because every activation does.
    int64_t per_image = 1;
    for (const SymDim& d : dims)
      if (d.is_static() && (!checked_mul(per_image, d.c, &per_image) || per_image > kMaxTensorElements))
        return bad_input("input '" + in.name() + "' of shape " + sym_dims_str(dims) + " holds more than " +
                         std::to_string(kMaxTensorElements) + " elements per image");
    cx.add_input(in.name(), dims);
  }
  if (real == 0) return unsupported("the model has no computed input (every input is an initializer)");
  return Status::Ok();
}

// Constants first: Constant nodes and anything computed from constants alone, so patterns see their values
// wherever the exporter placed them.
Status prefold(ImportContext& cx) {
  const auto& g = cx.onnx_graph();
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    if (!cx.imports(i) || n.op_type() == "Shape" || n.op_type() == "Size") continue;
    bool all_const = true;
    for (const std::string& in : n.input()) {
      if (in.empty()) continue;
      const OnnxValue* v = cx.find(in);
      all_const &= v && v->is_const && !v->pending_expand;
    }
    if (!all_const) continue;
    bool folded = false;
    VITRT_RETURN_IF_ERROR(fold_node(cx, n, &folded));
    if (folded) cx.consume(i);
  }
  return Status::Ok();
}

// Folds, matches a pattern at, or lowers (and folds, when its inputs are constants) node i.
Status import_node(ImportContext& cx, int i, int* folded_count, int* patterns, std::string* log) {
  const auto& n = cx.onnx_graph().node(i);
  for (int k = 0; k < n.input_size(); ++k) {
    OnnxValue* v;
    if (!n.input(k).empty()) VITRT_RETURN_IF_ERROR(cx.input(n, k, &v));
  }
  bool done = false;
  // Before folding: the Range over the batch it starts from cannot be folded.
  VITRT_RETURN_IF_ERROR(match_batch_index_gather(cx, i, &done));
  if (done) {
    ++*patterns;
    return Status::Ok();
  }
  VITRT_RETURN_IF_ERROR(fold_node(cx, n, &done));
  if (done) {
    ++*folded_count;
    return Status::Ok();
  }
  VITRT_RETURN_IF_ERROR(match_patterns(cx, i, &done));
  if (done) {
    ++*patterns;
    return Status::Ok();
  }
  VITRT_RETURN_IF_ERROR(lower_or_fold(cx, i, &done, log));
  if (done) ++*folded_count;
  return Status::Ok();
}

// The nodes the graph output `name` depends on (flags by node index). False when no graph output is named so.
bool nodes_for_output(const onnx::GraphProto& g, const std::string& name, std::vector<bool>* needed) {
  bool found = false;
  for (const auto& o : g.output()) found = found || o.name() == name;
  if (!found) return false;
  std::unordered_map<std::string, int> producer;  // the first producer, as ImportContext takes it
  for (int i = 0; i < g.node_size(); ++i)
    for (const std::string& v : g.node(i).output())
      if (!v.empty()) producer.emplace(v, i);
  needed->assign(static_cast<size_t>(g.node_size()), false);
  std::vector<std::string> work = {name};
  while (!work.empty()) {
    const auto it = producer.find(work.back());
    work.pop_back();
    if (it == producer.end() || (*needed)[it->second]) continue;
    (*needed)[it->second] = true;
    for (const std::string& v : g.node(it->second).input())
      if (!v.empty()) work.push_back(v);
  }
  return true;
}

std::string output_names(const onnx::GraphProto& g) {
  std::string s;
  for (const auto& o : g.output()) s += (s.empty() ? "'" : ", '") + o.name() + "'";
  return s.empty() ? "none" : s;
}

// `release`: the model's graph, whose initializer data is freed as it is converted (nullptr keeps it).
Status import_impl(const onnx::ModelProto& model, onnx::GraphProto* release, const OnnxImportOptions& o,
                   Graph* out, std::string* log) {
  const int64_t opset = onnx_opset(model);
  const onnx::GraphProto& g = model.graph();
  *log += "onnx: opset " + std::to_string(opset) + ", producer '" + model.producer_name() + " " +
          model.producer_version() + "', " + std::to_string(g.node_size()) + " nodes, " +
          std::to_string(g.initializer_size()) + " initializers\n";
  std::vector<bool> needed;  // empty: every node
  if (!o.output.empty() && !nodes_for_output(g, o.output, &needed))
    return invalid_argument("--onnx-output '" + o.output +
                            "': the graph has no output of that name (its outputs: " + output_names(g) + ")");
  ImportContext cx(g, opset, std::move(needed), o.output);
  VITRT_RETURN_IF_ERROR(check_opset_forms(cx));
  cx.external().model_dir = o.model_dir;
  VITRT_RETURN_IF_ERROR(bind_initializers(cx, g, release));
  VITRT_RETURN_IF_ERROR(bind_inputs(cx, g, o, log));
  VITRT_RETURN_IF_ERROR(prefold(cx));
  int folded_count = 0, patterns = 0;
  for (int i = 0; i < g.node_size(); ++i) {
    if (!cx.consumed(i) && cx.imports(i))
      VITRT_RETURN_IF_ERROR(import_node(cx, i, &folded_count, &patterns, log));
    cx.release_constants_read_last_by(i);
  }
  Graph& ir = cx.ir();
  for (const auto& o_ : g.output()) {
    if (!o.output.empty() && (o_.name() != o.output || !ir.outputs.empty())) continue;  // one, named
    OnnxValue* v = cx.find(o_.name());
    if (!v) return bad_input("graph output '" + o_.name() + "' is never produced");
    if (v->is_const)
      return unsupported("graph output '" + o_.name() + "' is a constant, not computed from the input");
    if (v->pending_expand)
      return unsupported("graph output '" + o_.name() + "' is an Expand the IR cannot compute on its own");
    // Booleans are float 0/1 inside the graph (docs/onnx.md); a model's output stays float32.
    const bool declared_bool =
        o_.type().has_tensor_type() && o_.type().tensor_type().elem_type() == onnx::TensorProto::BOOL;
    if (v->boolean || declared_bool)
      return unsupported("graph output '" + o_.name() + "' is a bool; vitrt models output float32");
    for (int32_t t : ir.inputs)
      if (t == v->tensor) return unsupported("graph output '" + o_.name() + "' is the input itself");
    ir.outputs.push_back(v->tensor);
  }
  if (ir.outputs.empty()) return bad_input("the graph has no outputs");
  VITRT_RETURN_IF_ERROR(ir.validate_structure());
  int distances = 0, conv_relus = 0, attentions = 0, sdpa = 0;
  VITRT_RETURN_IF_ERROR(fold_unrolled_distances(&ir, &distances));
  VITRT_RETURN_IF_ERROR(fold_conv_relu(&ir, &conv_relus));
  VITRT_RETURN_IF_ERROR(normalize_sdpa_attention(&ir, &sdpa));
  VITRT_RETURN_IF_ERROR(normalize_multihead_attention(&ir, &attentions));
  if (sdpa)
    *log += "onnx: " + std::to_string(sdpa) +
            " attention scores with the scale split over q and k rewritten as one scaled product\n";
  if (distances)
    *log += "onnx: " + std::to_string(distances) +
            " squared distances summed channel by channel rewritten as one broadcast sum\n";
  if (attentions)
    *log += "onnx: " + std::to_string(attentions) +
            " nn.MultiheadAttention blocks rewritten in the packed-qkv form (docs/onnx.md)\n";
  VITRT_RETURN_IF_ERROR(resolve_activation_shapes(&ir));
  *log += "onnx: " + std::to_string(ir.nodes.size()) + " IR ops (" + std::to_string(patterns) +
          " patterns recognised, " + std::to_string(folded_count) + " nodes folded)\n";
  *out = std::move(ir);
  return Status::Ok();
}

}  // namespace

Status import_onnx(const onnx::ModelProto& model, const OnnxImportOptions& options, Graph* out,
                   std::string* log) {
  try {
    if (onnx_opset(model) < kImportMinOpset) {  // opsets 7 to 10: a copy read as 11
      onnx::ModelProto upgraded = model;
      VITRT_RETURN_IF_ERROR(upgrade_to_opset11(&upgraded, log));
      return import_impl(upgraded, nullptr, options, out, log);
    }
    return import_impl(model, nullptr, options, out, log);
  } catch (const std::bad_alloc&) {
    return out_of_memory("out of memory while importing the ONNX model");
  }
}

Status import_onnx_releasing(onnx::ModelProto* model, const OnnxImportOptions& options, Graph* out,
                             std::string* log) {
  try {
    VITRT_RETURN_IF_ERROR(upgrade_to_opset11(model, log));  // opsets 7 to 10 read as 11
    return import_impl(*model, model->mutable_graph(), options, out, log);
  } catch (const std::bad_alloc&) {
    return out_of_memory("out of memory while importing the ONNX model");
  }
}

Status convert_onnx_file(const std::string& path, const ConvertOptions& opt, Graph* out, std::string* log) {
  VITRT_RETURN_IF_ERROR(check_options(opt));
  onnx::ModelProto model;
  VITRT_RETURN_IF_ERROR(read_onnx_model(path, &model));
  OnnxImportOptions io;
  io.image_size = opt.image_size;
  const size_t slash = path.find_last_of('/');
  io.model_dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  // A vitrt model computes one output: the one named, else the first; only the nodes it needs are imported.
  const onnx::GraphProto& graph = model.graph();
  io.output = opt.onnx_output;
  if (io.output.empty() && graph.output_size() > 0) {
    io.output = graph.output(0).name();
    if (io.output.empty()) return bad_input("'" + path + "': the graph's first output has no name");
  }
  std::string kept;  // logged once the import has found the output
  if (graph.output_size() > 1) {
    std::string dropped;
    for (const auto& o : graph.output())
      if (o.name() != io.output) dropped += (dropped.empty() ? "'" : ", '") + o.name() + "'";
    kept = "onnx: the model keeps the graph output '" + io.output + "'" +
           (opt.onnx_output.empty() ? " (--onnx-output picks another)" : "") +
           "; not imported: " + (dropped.empty() ? "none" : dropped) + "\n";
  }
  Graph g;
  const int64_t opset = onnx_opset(model);  // as written (opsets 7 to 10 are read as 11)
  VITRT_RETURN_IF_ERROR(import_onnx_releasing(&model, io, &g, log));
  *log += kept;
  model.Clear();  // the rest of the model: names, nodes, attributes

  const Shape& in = g.tensors[g.inputs[0]].shape;
  if (in.rank != 4 || (in[1] != 1 && in[1] != 3))
    return unsupported("'" + path + "': the input is " + in.str() +
                       "; vitrt models take an image batch [B,C,H,W] with 1 or 3 channels");
  if (in[2] != in[3]) return unsupported("'" + path + "': the input " + in.str() + " is not square");
  ModelMetadata& md = g.metadata;
  md.producer = "vitrt-convert";
  md.arch = "onnx";
  md.extra["source.format"] = "onnx";
  md.extra["onnx.opset"] = std::to_string(opset);
  Preprocess pp;
  pp.channels = static_cast<int32_t>(in[1]);
  pp.crop_h = pp.crop_w = static_cast<int32_t>(in[2]);
  pp.resize_shorter = static_cast<int32_t>(std::floor(in[2] / 0.875));
  pp.interpolation = Interpolation::kBicubic;
  if (pp.channels == 1) pp.mean = pp.std = {0.5f};
  VITRT_RETURN_IF_ERROR(apply_preprocess_flags(opt, in[2], &pp));
  md.preprocess = pp;
  const Shape& logits = g.tensors[g.outputs[0]].shape;
  if (logits.rank == 2)
    for (int64_t i = 0; i < logits[1]; ++i) md.labels.push_back("class_" + std::to_string(i));
  *log += "model: ONNX, input " + in.str() + ", output " + logits.str() + "\n";
  *out = std::move(g);
  return Status::Ok();
}

}  // namespace vitrt::convert
