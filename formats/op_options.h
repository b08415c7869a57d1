// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Translation between the IR's typed op attributes and the schema's OpOptions union, both ways, in one place
// so the writer and the loader cannot drift apart.
#include <flatbuffers/flatbuffers.h>

#include <cstring>
#include <vector>

#include "ir/graph.h"
#include "vitrt_generated.h"

namespace vitrt {

struct EncodedOptions {
  fb::OpOptions type = fb::OpOptions::NONE;
  flatbuffers::Offset<void> offset;
};

EncodedOptions encode_op_options(flatbuffers::FlatBufferBuilder& fbb, const Node& node);

// Decodes and validates the options of an operator whose builtin is `type` (enum ranges, union type matching
// the op). `where` names the operator in messages.
Status decode_op_options(const fb::Operator& op, OpType type, const std::string& where, OpAttrs* out);

// The elements of a `[long]` vector, copied bytewise: the FlatBuffers verifier only checks a vector's 4-byte
// length alignment, so a crafted file may place int64 data off its 8-byte boundary (a misaligned load
// otherwise).
inline std::vector<int64_t> copy_int64_vector(const flatbuffers::Vector<int64_t>& v) {
  std::vector<int64_t> out(v.size());
  if (!out.empty()) std::memcpy(out.data(), v.Data(), out.size() * sizeof(int64_t));
  return out;
}
// The same for a `[double]` vector (ResizeOptions.scales).
inline std::vector<double> copy_double_vector(const flatbuffers::Vector<double>& v) {
  std::vector<double> out(v.size());
  if (!out.empty()) std::memcpy(out.data(), v.Data(), out.size() * sizeof(double));
  return out;
}

}  // namespace vitrt
