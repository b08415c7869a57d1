// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// The C API's .npy arrays: the engine's hardened reader (common/npy.h: size limits, exact byte counts, no
// blocking on FIFOs) for callers that keep preprocessed tensors or reference logits in NumPy files.
#include "capi/capi_internal.h"
#include "common/npy.h"

using namespace vitrt::capi;

extern "C" {

vitrt_status_t vitrt_npy_read(const char* path, vitrt_array_t** out) {
  if (out) *out = nullptr;
  if (!path || !out) return fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt_npy_read: null argument");
  return guarded([&] {
    std::unique_ptr<vitrt_array> a(new vitrt_array);
    vitrt::Status st = vitrt::read_npy_f32(path, &a->values, &a->dims);
    if (!st.ok()) return report(st);
    *out = a.release();
    return report(st);
  });
}

void vitrt_array_free(vitrt_array_t* array) {
  delete array;
}

int32_t vitrt_array_rank(const vitrt_array_t* array) {
  return array ? static_cast<int32_t>(array->dims.size()) : 0;
}

const int64_t* vitrt_array_dims(const vitrt_array_t* array) {
  return array ? array->dims.data() : nullptr;
}

size_t vitrt_array_size(const vitrt_array_t* array) {
  return array ? array->values.size() : 0;
}

const float* vitrt_array_data(const vitrt_array_t* array) {
  return array ? array->values.data() : nullptr;
}

vitrt_status_t vitrt_npy_write(const char* path, const float* data, const int64_t* dims, int32_t rank) {
  return guarded([&] {
    if (!path || (!dims && rank > 0))
      return fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt_npy_write: null argument");
    if (rank < 0 || rank > vitrt::kMaxNpyDims)
      return fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt_npy_write: '" + std::string(path) + "': rank " +
                                                  std::to_string(rank) + " outside 0.." +
                                                  std::to_string(vitrt::kMaxNpyDims));
    std::vector<int64_t> shape(dims, dims + rank);
    uint64_t elements = 1;
    for (int64_t d : shape) {
      if (d < 0)
        return fail(VITRT_ERR_INVALID_ARGUMENT,
                    "vitrt_npy_write: '" + std::string(path) + "': negative dimension " + std::to_string(d));
      elements = d == 0 ? 0 : (elements > UINT64_MAX / static_cast<uint64_t>(d) ? UINT64_MAX : elements * d);
    }
    if (elements > SIZE_MAX / sizeof(float))
      return fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt_npy_write: '" + std::string(path) +
                                                  "': the shape holds more floats than memory can");
    if (elements > 0 && !data)
      return fail(VITRT_ERR_INVALID_ARGUMENT, "vitrt_npy_write: '" + std::string(path) + "': null data");
    return report(vitrt::write_npy_f32(path, data, shape));
  });
}

}  // extern "C"
