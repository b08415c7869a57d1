// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// vitrt_gemm_ceiling [--size N] [--threads 1,2] [--repeat R]: the fp32 GEMM ceiling of this machine, measured with
// oneDNN's matmul (the kernel vitrt's Linear uses): median GFLOP/s of an N^3 sgemm per thread count, as JSON lines.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dnnl.hpp>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  int64_t n = 1024;
  int repeat = 30;
  std::vector<int> threads = {1, 2};
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--size")) n = std::atoll(argv[i + 1]);
    if (!std::strcmp(argv[i], "--repeat")) repeat = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--threads")) {
      threads.clear();
      std::string s = argv[i + 1];
      size_t p = 0;
      while (p < s.size()) {
        size_t q = s.find(',', p);
        if (q == std::string::npos) q = s.size();
        threads.push_back(std::atoi(s.substr(p, q - p).c_str()));
        p = q + 1;
      }
    }
  }
  using dnnl::memory;
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n);
  for (int th : threads) {
    omp_set_num_threads(th);
    memory::desc md({n, n}, memory::data_type::f32, memory::format_tag::ab);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(md, md, md), eng);
    dnnl::matmul mm(pd);
    memory ma(md, eng, a.data()), mb(md, eng, b.data()), mc(md, eng, c.data());
    std::vector<double> ms;
    for (int r = 0; r < repeat + 3; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      mm.execute(strm, {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}});
      strm.wait();
      auto t1 = std::chrono::steady_clock::now();
      if (r >= 3) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    const double med = ms[ms.size() / 2];
    std::printf("{\"threads\": %d, \"size\": %lld, \"median_ms\": %.4f, \"gflops\": %.2f, \"impl\": \"%s\"}\n", th,
                static_cast<long long>(n), med, 2.0 * n * n * n / (med * 1e6), pd.impl_info_str());
  }
  return 0;
}
