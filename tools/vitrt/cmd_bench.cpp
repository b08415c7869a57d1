// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// vitrt bench -m MODEL [--batch 1,8] [--threads 1,2] [--backend ...] [--precision fp32|bf16] [--repeat N]
// [--warmup N] [--json]:
// latency of Session::run over every combination (session creation and warm-up are not timed).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <random>

#include "cli_common.h"

namespace vitrt::cli {
namespace {

struct Options {
  std::string model;
  std::vector<int> batches = {1};
  std::vector<int> threads = {1};
  std::vector<std::string> backends = {"auto"};
  std::string precision = "fp32";
  int repeat = 20;
  int warmup = 3;
  bool json = false;
  bool profile = false;
  int top = 12;  // slowest steps the profile lists
};

// Time per run by op type and the slowest steps, from a session's step timings.
void print_profile(const api::Session& s, int batch, int threads, int top) {
  const std::vector<api::StepInfo> steps_info = s.steps();
  const api::PlanInfo plan = s.plan();
  const double runs = static_cast<double>(std::max<int64_t>(1, plan.profiled_runs));
  double total = 0;
  std::map<std::string, std::pair<double, int>> by_type;
  std::vector<std::pair<double, size_t>> steps;
  for (size_t i = 0; i < steps_info.size(); ++i) {
    const double ms = 1000.0 * steps_info[i].seconds / runs;
    total += ms;
    auto& t = by_type[steps_info[i].op];
    t.first += ms;
    t.second++;
    steps.push_back({ms, i});
  }
  std::vector<std::pair<double, std::string>> types;
  for (const auto& kv : by_type) types.push_back({kv.second.first, kv.first});
  std::sort(types.rbegin(), types.rend());
  std::sort(steps.rbegin(), steps.rend());
  std::printf("\nprofile (%s, batch %d, %d threads): %.3f ms per run in kernels, mean of %lld runs\n",
              plan.backend.c_str(), batch, threads, total, static_cast<long long>(plan.profiled_runs));
  std::printf("| op | steps | ms per run | share |\n|---|---|---|---|\n");
  for (const auto& t : types)
    std::printf("| %s | %d | %.3f | %.1f%% |\n", t.second.c_str(), by_type[t.second].second, t.first,
                total > 0 ? 100.0 * t.first / total : 0.0);
  print_tiles(s);
  std::printf("slowest steps:\n");
  for (size_t k = 0; k < steps.size() && k < static_cast<size_t>(top); ++k) {
    const api::StepInfo& n = steps_info[steps[k].second];
    std::printf("  %-4zu %-18s %-44s %8.3f ms  %5.1f%%\n", steps[k].second, n.op.c_str(), n.name.c_str(),
                steps[k].first, total > 0 ? 100.0 * steps[k].first / total : 0.0);
  }
}

struct Row {
  std::string backend, precision;  // precision: what the session reports it runs in
  int threads, batch;
  double min_ms, median_ms, mean_ms, p90_ms, max_ms, images_per_s;
  uint64_t activation_bytes;
};

int run_bench(const Options& o) {
  std::unique_ptr<api::Model> model;
  if (int rc = load_model_or_report(o.model, &model)) return rc;
  const size_t per_image = model->input_shape().elements();
  const size_t per_out = output_elements_per_image(*model);
  std::vector<Row> rows;
  for (const std::string& backend : o.backends)
    for (int th : o.threads)
      for (int b : o.batches) {
        RunOptions ro;
        ro.backend = backend;
        ro.threads = th;
        ro.profile = o.profile;
        ro.precision = o.precision;
        std::unique_ptr<api::Session> session;
        if (int rc = create_session_or_report(*model, ro, b, &session)) return rc;
        std::vector<float> x(per_image * b);
        std::mt19937 rng(1234);
        std::normal_distribution<float> dist(0.f, 1.f);
        for (float& v : x) v = dist(rng);
        std::vector<float> y(per_out * b);
        std::vector<double> ms;
        ms.reserve(static_cast<size_t>(o.repeat));  // nothing allocates between runs
        try {
          for (int i = 0; i < o.warmup; ++i) session->run(x.data(), b, y.data(), y.size());
          session->reset_profile();
          for (int i = 0; i < o.repeat; ++i) {
            const auto t0 = std::chrono::steady_clock::now();
            session->run(x.data(), b, y.data(), y.size());
            const auto t1 = std::chrono::steady_clock::now();
            ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
          }
        } catch (const api::Error& e) {
          return report_error("bench", e, false);
        }
        if (o.profile && !o.json) print_profile(*session, b, th, o.top);
        std::sort(ms.begin(), ms.end());
        double sum = 0;
        for (double v : ms) sum += v;
        const size_t n = ms.size();
        const double median = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
        rows.push_back({session->backend_name(), session->precision(), th, b, ms.front(), median, sum / n,
                        ms[std::min(n - 1, static_cast<size_t>(0.9 * n))], ms.back(), 1000.0 * b / median,
                        session->memory().activation_bytes});
      }
  if (o.json) {
    std::printf("{\"model\": \"%s\", \"repeat\": %d, \"warmup\": %d, \"rows\": [",
                json_escape(o.model).c_str(), o.repeat, o.warmup);
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      std::printf(
          "%s\n  {\"backend\": \"%s\", \"threads\": %d, \"batch\": %d, \"min_ms\": %.4f, \"median_ms\": "
          "%.4f, "
          "\"mean_ms\": %.4f, \"p90_ms\": %.4f, \"max_ms\": %.4f, \"images_per_s\": %.3f, "
          "\"activation_bytes\": %llu, \"precision\": \"%s\"}",
          i ? "," : "", r.backend.c_str(), r.threads, r.batch, r.min_ms, r.median_ms, r.mean_ms, r.p90_ms,
          r.max_ms, r.images_per_s, static_cast<unsigned long long>(r.activation_bytes),
          json_escape(r.precision).c_str());
    }
    std::printf("\n]}\n");
    return VITRT_EXIT_OK;
  }
  std::printf("%s  (latency of one run, %d timed runs after %d warm-up; session creation not timed)\n",
              o.model.c_str(), o.repeat, o.warmup);
  std::printf(
      "| backend | threads | batch | median ms | min ms | p90 ms | max ms | images/s | activations |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (const Row& r : rows)
    std::printf("| %s | %d | %d | %.3f | %.3f | %.3f | %.3f | %.1f | %s |\n", r.backend.c_str(), r.threads,
                r.batch, r.median_ms, r.min_ms, r.p90_ms, r.max_ms, r.images_per_s,
                format_bytes(r.activation_bytes).c_str());
  for (size_t i = 0; i < rows.size(); ++i)  // once per distinct report
    if (i == 0 || rows[i].precision != rows[i - 1].precision)
      std::printf("precision (%s): %s\n", rows[i].backend.c_str(), rows[i].precision.c_str());
  return VITRT_EXIT_OK;
}

}  // namespace

Runner add_bench(CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* sub =
      app.add_subcommand("bench", "time Session::run for combinations of batch, threads and backend");
  sub->add_option("-m,--model", o->model, "model file (.vitrt)")->required();
  sub->add_option("--batch", o->batches, "batch sizes, comma separated")
      ->delimiter(',')
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  sub->add_option("-t,--threads", o->threads, "thread counts, comma separated")
      ->delimiter(',')
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  sub->add_option("-b,--backend", o->backends, "backends, comma separated")
      ->delimiter(',')
      ->capture_default_str();
  add_precision_option(sub, &o->precision);
  sub->add_option("-r,--repeat", o->repeat, "timed runs per combination")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  sub->add_option("--warmup", o->warmup, "untimed runs first")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000));
  sub->add_flag("--json", o->json, "machine-readable output");
  sub->add_flag("--profile", o->profile,
                "also print the time per op type and the slowest steps (timed runs only)");
  sub->add_option("--top", o->top, "with --profile: how many of the slowest steps to list")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000));
  return [o] { return run_bench(*o); };
}

}  // namespace vitrt::cli
