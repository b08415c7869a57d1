// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Counts every heap allocation of a test binary while g_counting is set: malloc, calloc, realloc, aligned
// allocation and operator new (which ends in malloc). It defines the allocation functions, so include it in
// exactly one file of a test binary.
//  - Normal builds interpose malloc & co. and let glibc's own entry points do the work.
//  - Under AddressSanitizer the binary must not define malloc: ASan calls it while it starts, before its
//  shadow
//    memory is mapped, and the instrumented function would read that memory (SIGSEGV before main). There
//    every allocation goes through ASan's allocator anyway, whose malloc hook counts it.
#include <atomic>
#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#define VITRT_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VITRT_TEST_ASAN 1
#endif
#endif

namespace vitrt::test {
inline std::atomic<bool> g_counting{false};
inline std::atomic<long> g_allocations{0};
inline void count_allocation() {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace vitrt::test

#ifdef VITRT_TEST_ASAN
// From the sanitizer runtime (compiler-rt's sanitizer/allocator_interface.h, which GCC does not install).
extern "C" int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void*, size_t),
                                                         void (*free_hook)(const volatile void*));
namespace vitrt::test {
inline void on_malloc(const volatile void*, size_t) {
  count_allocation();
}
inline void on_free(const volatile void*) {}
}  // namespace vitrt::test
namespace {
[[maybe_unused]] const int g_malloc_hook_installed =
    __sanitizer_install_malloc_and_free_hooks(vitrt::test::on_malloc, vitrt::test::on_free);
}  // namespace
#else
extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
void* malloc(size_t n) {
  vitrt::test::count_allocation();
  return __libc_malloc(n);
}
void* calloc(size_t a, size_t b) {
  vitrt::test::count_allocation();
  return __libc_calloc(a, b);
}
void* realloc(void* p, size_t n) {
  vitrt::test::count_allocation();
  return __libc_realloc(p, n);
}
void* memalign(size_t a, size_t n) {
  vitrt::test::count_allocation();
  return __libc_memalign(a, n);
}
void* aligned_alloc(size_t a, size_t n) {
  vitrt::test::count_allocation();
  return __libc_memalign(a, n);
}
int posix_memalign(void** p, size_t a, size_t n) {
  vitrt::test::count_allocation();
  *p = __libc_memalign(a, n);
  return *p ? 0 : 12;  // ENOMEM
}
}
#endif
