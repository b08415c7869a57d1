// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Values produced by the restricted unpickler. They live in an arena owned by the caller, so shared and even
// cyclic references (through the memo) cost nothing and free together.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace vitrt::convert::pickle {

enum class Kind {
  kNone,
  kBool,
  kInt,
  kFloat,
  kStr,
  kBytes,
  kTuple,
  kList,
  kDict,
  kSet,
  kGlobal,   // a class or function reference (module.name) that has not been called
  kStorage,  // a torch storage from a persistent id
  kTensor,   // torch._utils._rebuild_tensor_v2(...)
  kRecord,   // an allowlisted plain object (argparse.Namespace, numpy.dtype, torch.device): name + attributes
  kOpaque,   // anything built from a global outside the allowlist; never executed, refused if selected
};

struct Value {
  Kind kind = Kind::kNone;
  size_t where = 0;  // byte offset in the pickle of the opcode that made it
  bool b = false;
  bool big = false;  // an int that does not fit in int64 (i is saturated)
  int64_t i = 0;
  double f = 0;
  std::string s;              // str, bytes; global/record/opaque: "module.name"
  std::vector<Value*> items;  // tuple, list, set
  std::vector<std::pair<Value*, Value*>>
      entries;  // dict items in order (later duplicates win); record attributes
  // kStorage
  std::string storage_type;  // e.g. "FloatStorage"
  std::string key;           // zip entry data/<key>
  int64_t numel = 0;
  // kTensor
  Value* storage = nullptr;
  int64_t offset = 0;
  std::vector<int64_t> size, stride;
};

class Arena {
 public:
  Value* make(Kind kind, size_t where) {
    values_.push_back(std::make_unique<Value>());
    values_.back()->kind = kind;
    values_.back()->where = where;
    return values_.back().get();
  }

 private:
  std::vector<std::unique_ptr<Value>> values_;
};

const char* kind_name(Kind kind);

// The value of dict `d` under string key `key` (the last one, as Python would keep), or nullptr.
const Value* dict_get(const Value* d, const std::string& key);

}  // namespace vitrt::convert::pickle
