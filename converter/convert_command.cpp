// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// vitrt-convert's command line and conversion: PyTorch checkpoint (.pth zip / .safetensors) or ONNX -> .vitrt
// model. No Python involved.
#include "convert_command.h"

#include <sys/stat.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <new>
#include <ostream>

#include "arch/arch.h"
#include "arch/vit_attention.h"
#include "checkpoint/checkpoint.h"
#include "checkpoint/read_limits.h"
#include "common/exit_codes.h"
#include "loader/model_loader.h"
#include "model_writer.h"
#include "onnx/importer.h"
#include "onnx/onnx_file.h"

using namespace vitrt;

namespace {

bool parse_float_list(const std::string& text, std::vector<float>* out) {
  out->clear();
  size_t p = 0;
  while (p <= text.size()) {
    size_t e = text.find(',', p);
    if (e == std::string::npos) e = text.size();
    const std::string item = text.substr(p, e - p);
    char* end = nullptr;
    const float v = std::strtof(item.c_str(), &end);
    if (item.empty() || *end != '\0') return false;
    out->push_back(v);
    p = e + 1;
  }
  return !out->empty();
}

int fail(std::ostream& err, const std::string& what, const Status& st, int code) {
  err << "vitrt-convert: " << what << ": " << st.message() << "\n";
  return code;
}

bool all_finite(const std::vector<float>& v) {
  for (float x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

// Whether two paths name the same existing file (writing the model over its own checkpoint).
bool same_file(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

// Drops the graph's constant data (the weights) and hands the freed memory back to the system.
void release_constants(Graph* graph) {
  for (Tensor& t : graph->tensors) t.constant = ConstantData{};
#if defined(__GLIBC__)
  malloc_trim(0);  // freed blocks below the top of the heap are otherwise kept by glibc
#endif
}

// The help text; its limits come from the constants that enforce them.
std::string help_text() {
  using namespace convert;
  auto mib = [](uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; };
  return "vitrt-convert: convert a PyTorch checkpoint (torch.save zip or .safetensors) into a .vitrt model.\n"
         "An ONNX model (opsets 7-25, recognised by its content) is imported instead (docs/onnx.md).\n"
         "The architecture and its sizes (width, depth, heads, classes) are read from the checkpoint keys;\n"
         "containers {'model': sd}, timm's CheckpointSaver (state_dict_ema preferred, 'module.' stripped)\n"
         "and raw state_dicts are accepted. Exit codes: 0 ok, 1 usage, 2 bad checkpoint, 3 bad input file\n"
         "(e.g. labels), 4 runtime failure.\n"
         "The output is written to a new temporary file next to it, verified, then renamed over OUTPUT; an\n"
         "OUTPUT that exists and is not a regular file (symlink, FIFO, device, directory) is refused.\n"
         "Limits on untrusted inputs: the checkpoint must be a regular file; its tensor data may expand to "
         "at\n"
         "most " +
         std::to_string(kExpansionPerFileByte) + "x the file size + " + mib(kExpansionSlackBytes) +
         " (storage bytes read plus float32 values; stride-0 views,\n"
         "aliased storages and zip bombs count in full); zip entries are stored or deflated (at most " +
         std::to_string(kMaxDeflateRatio) +
         ":1);\n"
         "data.pkl at most " +
         mib(kMaxPickleBytes) + ", its objects at most " + mib(kMaxPickleObjectBytes) +
         "; a safetensors header at most " + mib(kMaxSafetensorsHeaderBytes) + " and " +
         std::to_string(kMaxSafetensorsHeaderDepth) +
         " levels deep.\n"
         "Weights must be floating-point and finite. A table the converter computes (a resized position\n"
         "embedding) holds at most 2^28 values. Labels: a regular file of at most " +
         mib(kMaxLabelsFileBytes) + ", lines of at most " + std::to_string(kMaxLabelBytes) +
         " bytes,\n"
         "one per class. --image-size, --resize, --crop: 1 to " +
         std::to_string(kMaxImageSide) + ".";
}

int parse_and_convert(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
                      int* oom_exit) {
  CLI::App app{help_text()};
  std::string checkpoint, output, mean_text, std_text;
  convert::ConvertOptions opt;
  bool verify = true;
  const auto side = CLI::Range(1, convert::kMaxImageSide);
  app.add_option("checkpoint", checkpoint,
                 "PyTorch checkpoint (.pth/.pt zip, or .safetensors), or an ONNX model (detected by content)")
      ->required();
  app.add_option("-o,--output", output, "output model file (.vitrt)")->required();
  app.add_option("--arch", opt.arch,
                 "architecture: " + convert::known_archs() + " (auto: detect from the keys)")
      ->capture_default_str();
  app.add_option("--labels", opt.labels_path,
                 "class labels, one per line, one per class (default: class_0, class_1, ...); a regular file "
                 "of at most 16 MiB");
  app.add_option(
      "--onnx-output", opt.onnx_output,
      "ONNX: the graph output the model computes, by name (default: the first; a vitrt model has one "
      "output, and only the nodes it needs are imported)");
  app.add_option("--image-size", opt.image_size,
                 "input side the model is built for, 1-65536 (default: the checkpoint's)")
      ->check(side);
  app.add_option(
         "--emit", opt.emit,
         "fused: first-class attention ops | primitive: softmax attention, SOFT linear attention, LaViT "
         "reused attention and attention residual, Performer as the plain ops PyTorch runs (the planner "
         "fuses "
         "them back; SOFT-Norm's data-dependent inverse stays fused)")
      ->check(CLI::IsMember({"fused", "primitive"}))
      ->capture_default_str();
  app.add_option("--attn", opt.attn,
                 "ViT/DeiT: the attention mechanism at blocks.{i}.attn: auto (detect from the keys), " +
                     convert::known_vit_attentions())
      ->capture_default_str();
  app.add_option("--heads", opt.heads, "head count per stage, comma separated (default: the family's)");
  app.add_option(
         "--pool", opt.pool,
         "ViT/DeiT head: token (the class token), mean (the mean of the patch tokens), auto (token when "
         "the checkpoint has cls_token, else mean)")
      ->check(CLI::IsMember({"auto", "token", "mean"}))
      ->capture_default_str();
  app.add_option(
         "--landmarks", opt.landmarks,
         "ViT with --attn nystrom: landmark count, 1 to 2^31-1, where the checkpoint args do not give "
         "num_landmarks (a different value from them is refused)")
      ->check(CLI::Range(int64_t{1}, int64_t{2147483647}));
  app.add_option("--nystrom-init", opt.nystrom_init,
                 "ViT with --attn nystrom: the inverse's first iterate, global (the official LRA code's "
                 "\"original\": one max over the batch and heads, so images of a batch affect each other) or "
                 "per_head (per image and head, T2T-ViT's \"exact\")")
      ->check(CLI::IsMember({"auto", "global", "per_head"}))
      ->capture_default_str();
  app.add_option("--resize", opt.resize,
                 "shorter side after resize, 1-65536 (default: checkpoint args, else the family's)")
      ->check(side);
  app.add_option("--crop", opt.crop, "centre crop size, 1-65536 (default: the input size)")->check(side);
  app.add_option("--interp", opt.interpolation,
                 "bilinear | bicubic (default: checkpoint args, else the family's)");
  app.add_option("--mean", mean_text, "normalisation mean, M or M,M,M, finite (default: ImageNet)");
  app.add_option("--std", std_text, "normalisation std, S or S,S,S, finite and > 0 (default: ImageNet)");
  app.add_flag("!--no-verify", verify, "skip loading the written file back through the engine's verifier");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e, out, err) == 0 ? kExitOk : kExitUsage;
  }
  if (!mean_text.empty() && (!parse_float_list(mean_text, &opt.mean) || !all_finite(opt.mean))) {
    err << "vitrt-convert: --mean: '" << mean_text << "' is not a comma-separated list of finite numbers\n";
    return kExitUsage;
  }
  if (!std_text.empty() && (!parse_float_list(std_text, &opt.std) || !all_finite(opt.std))) {
    err << "vitrt-convert: --std: '" << std_text << "' is not a comma-separated list of finite numbers\n";
    return kExitUsage;
  }
  for (float v : opt.std)
    if (!(v > 0)) {
      err << "vitrt-convert: --std: '" << std_text << "' has a value that is not positive\n";
      return kExitUsage;
    }
  Status st = convert::check_options(opt);
  if (!st.ok()) return fail(err, "bad option", st, kExitUsage);
  st = check_model_output_path(output);
  if (!st.ok()) return fail(err, "cannot write the model", st, kExitUsage);
  if (same_file(checkpoint, output)) {
    err << "vitrt-convert: the output '" << output << "' is the checkpoint itself\n";
    return kExitUsage;
  }

  // The labels file first (a bad one fails fast, before the checkpoint is read); it is matched against the
  // model's classes once the model is built. Its failures exit with 3, the checkpoint's with 2.
  std::vector<std::string> labels;
  const std::string labels_path = opt.labels_path;
  opt.labels_path.clear();
  if (!labels_path.empty()) {
    *oom_exit = kExitBadInput;
    st = convert::read_labels_file(labels_path, &labels);
    if (!st.ok()) return fail(err, "bad labels file", st, kExitBadInput);
  }

  *oom_exit = kExitBadModel;
  convert::Checkpoint ckpt;
  Graph graph;
  std::string log;
  const bool onnx = convert::looks_like_onnx(checkpoint);
  if (onnx) {  // by content, whatever the extension (docs/onnx.md)
    err << "onnx model: " << checkpoint << "\n";
    st = convert::convert_onnx_file(checkpoint, opt, &graph, &log);
  } else {
    st = convert::load_checkpoint(checkpoint, &ckpt);
    if (!st.ok()) return fail(err, "cannot read checkpoint '" + checkpoint + "'", st, kExitBadModel);
    err << "checkpoint: " << checkpoint << " (" << ckpt.tensors.size() << " tensors from '" << ckpt.container
        << "')\n";
    st = convert::convert_checkpoint(ckpt, opt, &graph, &log);
  }
  err << log;
  if (!st.ok()) {
    const int code = st.code() == StatusCode::kInvalidArgument ? kExitUsage
                     : st.code() == StatusCode::kIo && !onnx   ? kExitBadInput
                                                               : kExitBadModel;
    return fail(err, "'" + checkpoint + "'", st, code);
  }
  ckpt = convert::Checkpoint();  // the graph holds its own copy of the weights
  if (!labels_path.empty()) {
    *oom_exit = kExitBadInput;
    st = convert::apply_labels(std::move(labels), "labels file '" + labels_path + "'", &graph);
    if (!st.ok()) return fail(err, "bad labels file", st, kExitBadInput);
  }

  *oom_exit = kExitRuntime;
  uint64_t weights = 0;
  for (const Tensor& t : graph.tensors) weights += t.is_constant ? t.constant.size : 0;
  const std::string arch = graph.metadata.arch;
  const size_t ops = graph.nodes.size();
  bool verify_failed = false;
  ModelFileCheck check;
  if (verify)
    check = [&graph, &verify_failed](const std::string& written) {
      // Every byte of the graph is in the file once the check runs, and write_model_file reads the graph no
      // more: its weights are dropped before the file is mapped back, so they are not in memory twice
      // (docs/onnx.md, Cost of an import).
      release_constants(&graph);
      std::shared_ptr<const Model> model;
      Status s = load_model(written, &model);
      verify_failed = !s.ok();
      return s;
    };
  st = write_model_file(graph, output, check);
  if (!st.ok()) {
    if (verify_failed)
      return fail(err, "the written model does not verify, nothing was written", st, kExitRuntime);
    return fail(err, "cannot write the model", st,
                st.code() == StatusCode::kInvalidArgument ? kExitUsage : kExitRuntime);
  }
  char mb[32];
  std::snprintf(mb, sizeof mb, "%.2f", weights / 1e6);
  out << "wrote " << output << ": " << arch << ", " << ops << " ops, " << mb << " MB of weights\n";
  return kExitOk;
}

}  // namespace

namespace vitrt::convert {

int convert_command(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  // The exit code an allocation failure gets: the checkpoint's (2) while it is read and converted, the labels
  // file's (3) while that is read. Every reader turns bad_alloc into a Status; this is the last resort.
  int oom_exit = kExitBadModel;
  try {
    return parse_and_convert(argc, argv, out, err, &oom_exit);
  } catch (const std::bad_alloc&) {
    err << "vitrt-convert: out of memory\n";
    return oom_exit;
  } catch (const std::exception& e) {
    err << "vitrt-convert: internal error: " << e.what() << "\n";
    return kExitRuntime;
  }
}

}  // namespace vitrt::convert
