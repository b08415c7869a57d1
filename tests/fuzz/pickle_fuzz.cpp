// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Fuzz target `pickle`: data.pkl bytes -> the restricted unpickler -> state_dict selection (the torch.save
// reader's steps before it reads storages), without the zip around them.
#include <string>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "checkpoint/container.h"
#include "checkpoint/unpickler.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace pk = vitrt::convert::pickle;
  pk::Arena arena;
  pk::Value* root = nullptr;
  if (!vitrt::fuzz::step_ok("unpickle", pk::unpickle(data, size, "fuzz data.pkl", &arena, &root))) return 0;
  VITRT_FUZZ_CHECK(root != nullptr, "unpickle succeeded without a root value");
  vitrt::convert::Checkpoint ckpt;
  std::vector<vitrt::convert::SelectedTensor> tensors;
  if (!vitrt::fuzz::step_ok("select", vitrt::convert::select_state_dict(root, &ckpt, &tensors))) return 0;
  for (const auto& t : tensors) VITRT_FUZZ_CHECK(t.second != nullptr, "a selected tensor has no value");
  return 0;
}
