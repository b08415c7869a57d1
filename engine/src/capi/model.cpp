// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The C API's model handle: loading, freeing, and the basic queries (input shape, classes, labels, metadata).
#include "capi/capi_internal.h"

using namespace vitrt::capi;

namespace {

vitrt_status_t wrap_model(const vitrt::Status& st, std::shared_ptr<const vitrt::Model> m,
                          vitrt_model_t** out) {
  if (!st.ok()) return report(st);
  *out = new vitrt_model{std::move(m)};
  return report(st);
}

}  // namespace

extern "C" {

vitrt_status_t vitrt_model_load(const char* path, vitrt_model_t** out) {
  if (out) *out = nullptr;
  if (!path || !out) return fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt_model_load: null argument");
  return guarded([&] {
    std::shared_ptr<const vitrt::Model> m;
    vitrt::Status st = vitrt::load_model(path, &m);
    return wrap_model(st, std::move(m), out);
  });
}

vitrt_status_t vitrt_model_load_from_memory(const void* data, size_t size, vitrt_model_t** out) {
  if (out) *out = nullptr;
  if (!data || !out) return fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt_model_load_from_memory: null argument");
  return guarded([&] {
    std::shared_ptr<const vitrt::Model> m;
    vitrt::Status st = vitrt::load_model_from_memory(data, size, &m);
    return wrap_model(st, std::move(m), out);
  });
}

void vitrt_model_free(vitrt_model_t* model) {
  delete model;
}

vitrt_status_t vitrt_model_input_shape(const vitrt_model_t* model, int32_t* c, int32_t* h, int32_t* w) {
  if (!model) return fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt_model_input_shape: null model");
  const vitrt::Graph& g = model->model->graph;
  const vitrt::Shape& s = g.tensors[g.inputs[0]].shape;
  if (c) *c = static_cast<int32_t>(s[1]);
  if (h) *h = static_cast<int32_t>(s[2]);
  if (w) *w = static_cast<int32_t>(s[3]);
  return VITRT_OK;
}

int32_t vitrt_model_num_classes(const vitrt_model_t* model) {
  if (!model) return 0;
  const vitrt::Graph& g = model->model->graph;
  const vitrt::Shape& s = g.tensors[g.outputs[0]].shape;
  return s.rank >= 2 ? static_cast<int32_t>(s.dims[s.rank - 1]) : 0;
}

const char* vitrt_model_label(const vitrt_model_t* model, int32_t index) {
  if (!model || index < 0) return nullptr;
  const auto& labels = model->model->graph.metadata.labels;
  return static_cast<size_t>(index) < labels.size() ? labels[index].c_str() : nullptr;
}

const char* vitrt_model_arch(const vitrt_model_t* model) {
  return model ? model->model->graph.metadata.arch.c_str() : nullptr;
}

const char* vitrt_model_metadata(const vitrt_model_t* model, const char* key) {
  if (!model || !key) return nullptr;
  const auto& extra = model->model->graph.metadata.extra;
  auto it = extra.find(key);
  return it == extra.end() ? nullptr : it->second.c_str();
}

}  // extern "C"
