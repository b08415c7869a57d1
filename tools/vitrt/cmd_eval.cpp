// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// vitrt eval -m MODEL DIR: top-1/top-5 accuracy over an ImageFolder-style directory (one sub-folder per
// class, as ImageNet validation sets are laid out), with images/s, a progress bar and --json.
// --compare-precision P runs a second session in precision P on the same decoded batches and reports how
// often the two top-1 predictions agree and P's top-1 accuracy (the bf16 accuracy table of
// docs/architecture.md §7.1).
//
// Folder -> class: a folder whose name matches one of the model's labels (case-insensitively, punctuation and
// spaces ignored) is that class; otherwise folders are numbered in sorted order, as torchvision's ImageFolder
// does, which requires as many folders as the model has classes.
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "cli_common.h"

namespace vitrt::cli {
namespace {

struct Options {
  RunOptions run;
  std::string dir;
  bool json = false;
  int64_t limit = 0;
  std::string predictions_path;
  std::string compare_precision;  // empty: no second session
};

// The top-1 class: the first of the largest logits, as argmax.
int argmax(const float* logits, int classes) {
  int best = 0;
  for (int c = 1; c < classes; ++c)
    if (logits[c] > logits[best]) best = c;
  return best;
}

std::string normalize(const std::string& s) {
  std::string o;
  for (unsigned char c : s)
    if (std::isalnum(c)) o += static_cast<char>(std::tolower(c));
  return o;
}

struct Sample {
  std::string path;
  int label;
};

// Throws api::Error (bad input, or an I/O error for an unreadable directory) naming the directory.
void list_samples(const std::string& dir, const std::vector<std::string>& labels,
                  std::vector<Sample>* samples, std::string* mapping_note) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw api::Error(VITRT_ERR_BAD_INPUT, "'" + dir + "' is not a directory");
  // Class folders are the real sub-directories: a symlinked folder could be DIR itself or another class.
  std::vector<std::string> folders;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_symlink(ec) && it->is_directory(ec)) {
      std::fprintf(stderr, "vitrt: note: not following '%s', a symlink to a directory\n", it->path().c_str());
      continue;
    }
    if (it->is_directory(ec)) folders.push_back(it->path().filename().string());
  }
  if (ec) throw api::Error(VITRT_ERR_IO, "cannot read '" + dir + "': " + ec.message());
  std::sort(folders.begin(), folders.end());
  if (folders.empty())
    throw api::Error(VITRT_ERR_BAD_INPUT,
                     "'" + dir + "' has no class sub-folders (expected DIR/<class>/<image>)");
  std::map<std::string, int> by_label;
  for (size_t i = 0; i < labels.size(); ++i) by_label.emplace(normalize(labels[i]), static_cast<int>(i));
  bool all_match = true;
  for (const auto& f : folders) all_match = all_match && by_label.count(normalize(f));
  if (!all_match && folders.size() != labels.size())
    throw api::Error(VITRT_ERR_BAD_INPUT, "'" + dir + "' has " + std::to_string(folders.size()) +
                                              " class folders whose names are not all "
                                              "model labels, and the model has " +
                                              std::to_string(labels.size()) + " classes");
  *mapping_note =
      all_match ? "folders matched to labels by name" : "folders numbered in sorted order (ImageFolder)";
  // One walk over every class, so that a file linked into two class folders is counted once (in the first).
  ImageWalk walk;
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0) walk.dirs.insert({st.st_dev, st.st_ino});
  for (size_t i = 0; i < folders.size(); ++i) {
    const int label = all_match ? by_label[normalize(folders[i])] : static_cast<int>(i);
    std::vector<std::string> images;
    collect_images({(fs::path(dir) / folders[i]).string()}, &images, &walk);
    for (auto& p : images) samples->push_back({std::move(p), label});
  }
}

int run_eval(const Options& o) {
  std::unique_ptr<api::Model> model;
  if (int rc = load_model_or_report(o.run.model_path, &model)) return rc;
  const std::vector<std::string> labels = model->labels();
  std::vector<Sample> samples;
  std::string note;
  try {
    list_samples(o.dir, labels, &samples, &note);
  } catch (const api::Error& e) {
    return report_error("eval", e, false);
  }
  if (o.limit > 0 && static_cast<int64_t>(samples.size()) > o.limit) samples.resize(o.limit);
  std::fprintf(stderr, "eval: %zu images in '%s' (%s)\n", samples.size(), o.dir.c_str(), note.c_str());
  const size_t per_image = model->input_shape().elements();
  const int batch = static_cast<int>(std::min<size_t>(o.run.batch, std::max<size_t>(samples.size(), 1)));
  std::unique_ptr<api::Session> session;
  if (int rc = create_session_or_report(*model, o.run, batch, &session)) return rc;
  std::unique_ptr<api::Session> other;  // --compare-precision
  if (!o.compare_precision.empty()) {
    RunOptions ro = o.run;
    ro.precision = o.compare_precision;
    if (int rc = create_session_or_report(*model, ro, batch, &other)) return rc;
  }
  const int classes = model->num_classes();
  std::vector<float> x(per_image * batch), y(static_cast<size_t>(classes) * batch);
  std::vector<float> y_other(other ? y.size() : 0);
  int64_t other_top1 = 0, agree = 0;
  std::vector<int> labels_in_batch(batch);
  std::vector<size_t> sample_in_batch(batch);
  std::ofstream predictions;
  if (!o.predictions_path.empty()) {
    predictions.open(o.predictions_path);
    if (!predictions)
      return report_error(
          "eval", api::Error(VITRT_ERR_IO, "cannot write predictions file '" + o.predictions_path + "'"),
          false);
    predictions << "# image\ttrue\tpredicted\tprobability (softmax of the top-1 logit)\n";
  }
  int64_t top1 = 0, top5 = 0, seen = 0, unreadable = 0;
  std::vector<int64_t> per_class_total(classes), per_class_hit(classes);
  Progress progress(samples.size(), "eval");
  // Inference time of each session; the compared session's is left out of the first's speeds, end to end too.
  double infer_s = 0, other_infer_s = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t start = 0; start < samples.size(); start += batch) {
    int n = 0;
    for (size_t i = start; i < std::min(samples.size(), start + batch); ++i) {
      try {
        api::preprocess_image(*model, samples[i].path, api::Span<float>(x.data() + per_image * n, per_image));
      } catch (const api::Error& e) {
        std::cerr << "vitrt: eval: " << e.what() << "\n";
        ++unreadable;
        continue;
      }
      sample_in_batch[n] = i;
      labels_in_batch[n++] = samples[i].label;
    }
    if (n > 0) {
      const auto r0 = std::chrono::steady_clock::now();
      try {
        session->run(x.data(), n, y.data(), y.size());
        const auto r1 = std::chrono::steady_clock::now();
        infer_s += std::chrono::duration<double>(r1 - r0).count();
        if (other) {
          other->run(x.data(), n, y_other.data(), y_other.size());
          other_infer_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - r1).count();
        }
      } catch (const api::Error& e) {
        return report_error("eval", e, false);
      }
      for (int j = 0; j < n; ++j) {
        const float* l = y.data() + static_cast<size_t>(classes) * j;
        const int truth = labels_in_batch[j];
        int rank =
            0;  // classes scoring strictly higher than the truth (ties go to the lower index, as argmax)
        for (int c = 0; c < classes; ++c)
          if (l[c] > l[truth] || (l[c] == l[truth] && c < truth)) ++rank;
        top1 += rank == 0;
        top5 += rank < 5;
        if (other) {
          const int best = argmax(l, classes);
          const int other_best = argmax(y_other.data() + static_cast<size_t>(classes) * j, classes);
          agree += best == other_best;
          other_top1 += other_best == truth;
        }
        if (predictions.is_open()) {
          const int best = argmax(l, classes);
          double z = 0;
          for (int c = 0; c < classes; ++c) z += std::exp(static_cast<double>(l[c]) - l[best]);
          predictions << samples[sample_in_batch[j]].path << '\t' << truth << '\t' << best << '\t' << 1.0 / z
                      << '\n';
        }
        per_class_total[truth]++;
        per_class_hit[truth] += rank == 0;
        ++seen;
      }
    }
    progress.update(std::min(samples.size(), start + batch));
  }
  progress.finish();
  if (predictions.is_open() && !predictions.flush())
    return report_error(
        "eval", api::Error(VITRT_ERR_IO, "cannot write predictions file '" + o.predictions_path + "'"),
        false);
  const double total_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() - other_infer_s;
  const double acc1 = seen ? 100.0 * top1 / seen : 0, acc5 = seen ? 100.0 * top5 / seen : 0;
  const double other_acc1 = seen ? 100.0 * other_top1 / seen : 0, agreement = seen ? 100.0 * agree / seen : 0;
  if (o.json) {
    std::printf(
        "{\"model\": \"%s\", \"dir\": \"%s\", \"images\": %lld, \"unreadable\": %lld, \"top1\": %.4f, "
        "\"top5\": %.4f, \"images_per_s\": %.2f, \"inference_images_per_s\": %.2f, \"backend\": \"%s\", "
        "\"batch\": %d, \"per_class_top1\": {",
        json_escape(o.run.model_path).c_str(), json_escape(o.dir).c_str(), static_cast<long long>(seen),
        static_cast<long long>(unreadable), acc1, acc5, seen / std::max(total_s, 1e-9),
        seen / std::max(infer_s, 1e-9), session->backend_name().c_str(), batch);
    bool first = true;
    for (int c = 0; c < classes; ++c) {
      if (!per_class_total[c]) continue;
      const std::string name = c < static_cast<int>(labels.size()) ? labels[c] : std::to_string(c);
      std::printf("%s\"%s\": %.4f", first ? "" : ", ", json_escape(name).c_str(),
                  100.0 * per_class_hit[c] / per_class_total[c]);
      first = false;
    }
    std::printf("}");
    if (other)
      std::printf(
          ", \"precision\": \"%s\", \"compare\": {\"precision\": \"%s\", \"top1\": %.4f, \"top1_delta\": "
          "%.4f, "
          "\"agreement\": %.4f, \"differ\": %lld, \"inference_images_per_s\": %.2f}",
          json_escape(session->precision()).c_str(), json_escape(other->precision()).c_str(), other_acc1,
          other_acc1 - acc1, agreement, static_cast<long long>(seen - agree),
          seen / std::max(other_infer_s, 1e-9));
    std::printf("}\n");
  } else {
    std::printf("images     %lld (%lld unreadable)\n", static_cast<long long>(seen),
                static_cast<long long>(unreadable));
    std::printf("top-1      %.2f%%\ntop-5      %.2f%%\n", acc1, acc5);
    std::printf(
        "speed      %.1f images/s end to end (decode + preprocess + inference), %.1f images/s inference "
        "only (backend %s, batch %d, %d thread(s))\n",
        seen / std::max(total_s, 1e-9), seen / std::max(infer_s, 1e-9), session->backend_name().c_str(),
        batch, o.run.threads);
    if (other) {
      std::printf("precision  %s\ncompared   %s (%.1f images/s inference only)\n",
                  session->precision().c_str(), other->precision().c_str(),
                  seen / std::max(other_infer_s, 1e-9));
      std::printf("top-1      %.2f%% (%+.2f points)\nagreement  %.2f%% of top-1 predictions (%lld differ)\n",
                  other_acc1, other_acc1 - acc1, agreement, static_cast<long long>(seen - agree));
    }
  }
  return unreadable ? VITRT_EXIT_BAD_INPUT : VITRT_EXIT_OK;
}

}  // namespace

Runner add_eval(CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* sub =
      app.add_subcommand("eval", "top-1/top-5 accuracy over an ImageFolder directory (DIR/<class>/<image>)");
  add_run_options(sub, &o->run);
  sub->add_option("dir", o->dir, "directory with one sub-folder per class")->required();
  sub->add_option("--limit", o->limit, "evaluate at most this many images (0: all)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  sub->add_flag("--json", o->json, "machine-readable output");
  sub->add_option("--predictions", o->predictions_path,
                  "write one line per image: path, true class, predicted class, its probability (TSV)");
  sub->add_option(
      "--compare-precision", o->compare_precision,
      "also run every batch in this precision (fp32 | bf16) and report its top-1 accuracy and how "
      "often its top-1 agrees with --precision's");
  sub->footer(input_limits_help());
  return [o] { return run_eval(*o); };
}

}  // namespace vitrt::cli
