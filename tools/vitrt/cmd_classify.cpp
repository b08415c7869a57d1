// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// vitrt classify -m MODEL IMAGE_OR_DIR... [-k 5] [--json]: top-k labels with probabilities per image.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "cli_common.h"
#include "top_k.h"

namespace vitrt::cli {
namespace {

struct Options {
  RunOptions run;
  std::vector<std::string> inputs;
  int top_k = 5;
  bool json = false;
};

struct Result {
  std::string image;
  std::string error;
  std::vector<ClassScore> top;
};

int run_classify(const Options& o) {
  std::unique_ptr<api::Model> model;
  if (int rc = load_model_or_report(o.run.model_path, &model)) return rc;
  std::vector<std::string> images;
  try {
    collect_images(o.inputs, &images);
  } catch (const api::Error& e) {
    return report_error("classify", e, false);
  }
  const size_t per_image = model->input_shape().elements();
  const int batch = static_cast<int>(std::min<size_t>(o.run.batch, std::max<size_t>(images.size(), 1)));
  std::unique_ptr<api::Session> session;
  if (int rc = create_session_or_report(*model, o.run, batch, &session)) return rc;
  const int classes = model->num_classes();

  std::vector<float> input(per_image * batch), logits(static_cast<size_t>(classes) * batch);
  std::vector<Result> results(images.size());
  Progress progress(images.size(), "classify");
  int failed = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t start = 0; start < images.size(); start += batch) {
    // Preprocess this chunk; images that fail are reported and skipped, the rest still run.
    std::vector<size_t> ok;
    for (size_t i = start; i < std::min(images.size(), start + batch); ++i) {
      results[i].image = images[i];
      try {
        api::preprocess_image(*model, images[i],
                              api::Span<float>(input.data() + per_image * ok.size(), per_image));
      } catch (const api::Error& e) {
        results[i].error = e.what();
        std::cerr << "vitrt: classify: " << e.what() << "\n";
        ++failed;
        continue;
      }
      ok.push_back(i);
    }
    if (!ok.empty()) {
      try {
        session->run(input.data(), static_cast<int32_t>(ok.size()), logits.data(), logits.size());
      } catch (const api::Error& e) {
        return report_error("classify", e, false);
      }
      for (size_t j = 0; j < ok.size(); ++j)
        results[ok[j]].top =
            softmax_top_k(logits.data() + static_cast<size_t>(classes) * j, classes, o.top_k);
    }
    progress.update(std::min(images.size(), start + batch));
  }
  progress.finish();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::vector<std::string> labels = model->labels();
  auto label = [&](int c) {
    return c < static_cast<int>(labels.size()) ? labels[c] : "class_" + std::to_string(c);
  };
  if (o.json) {
    std::printf("{\"model\": \"%s\", \"results\": [", json_escape(o.run.model_path).c_str());
    for (size_t i = 0; i < results.size(); ++i) {
      const Result& r = results[i];
      std::printf("%s\n  {\"image\": \"%s\", ", i ? "," : "", json_escape(r.image).c_str());
      if (!r.error.empty()) {
        std::printf("\"error\": \"%s\"}", json_escape(r.error).c_str());
        continue;
      }
      std::printf("\"top\": [");
      for (size_t k = 0; k < r.top.size(); ++k)
        std::printf("%s{\"index\": %d, \"label\": \"%s\", \"probability\": %.6g, \"logit\": %.6g}",
                    k ? ", " : "", r.top[k].index, json_escape(label(r.top[k].index)).c_str(),
                    r.top[k].probability, r.top[k].logit);
      std::printf("]}");
    }
    std::printf("\n]}\n");
  } else {
    for (const Result& r : results) {
      if (!r.error.empty()) continue;
      std::printf("%s\n", r.image.c_str());
      for (size_t k = 0; k < r.top.size(); ++k)
        std::printf("  %d. %-24s %6.2f%%  (class %d)\n", static_cast<int>(k + 1),
                    label(r.top[k].index).c_str(), 100.0 * r.top[k].probability, r.top[k].index);
    }
  }
  std::fprintf(stderr, "classified %zu image(s) in %.3f s (%.1f images/s, backend %s, batch %d)\n",
               images.size() - failed, secs, (images.size() - failed) / std::max(secs, 1e-9),
               session->backend_name().c_str(), batch);
  if (failed) {
    std::fprintf(stderr, "vitrt: %d image(s) could not be read\n", failed);
    return VITRT_EXIT_BAD_INPUT;
  }
  return VITRT_EXIT_OK;
}

}  // namespace

Runner add_classify(CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand("classify", "classify images (PNG/JPEG files or directories of them)");
  add_run_options(sub, &o->run);
  sub->add_option("images", o->inputs, "image files or directories")->required();
  sub->add_option("-k,--top-k", o->top_k, "how many classes to print per image")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  sub->add_flag("--json", o->json, "machine-readable output");
  sub->footer(input_limits_help());
  return [o] { return run_classify(*o); };
}

}  // namespace vitrt::cli
