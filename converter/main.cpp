// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// vitrt-convert: PyTorch checkpoint (.pth zip / .safetensors) or ONNX -> .vitrt model (convert_command.cpp).
#include <iostream>

#include "convert_command.h"

int main(int argc, char** argv) {
  return vitrt::convert::convert_command(argc, argv, std::cout, std::cerr);
}
