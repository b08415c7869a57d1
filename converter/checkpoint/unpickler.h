// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// A restricted unpickler for torch.save's data.pkl (pickle protocols 2-5). It never executes code: globals
// resolve only from an allowlist (OrderedDict, torch tensor/parameter rebuilds and storages,
// argparse.Namespace, numpy scalars, sets, _codecs.encode); anything else becomes an opaque value that the
// caller refuses if it needs it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "checkpoint/pickle_value.h"
#include "common/status.h"

namespace vitrt::convert::pickle {

// Parses `size` bytes at `data`. `what` names the stream in messages (e.g. "'x.pth' data.pkl"). Malformed
// input (truncation, stack underflow, bad memo index, impossible lengths, unknown opcodes) gives bad_input.
Status unpickle(const uint8_t* data, size_t size, const std::string& what, Arena* arena, Value** root);

}  // namespace vitrt::convert::pickle
