// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The C API's model info: what `vitrt inspect` prints about a file (shapes, counts, metadata, preprocessing).
#include <iterator>

#include "capi/capi_internal.h"

using namespace vitrt::capi;

namespace {

const char* interpolation_name(vitrt::Interpolation i) {
  switch (i) {
    case vitrt::Interpolation::kBicubic:
      return "bicubic";
    case vitrt::Interpolation::kBilinear:
      return "bilinear";
    case vitrt::Interpolation::kNearest:
      return "nearest";
  }
  return "nearest";
}

}  // namespace

extern "C" {

vitrt_status_t vitrt_model_get_info(const vitrt_model_t* model, vitrt_model_info_t* info) {
  return guarded([&] {
    if (vitrt_status_t st = check_info(info, "vitrt_model_get_info")) return st;
    if (!model) return fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt_model_get_info: null model");
    const vitrt::Model& m = *model->model;
    const vitrt::Graph& g = m.graph;
    vitrt_model_info_t r = {};
    r.struct_size = sizeof r;
    r.format_version = m.format_version;
    r.num_classes = vitrt_model_num_classes(model);
    r.producer = g.metadata.producer.c_str();
    r.arch = g.metadata.arch.c_str();
    r.input_dtype = "float32";
    copy_shape(g.tensors[g.inputs[0]].shape, &r.input_rank, r.input_dims);
    copy_shape(g.tensors[g.outputs[0]].shape, &r.output_rank, r.output_dims);
    r.num_labels = static_cast<int32_t>(g.metadata.labels.size());
    r.num_ops = static_cast<int32_t>(g.nodes.size());
    r.num_tensors = static_cast<int32_t>(g.tensors.size());
    for (const vitrt::Tensor& t : g.tensors) r.num_weights += t.is_constant;
    r.weight_bytes = m.weight_bytes;
    r.num_metadata = static_cast<int32_t>(g.metadata.extra.size());
    return copy_info(r, info);
  });
}

const char* vitrt_model_op_type(const vitrt_model_t* model, int32_t index) {
  if (!model || index < 0) return nullptr;
  const auto& nodes = model->model->graph.nodes;
  return static_cast<size_t>(index) < nodes.size() ? vitrt::op_type_name(nodes[index].type) : nullptr;
}

vitrt_status_t vitrt_model_metadata_at(const vitrt_model_t* model, int32_t index, const char** key,
                                       const char** value) {
  return guarded([&] {
    if (!model || !key || !value)
      return fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt_model_metadata_at: null argument");
    const auto& extra = model->model->graph.metadata.extra;
    if (index < 0 || static_cast<size_t>(index) >= extra.size())
      return fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt_model_metadata_at: index " + std::to_string(index) +
                                                  " outside 0.." + std::to_string(extra.size()) +
                                                  " (exclusive) of '" + model->model->path + "'");
    auto it = std::next(extra.begin(), index);
    *key = it->first.c_str();
    *value = it->second.c_str();
    return report(vitrt::Status::Ok());
  });
}

vitrt_status_t vitrt_model_get_preprocess(const vitrt_model_t* model, vitrt_preprocess_info_t* info) {
  return guarded([&] {
    if (vitrt_status_t st = check_info(info, "vitrt_model_get_preprocess")) return st;
    if (!model) return fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt_model_get_preprocess: null model");
    const vitrt::Preprocess& p = model->model->graph.metadata.preprocess;
    vitrt_preprocess_info_t r = {};
    r.struct_size = sizeof r;
    r.channels = p.channels;
    r.resize_shorter = p.resize_shorter;
    r.crop_height = p.crop_h;
    r.crop_width = p.crop_w;
    r.interpolation = interpolation_name(p.interpolation);
    r.num_mean = static_cast<int32_t>(p.mean.size());
    r.num_std = static_cast<int32_t>(p.std.size());
    r.mean = p.mean.data();
    r.std = p.std.data();
    return copy_info(r, info);
  });
}

}  // extern "C"
