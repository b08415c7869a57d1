// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// vitrt preprocess -m MODEL IMAGE --output X.npy: the exact tensor the model would get for IMAGE.
#include "cli_common.h"

namespace vitrt::cli {
namespace {

struct Options {
  std::string model, image, output;
};

int run_preprocess(const Options& o) {
  std::unique_ptr<api::Model> model;
  if (int rc = load_model_or_report(o.model, &model)) return rc;
  const api::InputShape in = model->input_shape();
  std::vector<float> x(in.elements());
  try {
    api::preprocess_image(*model, o.image, x);
  } catch (const api::Error& e) {
    return report_error("preprocess", e, false);
  }
  try {
    api::write_npy(o.output, x, {1, in.channels, in.height, in.width});
  } catch (const api::Error& e) {
    return report_error("--output", e, false);
  }
  return VITRT_EXIT_OK;
}

}  // namespace

Runner add_preprocess(CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* sub =
      app.add_subcommand("preprocess", "write the preprocessed input tensor of an image as .npy [1,C,H,W]");
  sub->add_option("-m,--model", o->model, "model file (.vitrt)")->required();
  sub->add_option("image", o->image, "PNG or JPEG image")->required();
  sub->add_option("-o,--output", o->output, "output .npy")->required();
  sub->footer(input_limits_help());
  return [o] { return run_preprocess(*o); };
}

}  // namespace vitrt::cli
