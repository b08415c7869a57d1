// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// vitrt-convert: PyTorch checkpoint (.pth zip / .safetensors) -> .vitrt model. No Python involved.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "arch/arch.h"
#include "checkpoint/checkpoint.h"
#include "common/exit_codes.h"
#include "loader/model_loader.h"
#include "model_writer.h"

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

int fail(const std::string& what, const Status& st, int code) {
  std::cerr << "vitrt-convert: " << what << ": " << st.message() << "\n";
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"vitrt-convert: convert a PyTorch checkpoint (torch.save zip or .safetensors) into a .vitrt model.\n"
               "The architecture and its sizes (width, depth, heads, classes) are read from the checkpoint keys;\n"
               "containers {'model': sd}, timm's CheckpointSaver (state_dict_ema preferred, 'module.' stripped)\n"
               "and raw state_dicts are accepted. Exit codes: 0 ok, 1 usage, 2 bad checkpoint, 3 bad input file\n"
               "(e.g. labels), 4 runtime failure."};
  std::string checkpoint, output, mean_text, std_text;
  convert::ConvertOptions opt;
  bool verify = true;
  app.add_option("checkpoint", checkpoint, "PyTorch checkpoint (.pth/.pt zip, or .safetensors)")->required();
  app.add_option("-o,--output", output, "output model file (.vitrt)")->required();
  app.add_option("--arch", opt.arch, "architecture: " + convert::known_archs() + " (auto: detect from the keys)")
      ->capture_default_str();
  app.add_option("--labels", opt.labels_path, "class labels, one per line (default: class_0, class_1, ...)");
  app.add_option("--image-size", opt.image_size, "input side the model is built for (default: the checkpoint's)");
  app.add_option("--emit", opt.emit,
                 "fused: first-class attention ops | primitive: softmax attention, SOFT linear attention, LaViT "
                 "reused attention and attention residual as the plain ops PyTorch runs (the planner fuses them "
                 "back; SOFT-Norm's data-dependent inverse stays fused)")
      ->check(CLI::IsMember({"fused", "primitive"}))
      ->capture_default_str();
  app.add_option("--heads", opt.heads, "head count per stage, comma separated (default: the family's)");
  app.add_option("--resize", opt.resize, "shorter side after resize (default: checkpoint args, else the family's)");
  app.add_option("--crop", opt.crop, "centre crop size (default: the input size)");
  app.add_option("--interp", opt.interpolation, "bilinear | bicubic (default: checkpoint args, else the family's)");
  app.add_option("--mean", mean_text, "normalisation mean, M or M,M,M (default: ImageNet)");
  app.add_option("--std", std_text, "normalisation std, S or S,S,S (default: ImageNet)");
  app.add_flag("!--no-verify", verify, "skip loading the written file back through the engine's verifier");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  if (!mean_text.empty() && !parse_float_list(mean_text, &opt.mean)) {
    std::cerr << "vitrt-convert: --mean: '" << mean_text << "' is not a comma-separated list of numbers\n";
    return kExitUsage;
  }
  if (!std_text.empty() && !parse_float_list(std_text, &opt.std)) {
    std::cerr << "vitrt-convert: --std: '" << std_text << "' is not a comma-separated list of numbers\n";
    return kExitUsage;
  }

  convert::Checkpoint ckpt;
  Status st = convert::load_checkpoint(checkpoint, &ckpt);
  if (!st.ok()) return fail("cannot read checkpoint '" + checkpoint + "'", st, kExitBadModel);
  std::cerr << "checkpoint: " << checkpoint << " (" << ckpt.tensors.size() << " tensors from '" << ckpt.container
            << "')\n";
  Graph graph;
  std::string log;
  st = convert::convert_checkpoint(ckpt, opt, &graph, &log);
  std::cerr << log;
  if (!st.ok()) {
    const int code = st.code() == StatusCode::kInvalidArgument ? kExitUsage
                     : st.code() == StatusCode::kIo             ? kExitBadInput
                                                                : kExitBadModel;
    return fail("'" + checkpoint + "'", st, code);
  }
  st = write_model_file(graph, output);
  if (!st.ok()) return fail("cannot write the model", st, kExitRuntime);
  if (verify) {
    std::shared_ptr<const Model> model;
    st = load_model(output, &model);
    if (!st.ok()) return fail("the written model does not verify", st, kExitRuntime);
  }
  uint64_t weights = 0;
  for (const Tensor& t : graph.tensors) weights += t.is_constant ? t.constant.size : 0;
  std::printf("wrote %s: %s, %zu ops, %.2f MB of weights\n", output.c_str(), graph.metadata.arch.c_str(),
              graph.nodes.size(), weights / 1e6);
  return kExitOk;
}
