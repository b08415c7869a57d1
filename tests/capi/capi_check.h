/* SPDX-License-Identifier: Apache-2.0 */
/* The C API tests' check macro: a failed EXPECT prints where and why and counts, the test goes on; main
 * returns non-zero when `failures` is. One copy for the C files of tests/capi. */
#ifndef VITRT_TESTS_CAPI_CHECK_H
#define VITRT_TESTS_CAPI_CHECK_H

#include <stdio.h>

static int failures = 0;
#define EXPECT(cond, ...)                                  \
  do {                                                     \
    if (!(cond)) {                                         \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                        \
      fprintf(stderr, "\n");                               \
      ++failures;                                          \
    }                                                      \
  } while (0)

#endif
