// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "backends/cpu/x86/thread_pool.h"

#include <omp.h>

namespace vitrt {
namespace x86 {

int ThreadPool::set_threads(int n) {
  const int prev = omp_get_max_threads();
  if (n >= 1 && n != prev) omp_set_num_threads(n);
  return prev;
}

int ThreadPool::max_threads() {
  return omp_get_max_threads();
}

int ThreadPool::thread_index() {
  return omp_get_thread_num();
}

void ThreadPool::run_(int64_t n, int nthreads, Thunk thunk, const void* fn) {
  if (nthreads > n) nthreads = static_cast<int>(n);
#pragma omp parallel num_threads(nthreads)
  {
    const int t = omp_get_thread_num();
    const int nt = omp_get_num_threads();
    const int64_t chunk = n / nt, rem = n % nt;
    const int64_t b = t * chunk + (t < rem ? t : rem);
    const int64_t e = b + chunk + (t < rem ? 1 : 0);
    if (b < e) thunk(fn, b, e, t);
  }
}

}  // namespace x86
}  // namespace vitrt
