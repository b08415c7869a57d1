// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// vitrt bench -m MODEL [--batch 1,8] [--threads 1,2] [--backend ...] [--repeat N] [--warmup N] [--json]:
// latency of Session::run over every combination (session creation and warm-up are not timed).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include "cli_common.h"

namespace vitrt::cli {
namespace {

struct Options {
  std::string model;
  std::vector<int> batches = {1};
  std::vector<int> threads = {1};
  std::vector<std::string> backends = {"auto"};
  int repeat = 20;
  int warmup = 3;
  bool json = false;
};

struct Row {
  std::string backend;
  int threads, batch;
  double min_ms, median_ms, mean_ms, p90_ms, max_ms, images_per_s;
  uint64_t activation_bytes;
};

int run_bench(const Options& o) {
  std::shared_ptr<const Model> model;
  if (int rc = load_model_or_report(o.model, &model)) return rc;
  const Graph& g = model->graph;
  const Shape& in = g.tensors[g.inputs[0]].shape;
  std::vector<Row> rows;
  for (const std::string& backend : o.backends)
    for (int th : o.threads)
      for (int b : o.batches) {
        RunOptions ro;
        ro.backend = backend;
        ro.threads = th;
        std::unique_ptr<Session> session;
        if (int rc = create_session_or_report(model, ro, b, &session)) return rc;
        std::vector<float> x(static_cast<size_t>(b * in[1] * in[2] * in[3]));
        std::mt19937 rng(1234);
        std::normal_distribution<float> dist(0.f, 1.f);
        for (float& v : x) v = dist(rng);
        std::vector<float> y(static_cast<size_t>(session->output_shape(b).numel()));
        for (int i = 0; i < o.warmup; ++i) {
          Status st = session->run(x.data(), b, y.data(), y.size());
          if (!st.ok()) return report_error("bench", st, false);
        }
        std::vector<double> ms;
        for (int i = 0; i < o.repeat; ++i) {
          const auto t0 = std::chrono::steady_clock::now();
          Status st = session->run(x.data(), b, y.data(), y.size());
          const auto t1 = std::chrono::steady_clock::now();
          if (!st.ok()) return report_error("bench", st, false);
          ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        }
        std::sort(ms.begin(), ms.end());
        double sum = 0;
        for (double v : ms) sum += v;
        const size_t n = ms.size();
        const double median = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
        rows.push_back({session->backend_name(), th, b, ms.front(), median, sum / n,
                        ms[std::min(n - 1, static_cast<size_t>(0.9 * n))], ms.back(), 1000.0 * b / median,
                        session->memory().activation_bytes});
      }
  if (o.json) {
    std::printf("{\"model\": \"%s\", \"repeat\": %d, \"warmup\": %d, \"rows\": [", json_escape(o.model).c_str(),
                o.repeat, o.warmup);
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      std::printf("%s\n  {\"backend\": \"%s\", \"threads\": %d, \"batch\": %d, \"min_ms\": %.4f, \"median_ms\": %.4f, "
                  "\"mean_ms\": %.4f, \"p90_ms\": %.4f, \"max_ms\": %.4f, \"images_per_s\": %.3f, "
                  "\"activation_bytes\": %llu}",
                  i ? "," : "", r.backend.c_str(), r.threads, r.batch, r.min_ms, r.median_ms, r.mean_ms, r.p90_ms,
                  r.max_ms, r.images_per_s, static_cast<unsigned long long>(r.activation_bytes));
    }
    std::printf("\n]}\n");
    return kExitOk;
  }
  std::printf("%s  (latency of one run, %d timed runs after %d warm-up; session creation not timed)\n",
              o.model.c_str(), o.repeat, o.warmup);
  std::printf("| backend | threads | batch | median ms | min ms | p90 ms | max ms | images/s | activations |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (const Row& r : rows)
    std::printf("| %s | %d | %d | %.3f | %.3f | %.3f | %.3f | %.1f | %s |\n", r.backend.c_str(), r.threads, r.batch,
                r.median_ms, r.min_ms, r.p90_ms, r.max_ms, r.images_per_s, format_bytes(r.activation_bytes).c_str());
  return kExitOk;
}

}  // namespace

Runner add_bench(CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand("bench", "time Session::run for combinations of batch, threads and backend");
  sub->add_option("-m,--model", o->model, "model file (.vitrt)")->required();
  sub->add_option("--batch", o->batches, "batch sizes, comma separated")->delimiter(',')->capture_default_str();
  sub->add_option("-t,--threads", o->threads, "thread counts, comma separated")->delimiter(',')->capture_default_str();
  sub->add_option("-b,--backend", o->backends, "backends, comma separated")->delimiter(',')->capture_default_str();
  sub->add_option("-r,--repeat", o->repeat, "timed runs per combination")->capture_default_str()->check(CLI::Range(1, 1000000));
  sub->add_option("--warmup", o->warmup, "untimed runs first")->capture_default_str()->check(CLI::Range(0, 1000000));
  sub->add_flag("--json", o->json, "machine-readable output");
  return [o] { return run_bench(*o); };
}

}  // namespace vitrt::cli
