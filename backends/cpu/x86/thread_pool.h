// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// The backend's thread pool. Debian's oneDNN is built on OpenMP (libgomp), so the pool *is* libgomp's
// persistent team: our loops and oneDNN's primitives run on the same threads and never oversubscribe the
// cores, and set_threads() makes oneDNN use exactly the session's num_threads. parallel_for takes any
// callable by reference (no std::function, no allocation).
#include <cstdint>

namespace vitrt {
namespace x86 {

class ThreadPool {
 public:
  // Sets the thread count of this OS thread's OpenMP ICV (what oneDNN reads) and returns the previous one.
  static int set_threads(int n);
  static int max_threads();
  static int thread_index();  // 0..n-1 inside parallel_for

  // fn(begin, end, thread) over [0, n) split into contiguous static chunks, one per thread.
  template <class Fn>
  static void parallel_for(int64_t n, int nthreads, const Fn& fn) {
    if (n <= 0) return;
    if (nthreads <= 1 || n == 1) {
      fn(int64_t{0}, n, 0);
      return;
    }
    run_(n, nthreads, &invoke_<Fn>, &fn);
  }

 private:
  using Thunk = void (*)(const void*, int64_t, int64_t, int);
  template <class Fn>
  static void invoke_(const void* f, int64_t b, int64_t e, int t) {
    (*static_cast<const Fn*>(f))(b, e, t);
  }
  static void run_(int64_t n, int nthreads, Thunk thunk, const void* fn);
};

}  // namespace x86
}  // namespace vitrt
