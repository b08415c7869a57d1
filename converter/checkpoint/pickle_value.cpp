// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "checkpoint/pickle_value.h"

namespace vitrt::convert::pickle {

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::kNone:
      return "None";
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "int";
    case Kind::kFloat:
      return "float";
    case Kind::kStr:
      return "str";
    case Kind::kBytes:
      return "bytes";
    case Kind::kTuple:
      return "tuple";
    case Kind::kList:
      return "list";
    case Kind::kDict:
      return "dict";
    case Kind::kSet:
      return "set";
    case Kind::kGlobal:
      return "class/function reference";
    case Kind::kStorage:
      return "storage";
    case Kind::kTensor:
      return "tensor";
    case Kind::kRecord:
      return "object";
    case Kind::kOpaque:
      return "object of a class outside the allowlist";
  }
  return "?";
}

const Value* dict_get(const Value* d, const std::string& key) {
  if (!d || d->kind != Kind::kDict) return nullptr;
  const Value* found = nullptr;
  for (const auto& kv : d->entries)
    if (kv.first->kind == Kind::kStr && kv.first->s == key) found = kv.second;
  return found;
}

}  // namespace vitrt::convert::pickle
