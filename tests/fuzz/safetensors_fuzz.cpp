// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Fuzz target `safetensors`: file bytes -> the .safetensors reader (header length, JSON header, tensor
// bytes).
#include "checkpoint/checkpoint.h"
#include "checkpoint/safetensors.h"
#include "checkpoint_check.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static vitrt::fuzz::InputFile file("safetensors");
  vitrt::convert::Checkpoint ckpt;
  if (vitrt::fuzz::step_ok("load_safetensors",
                           vitrt::convert::load_safetensors(file.write(data, size), &ckpt)))
    vitrt::fuzz::check_checkpoint(ckpt);
  return 0;
}
