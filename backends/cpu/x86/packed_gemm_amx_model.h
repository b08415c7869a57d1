// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// A plain C++ model of the AMX tile instructions the bf16 AMX kernel uses (packed_gemm_amx_impl.h's Tiles
// policy), transcribed from their definitions in Intel's Software Developer's Manual (LDTILECFG, TILEZERO,
// TILELOADD, TILESTORED, TDPBF16PS, TILERELEASE), so that the kernel's tiling, staging and epilogue are
// tested on CPUs without AMX (tests/x86/bf16_gemm_x86_test.cpp). Per thread: eight tiles of 16 rows × 64
// bytes and the configuration. TDPBF16PS, per row m < C.rows: the even and the odd products summed apart,
//   even[n] = fma(A[m].bf16[2k], B[k].bf16[2n], even[n]),  odd[n] = fma(A[m].bf16[2k + 1], B[k].bf16[2n + 1],
//   odd[n])  for k < A.colsb / 4 in order, from zero; then C[m].f32[n] += even[n] + odd[n]
// (the manual's temp1[2n] and temp1[2n + 1]; the hardware also treats denormal inputs as zero and flushes
// denormal results, which the tests never produce). What the hardware would refuse, on any thread, sets
// `fault()`, which the tests check: a palette other than 1, non-zero reserved bytes, a tile with only one of
// rows and colsb zero or past 16 rows / 64 bytes (#GP at LDTILECFG); a tile used unconfigured, the three
// tiles of a product not distinct, B.rows != A.colsb / 4, C.colsb != B.colsb or C.rows != A.rows (#UD).
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "backends/cpu/x86/packed_gemm_amx_impl.h"
#include "backends/cpu/x86/packed_gemm_bf16.h"

namespace vitrt {
namespace x86 {
namespace {

struct AmxTileModel {
  struct State {
    amx::TileConfig config;
    bool configured = false;
    uint8_t tile[8][16][64] = {};
  };
  // Set by any thread's refused use (the tests read it after a whole session's run, from one thread).
  static std::atomic<bool>& fault() {
    static std::atomic<bool> f{false};
    return f;
  }
  static State& state() {
    thread_local State s;
    return s;
  }
  static void configure(const amx::TileConfig& c) {
    State& s = state();
    s.config = c;
    s.configured = true;
    std::memset(s.tile, 0, sizeof s.tile);  // LDTILECFG zeroes the tile data
    bool bad = c.palette != 1 || c.start_row != 0;
    for (uint8_t b : c.reserved) bad |= b != 0;
    for (int t = 0; t < 16; ++t)
      bad |=
          c.rows[t] > 16 || c.colsb[t] > 64 || (c.rows[t] == 0) != (c.colsb[t] == 0) || (t >= 8 && c.rows[t]);
    if (bad) fault() = true, s.configured = false;
  }
  template <int T>
  static void zero() {
    State& s = state();
    if (!s.configured) fault() = true;
    std::memset(s.tile[T], 0, sizeof s.tile[T]);
  }
  template <int T>
  static void load(const void* base, int64_t stride) {
    State& s = state();
    if (!s.configured) fault() = true;
    std::memset(s.tile[T], 0, sizeof s.tile[T]);  // rows and bytes past the configuration read as zero
    for (int r = 0; r < s.config.rows[T]; ++r)
      std::memcpy(s.tile[T][r], static_cast<const uint8_t*>(base) + r * stride, s.config.colsb[T]);
  }
  template <int T>
  static void store(void* base, int64_t stride) {
    State& s = state();
    if (!s.configured) fault() = true;
    for (int r = 0; r < s.config.rows[T]; ++r)
      std::memcpy(static_cast<uint8_t*>(base) + r * stride, s.tile[T][r], s.config.colsb[T]);
  }
  template <int C, int A, int B>
  static void dot() {
    State& s = state();
    const amx::TileConfig& g = s.config;
    if (!s.configured || C == A || C == B || A == B || g.rows[C] == 0 || g.rows[B] != g.colsb[A] / 4 ||
        g.colsb[C] != g.colsb[B] || g.rows[C] != g.rows[A]) {
      fault() = true;
      return;
    }
    for (int m = 0; m < g.rows[C]; ++m) {
      float acc[16], even[16] = {}, odd[16] = {};
      std::memcpy(acc, s.tile[C][m], sizeof acc);
      for (int k = 0; k < g.colsb[A] / 4; ++k)
        for (int n = 0; n < g.colsb[C] / 4; ++n) {
          even[n] = std::fma(bf16_at(s.tile[A][m], 2 * k), bf16_at(s.tile[B][k], 2 * n), even[n]);
          odd[n] = std::fma(bf16_at(s.tile[A][m], 2 * k + 1), bf16_at(s.tile[B][k], 2 * n + 1), odd[n]);
        }
      for (int n = 0; n < g.colsb[C] / 4; ++n) acc[n] += even[n] + odd[n];
      std::memcpy(s.tile[C][m], acc, sizeof acc);
    }
  }
  static void release() { state().configured = false; }

 private:
  static float bf16_at(const uint8_t* row, int i) {
    uint16_t h;
    std::memcpy(&h, row + 2 * i, sizeof h);
    return bf16_to_float(h);
  }
};

}  // namespace
}  // namespace x86
}  // namespace vitrt
