// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The C API's image input: decode a PNG/JPEG (a file, or bytes in memory) and preprocess it as the model's
// metadata says.
#include "image/image.h"

#include "capi/capi_internal.h"

using namespace vitrt::capi;

extern "C" {

vitrt_status_t vitrt_image_preprocess(const vitrt_model_t* model, const char* image_path, float* dst,
                                      size_t dst_capacity) {
  if (!model || !image_path || !dst)
    return fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt_image_preprocess: null argument");
  return guarded([&] {
    const vitrt::Graph& g = model->model->graph;
    const vitrt::Shape& s = g.tensors[g.inputs[0]].shape;
    const size_t need = static_cast<size_t>(s[1] * s[2] * s[3]);
    if (dst_capacity < need)
      return fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt_image_preprocess: dst holds " +
                                                  std::to_string(dst_capacity) + " floats, the input of '" +
                                                  model->model->path + "' needs " + std::to_string(need) +
                                                  " (C*H*W) for '" + image_path + "'");
    return report(vitrt::load_and_preprocess(image_path, g.metadata.preprocess, dst));
  });
}

vitrt_status_t vitrt_image_preprocess_memory(const vitrt_model_t* model, const void* data, size_t size,
                                             const char* name, float* dst, size_t dst_capacity) {
  if (!model || (!data && size > 0) || !dst)
    return fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt_image_preprocess_memory: null argument");
  return guarded([&] {
    const std::string image = name ? name : "<memory>";
    // The same limit as an image file (read_input_file applies it to vitrt_image_preprocess's path).
    if (size > vitrt::kMaxImageFileBytes)
      return fail(VITRT_ERR_BAD_INPUT,
                  "image '" + image + "' is " + std::to_string(size) + " bytes, above the limit of " +
                      std::to_string(vitrt::kMaxImageFileBytes >> 30) + " GiB for an image");
    const vitrt::Graph& g = model->model->graph;
    const vitrt::Shape& s = g.tensors[g.inputs[0]].shape;
    const size_t need = static_cast<size_t>(s[1] * s[2] * s[3]);
    if (dst_capacity < need)
      return fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt_image_preprocess_memory: dst holds " +
                                                  std::to_string(dst_capacity) + " floats, the input of '" +
                                                  model->model->path + "' needs " + std::to_string(need) +
                                                  " (C*H*W) for '" + image + "'");
    vitrt::Image img;
    vitrt::Status st = vitrt::decode_image_memory(static_cast<const uint8_t*>(data), size, image, &img);
    if (st.ok())
      st = vitrt::preprocess_image(img, g.metadata.preprocess, dst)
               .with_context("preprocessing '" + image + "'");
    return report(st);
  });
}

}  // extern "C"
