// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Fuzz target `npy`: file bytes -> the .npy readers (raw, as float32, as float64).
#include <vector>

#include "common/npy.h"
#include "fuzz_util.h"

namespace {

// Elements a shape holds, or -1 when a dimension is negative or the product overflows.
long long count(const std::vector<int64_t>& shape) {
  unsigned long long n = 1;
  for (int64_t d : shape) {
    if (d < 0) return -1;
    if (d && n > (1ull << 62) / static_cast<unsigned long long>(d)) return -1;
    n *= static_cast<unsigned long long>(d);
  }
  return static_cast<long long>(n);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static vitrt::fuzz::InputFile file("npy");
  const std::string& path = file.write(data, size);
  vitrt::NpyArray raw;
  if (vitrt::fuzz::step_ok("read_npy", vitrt::read_npy(path, &raw))) {
    const long long n = count(raw.shape);
    VITRT_FUZZ_CHECK(n >= 0, "read_npy accepted a shape with no element count");
    VITRT_FUZZ_CHECK(n == 0 || raw.data.size() % static_cast<size_t>(n) == 0,
                     "read_npy: data bytes are not a whole number of elements");
  }
  std::vector<float> f;
  std::vector<int64_t> shape;
  if (vitrt::fuzz::step_ok("read_npy_f32", vitrt::read_npy_f32(path, &f, &shape)))
    VITRT_FUZZ_CHECK(count(shape) == static_cast<long long>(f.size()),
                     "read_npy_f32: values do not match shape");
  std::vector<double> d;
  shape.clear();
  if (vitrt::fuzz::step_ok("read_npy_f64", vitrt::read_npy_f64(path, &d, &shape)))
    VITRT_FUZZ_CHECK(count(shape) == static_cast<long long>(d.size()),
                     "read_npy_f64: values do not match shape");
  return 0;
}
