// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// `vitrt`: classify images, run tensors, preprocess, inspect and benchmark models (cli_main.cpp).
#include "cli_main.h"

int main(int argc, char** argv) {
  return vitrt::cli::cli_main(argc, argv);
}
