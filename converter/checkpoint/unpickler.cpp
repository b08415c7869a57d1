// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "checkpoint/unpickler.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <unordered_map>
#include <vector>

#include "checkpoint/read_limits.h"

namespace vitrt::convert::pickle {
namespace {

// Opcodes (CPython Lib/pickle.py).
enum : uint8_t {
  MARK = '(',
  STOP = '.',
  POP = '0',
  POP_MARK = '1',
  DUP = '2',
  BININT = 'J',
  BININT1 = 'K',
  BININT2 = 'M',
  NONE = 'N',
  BINPERSID = 'Q',
  REDUCE = 'R',
  BINSTRING = 'T',
  SHORT_BINSTRING = 'U',
  BINUNICODE = 'X',
  APPEND = 'a',
  BUILD = 'b',
  GLOBAL = 'c',
  DICT = 'd',
  EMPTY_DICT = '}',
  APPENDS = 'e',
  BINGET = 'h',
  LONG_BINGET = 'j',
  LIST = 'l',
  EMPTY_LIST = ']',
  BINPUT = 'q',
  LONG_BINPUT = 'r',
  SETITEM = 's',
  TUPLE = 't',
  EMPTY_TUPLE = ')',
  SETITEMS = 'u',
  BINFLOAT = 'G',
  BINBYTES = 'B',
  SHORT_BINBYTES = 'C',
  PROTO = 0x80,
  NEWOBJ = 0x81,
  TUPLE1 = 0x85,
  TUPLE2 = 0x86,
  TUPLE3 = 0x87,
  NEWTRUE = 0x88,
  NEWFALSE = 0x89,
  LONG1 = 0x8a,
  LONG4 = 0x8b,
  SHORT_BINUNICODE = 0x8c,
  BINUNICODE8 = 0x8d,
  BINBYTES8 = 0x8e,
  EMPTY_SET = 0x8f,
  ADDITEMS = 0x90,
  FROZENSET = 0x91,
  NEWOBJ_EX = 0x92,
  STACK_GLOBAL = 0x93,
  MEMOIZE = 0x94,
  FRAME = 0x95,
  BYTEARRAY8 = 0x96,
};

bool is_global(const Value* v, const char* name) {
  return v && v->kind == Kind::kGlobal && v->s == name;
}

bool is_int(const Value* v) {
  return v && (v->kind == Kind::kInt || v->kind == Kind::kBool) && !v->big;
}

// Decodes UTF-8 `s` to code points, each < 256, as Python's str.encode('latin1') does.
bool utf8_to_latin1(const std::string& s, std::string* out) {
  out->clear();
  for (size_t i = 0; i < s.size();) {
    const uint8_t c = static_cast<uint8_t>(s[i]);
    if (c < 0x80) {
      out->push_back(static_cast<char>(c));
      i += 1;
    } else if ((c & 0xE0) == 0xC0 && i + 1 < s.size()) {
      const uint32_t cp = ((c & 0x1Fu) << 6) | (static_cast<uint8_t>(s[i + 1]) & 0x3Fu);
      if (cp > 0xFF) return false;
      out->push_back(static_cast<char>(cp));
      i += 2;
    } else {
      return false;
    }
  }
  return true;
}

template <typename T>
T load_le(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));  // little-endian hosts only (checked by the caller of the library)
  return v;
}

class Unpickler {
 public:
  Unpickler(const uint8_t* data, size_t size, const std::string& what, Arena* arena)
      : p_(data), size_(size), what_(what), arena_(arena) {}

  Status run(Value** root) {
    while (true) {
      if (pos_ >= size_) return fail("truncated pickle (no STOP opcode)");
      op_pos_ = pos_;
      const uint8_t op = p_[pos_++];
      if (op == STOP) {
        if (stack_.size() != 1 || !marks_.empty()) return fail("STOP with a malformed stack");
        *root = stack_.back();
        return Status::Ok();
      }
      VITRT_RETURN_IF_ERROR(step(op));
      if (used_ > kMaxPickleObjectBytes) return too_big();
    }
  }

 private:
  Status fail(const std::string& m) const {
    return bad_input(what_ + ": malformed pickle at byte " + std::to_string(op_pos_) + ": " + m);
  }

  bool need(uint64_t n) const { return n <= size_ - pos_; }

  // Memory accounting: every object, string byte, copied reference and memo entry counts against
  // kMaxPickleObjectBytes, so a small pickle cannot make the object graph grow without bound (e.g. one
  // large list copied into a set by a million 5-byte REDUCEs).
  Status too_big() const {
    return fail("the unpickled objects would take more than " + std::to_string(kMaxPickleObjectBytes >> 20) +
                " MiB (a torch.save state_dict needs a tiny fraction of that)");
  }
  void count(uint64_t bytes) { used_ += bytes; }
  // Before copying `n` references of `each` bytes.
  Status afford(uint64_t n, uint64_t each) {
    if (n > (kMaxPickleObjectBytes - std::min(used_, kMaxPickleObjectBytes)) / each) return too_big();
    count(n * each);
    return Status::Ok();
  }

  Status read_bytes(uint64_t n, std::string* out) {
    if (!need(n))
      return fail("truncated data (needs " + std::to_string(n) + " bytes, " + std::to_string(size_ - pos_) +
                  " left)");
    count(n);
    out->assign(reinterpret_cast<const char*>(p_ + pos_), static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return Status::Ok();
  }

  template <typename T>
  Status read_le(T* v) {
    if (!need(sizeof(T))) return fail("truncated data");
    *v = load_le<T>(p_ + pos_);
    pos_ += sizeof(T);
    return Status::Ok();
  }

  Status read_line(std::string* out) {
    const size_t start = pos_;
    while (pos_ < size_ && p_[pos_] != '\n') ++pos_;
    if (pos_ >= size_) return fail("truncated text argument");
    count(pos_ - start);
    out->assign(reinterpret_cast<const char*>(p_ + start), pos_ - start);
    ++pos_;
    return Status::Ok();
  }

  Value* make(Kind k) {
    count(sizeof(Value) + 2 * sizeof(void*));  // the value, its arena slot and the allocator's header
    return arena_->make(k, op_pos_);
  }

  void push(Value* v) {
    count(sizeof(Value*));
    stack_.push_back(v);
  }

  Status pop(Value** v) {
    const size_t floor = marks_.empty() ? 0 : marks_.back();
    if (stack_.size() <= floor) return fail("stack underflow");
    *v = stack_.back();
    stack_.pop_back();
    return Status::Ok();
  }

  Status top(Value** v) {
    const size_t floor = marks_.empty() ? 0 : marks_.back();
    if (stack_.size() <= floor) return fail("stack underflow");
    *v = stack_.back();
    return Status::Ok();
  }

  Status pop_mark(std::vector<Value*>* items) {
    if (marks_.empty()) return fail("no MARK on the stack");
    const size_t m = marks_.back();
    marks_.pop_back();
    items->assign(stack_.begin() + static_cast<std::ptrdiff_t>(m), stack_.end());
    stack_.resize(m);
    return Status::Ok();
  }

  Status push_tuple(size_t n) {
    const size_t floor = marks_.empty() ? 0 : marks_.back();
    if (stack_.size() < floor + n) return fail("stack underflow");
    Value* t = make(Kind::kTuple);
    count(n * sizeof(Value*));
    t->items.assign(stack_.end() - static_cast<std::ptrdiff_t>(n), stack_.end());
    stack_.resize(stack_.size() - n);
    push(t);
    return Status::Ok();
  }

  Status memo_get(uint64_t idx) {
    auto it = memo_.find(idx);
    if (it == memo_.end()) return fail("memo index " + std::to_string(idx) + " was never stored");
    push(it->second);
    return Status::Ok();
  }

  Status memo_put(uint64_t idx) {
    Value* v = nullptr;
    VITRT_RETURN_IF_ERROR(top(&v));
    count(64);  // an unordered_map node
    memo_[idx] = v;
    return Status::Ok();
  }

  Value* make_int(int64_t v) {
    Value* x = make(Kind::kInt);
    x->i = v;
    return x;
  }

  Status push_long(uint64_t n) {
    std::string b;
    VITRT_RETURN_IF_ERROR(read_bytes(n, &b));
    Value* x = make(Kind::kInt);
    if (n > 8) {
      x->big = true;
      x->i = (n && (static_cast<uint8_t>(b.back()) & 0x80)) ? INT64_MIN : INT64_MAX;
    } else if (n > 0) {
      uint64_t u = 0;
      for (size_t k = 0; k < n; ++k) u |= static_cast<uint64_t>(static_cast<uint8_t>(b[k])) << (8 * k);
      if (n < 8 && (static_cast<uint8_t>(b[n - 1]) & 0x80)) u |= ~uint64_t{0} << (8 * n);  // sign-extend
      x->i = static_cast<int64_t>(u);
    }
    push(x);
    return Status::Ok();
  }

  Status push_string(Kind kind, uint64_t n) {
    Value* x = make(kind);
    VITRT_RETURN_IF_ERROR(read_bytes(n, &x->s));
    push(x);
    return Status::Ok();
  }

  Value* opaque(const std::string& name) {
    Value* x = make(Kind::kOpaque);
    x->s = name;
    return x;
  }

  // The name of what a call would have built, for messages about refused objects.
  static std::string callee_name(const Value* c) {
    if (c->kind == Kind::kGlobal || c->kind == Kind::kOpaque || c->kind == Kind::kRecord) return c->s;
    return std::string("a call of a ") + kind_name(c->kind);
  }

  // persistent_load: ('storage', torch.<X>Storage, key, location, numel).
  Status persistent(Value* pid, Value** out) {
    const auto& it = pid->items;
    if (pid->kind != Kind::kTuple || it.size() != 5 || it[0]->kind != Kind::kStr || it[0]->s != "storage")
      return fail("unsupported persistent id (expected a torch storage tuple)");
    if (it[1]->kind != Kind::kGlobal || it[1]->s.rfind("torch.", 0) != 0)
      return fail("persistent id names an unknown storage type");
    if (it[2]->kind != Kind::kStr && it[2]->kind != Kind::kBytes) return fail("storage key is not a string");
    if (!is_int(it[4]) || it[4]->i < 0) return fail("storage size is not a non-negative integer");
    Value* s = make(Kind::kStorage);
    s->storage_type = it[1]->s.substr(6);
    s->key = it[2]->s;
    s->numel = it[4]->i;
    *out = s;
    return Status::Ok();
  }

  static bool int_tuple(const Value* v, std::vector<int64_t>* out) {
    if (!v || (v->kind != Kind::kTuple && v->kind != Kind::kList)) return false;
    out->clear();
    for (const Value* x : v->items) {
      if (!is_int(x) || x->i < 0) return false;
      out->push_back(x->i);
    }
    return true;
  }

  Status rebuild_tensor(const Value* args, Value** out) {
    const auto& a = args->items;
    if (a.size() < 4) return fail("_rebuild_tensor_v2 with " + std::to_string(a.size()) + " arguments");
    if (a[0]->kind == Kind::kOpaque) {
      *out = a[0];
      return Status::Ok();
    }
    Value* t = make(Kind::kTensor);
    if (a[0]->kind != Kind::kStorage) return fail("_rebuild_tensor_v2 without a storage");
    if (!is_int(a[1]) || a[1]->i < 0) return fail("_rebuild_tensor_v2 with a bad storage offset");
    if (!int_tuple(a[2], &t->size) || !int_tuple(a[3], &t->stride) || t->size.size() != t->stride.size())
      return fail("_rebuild_tensor_v2 with a bad size/stride");
    t->storage = a[0];
    t->offset = a[1]->i;
    *out = t;
    return Status::Ok();
  }

  Value* numpy_scalar(const Value* dtype, const Value* data) {
    if (dtype->kind != Kind::kRecord || dtype->s != "numpy.dtype" || data->kind != Kind::kBytes)
      return opaque("numpy.core.multiarray.scalar");
    const std::string& c = dtype->key;
    const std::string& b = data->s;
    const auto* u = reinterpret_cast<const uint8_t*>(b.data());
    Value* x = nullptr;
    if (c == "f8" && b.size() == 8) {
      x = make(Kind::kFloat);
      x->f = load_le<double>(u);
    } else if (c == "f4" && b.size() == 4) {
      x = make(Kind::kFloat);
      x->f = load_le<float>(u);
    } else if (c == "i8" && b.size() == 8) {
      x = make_int(load_le<int64_t>(u));
    } else if (c == "i4" && b.size() == 4) {
      x = make_int(load_le<int32_t>(u));
    } else if (c == "u1" && b.size() == 1) {
      x = make_int(u[0]);
    } else if (c == "b1" && b.size() == 1) {
      x = make(Kind::kBool);
      x->b = u[0] != 0;
    }
    return x ? x : opaque("numpy scalar of dtype '" + c + "'");
  }

  // REDUCE: callable(*args), for allowlisted callables only. `depth` counts the nested calls that
  // _rebuild_from_type_v2 makes, so a chain of them cannot exhaust the native stack.
  Status call(const Value* fn, const Value* args, Value** out, int depth = 0) {
    if (args->kind != Kind::kTuple) return fail("REDUCE arguments are not a tuple");
    if (depth > kMaxPickleCallDepth)
      return fail("calls nested more than " + std::to_string(kMaxPickleCallDepth) + " deep");
    const auto& a = args->items;
    if (fn->kind != Kind::kGlobal) {
      *out = opaque(callee_name(fn));
      return Status::Ok();
    }
    const std::string& n = fn->s;
    if (n == "torch._utils._rebuild_tensor_v2") return rebuild_tensor(args, out);
    if (n == "torch._utils._rebuild_parameter" || n == "torch._utils._rebuild_parameter_with_state") {
      if (a.empty() || (a[0]->kind != Kind::kTensor && a[0]->kind != Kind::kOpaque))
        return fail(n + " without a tensor");
      *out = a[0];
      return Status::Ok();
    }
    if (n == "torch._utils._rebuild_from_type_v2") {
      if (a.size() < 3) return fail(n + " with too few arguments");
      if (is_global(a[1], "torch.Tensor") || is_global(a[1], "torch.nn.parameter.Parameter"))
        return call(a[0], a[2], out, depth + 1);
      *out = opaque(callee_name(a[1]));
      return Status::Ok();
    }
    if (n == "collections.OrderedDict" || n == "builtins.dict") {
      Value* d = make(Kind::kDict);
      if (!a.empty() && a[0]->kind == Kind::kList)
        VITRT_RETURN_IF_ERROR(afford(a[0]->items.size(), 2 * sizeof(Value*)));
      if (!a.empty() && a[0]->kind == Kind::kList)
        for (const Value* kv : a[0]->items)
          if ((kv->kind == Kind::kTuple || kv->kind == Kind::kList) && kv->items.size() == 2)
            d->entries.emplace_back(kv->items[0], kv->items[1]);
      *out = d;
      return Status::Ok();
    }
    if (n == "builtins.set" || n == "builtins.frozenset") {
      Value* s = make(Kind::kSet);
      if (!a.empty() && (a[0]->kind == Kind::kList || a[0]->kind == Kind::kTuple)) {
        VITRT_RETURN_IF_ERROR(afford(a[0]->items.size(), sizeof(Value*)));
        s->items = a[0]->items;
      }
      *out = s;
      return Status::Ok();
    }
    if (n == "torch.Size" || n == "builtins.tuple") {
      Value* t = make(Kind::kTuple);
      if (!a.empty() && (a[0]->kind == Kind::kList || a[0]->kind == Kind::kTuple)) {
        VITRT_RETURN_IF_ERROR(afford(a[0]->items.size(), sizeof(Value*)));
        t->items = a[0]->items;
      }
      *out = t;
      return Status::Ok();
    }
    if (n == "_codecs.encode") {
      Value* b = make(Kind::kBytes);
      if (a.size() != 2 || a[0]->kind != Kind::kStr || a[1]->kind != Kind::kStr ||
          (a[1]->s != "latin1" && a[1]->s != "latin-1") || !utf8_to_latin1(a[0]->s, &b->s))
        return fail("_codecs.encode with unexpected arguments");
      *out = b;
      return Status::Ok();
    }
    if (n == "numpy.dtype") {
      Value* r = make(Kind::kRecord);
      r->s = n;
      if (!a.empty() && a[0]->kind == Kind::kStr) r->key = a[0]->s;
      *out = r;
      return Status::Ok();
    }
    if (n == "numpy.core.multiarray.scalar" || n == "numpy._core.multiarray.scalar") {
      *out = a.size() == 2 ? numpy_scalar(a[0], a[1]) : opaque(n);
      return Status::Ok();
    }
    if (n == "torch.device" || n == "builtins.slice") {
      Value* r = make(Kind::kRecord);
      r->s = n;
      *out = r;
      return Status::Ok();
    }
    if (n == "copyreg._reconstructor") {
      if (a.empty()) return fail(n + " without a class");
      return new_object(a[0], out);
    }
    *out = opaque(n);  // outside the allowlist: recorded, never called
    return Status::Ok();
  }

  // NEWOBJ / NEWOBJ_EX / copyreg._reconstructor: cls.__new__(cls, ...).
  Status new_object(const Value* cls, Value** out) {
    if (is_global(cls, "argparse.Namespace")) {
      Value* r = make(Kind::kRecord);
      r->s = cls->s;
      *out = r;
    } else if (is_global(cls, "collections.OrderedDict") || is_global(cls, "builtins.dict")) {
      *out = make(Kind::kDict);
    } else if (is_global(cls, "builtins.set")) {
      *out = make(Kind::kSet);
    } else {
      *out = opaque(callee_name(cls));
    }
    return Status::Ok();
  }

  Status build(Value* target, const Value* state) {
    if (target->kind != Kind::kRecord || target->s != "argparse.Namespace")
      return Status::Ok();  // attributes only
    const Value* d = state;
    if (d->kind == Kind::kTuple && d->items.size() == 2) d = d->items[0];
    if (d->kind == Kind::kDict) {
      VITRT_RETURN_IF_ERROR(afford(d->entries.size(), 2 * sizeof(Value*)));
      target->entries.insert(target->entries.end(), d->entries.begin(), d->entries.end());
    }
    return Status::Ok();
  }

  Status step(uint8_t op) {
    Value *a, *b, *c;
    std::vector<Value*> items;
    switch (op) {
      case PROTO: {
        uint8_t v = 0;
        VITRT_RETURN_IF_ERROR(read_le(&v));
        if (v > 5) return fail("unsupported pickle protocol " + std::to_string(v));
        return Status::Ok();
      }
      case FRAME: {
        uint64_t n = 0;
        VITRT_RETURN_IF_ERROR(read_le(&n));
        if (!need(n)) return fail("frame longer than the data");
        return Status::Ok();
      }
      case MARK:
        count(sizeof(size_t));
        marks_.push_back(stack_.size());
        return Status::Ok();
      case POP:
        if (!marks_.empty() && stack_.size() == marks_.back()) {
          marks_.pop_back();
          return Status::Ok();
        }
        return pop(&a);
      case POP_MARK:
        return pop_mark(&items);
      case DUP:
        VITRT_RETURN_IF_ERROR(top(&a));
        push(a);
        return Status::Ok();
      case NONE:
        push(make(Kind::kNone));
        return Status::Ok();
      case NEWTRUE:
      case NEWFALSE:
        a = make(Kind::kBool);
        a->b = op == NEWTRUE;
        push(a);
        return Status::Ok();
      case BININT: {
        int32_t v = 0;
        VITRT_RETURN_IF_ERROR(read_le(&v));
        push(make_int(v));
        return Status::Ok();
      }
      case BININT1: {
        uint8_t v = 0;
        VITRT_RETURN_IF_ERROR(read_le(&v));
        push(make_int(v));
        return Status::Ok();
      }
      case BININT2: {
        uint16_t v = 0;
        VITRT_RETURN_IF_ERROR(read_le(&v));
        push(make_int(v));
        return Status::Ok();
      }
      case LONG1: {
        uint8_t n = 0;
        VITRT_RETURN_IF_ERROR(read_le(&n));
        return push_long(n);
      }
      case LONG4: {
        int32_t n = 0;
        VITRT_RETURN_IF_ERROR(read_le(&n));
        if (n < 0) return fail("negative LONG4 length");
        return push_long(static_cast<uint64_t>(n));
      }
      case BINFLOAT: {
        if (!need(8)) return fail("truncated data");
        uint64_t u = 0;
        for (int k = 0; k < 8; ++k) u = (u << 8) | p_[pos_ + k];  // big-endian
        pos_ += 8;
        a = make(Kind::kFloat);
        std::memcpy(&a->f, &u, 8);
        push(a);
        return Status::Ok();
      }
      case SHORT_BINUNICODE:
      case SHORT_BINBYTES:
      case SHORT_BINSTRING: {
        uint8_t n = 0;
        VITRT_RETURN_IF_ERROR(read_le(&n));
        return push_string(op == SHORT_BINBYTES ? Kind::kBytes : Kind::kStr, n);
      }
      case BINUNICODE:
      case BINBYTES:
      case BINSTRING: {
        uint32_t n = 0;
        VITRT_RETURN_IF_ERROR(read_le(&n));
        if (op == BINSTRING && static_cast<int32_t>(n) < 0) return fail("negative BINSTRING length");
        return push_string(op == BINBYTES ? Kind::kBytes : Kind::kStr, n);
      }
      case BINUNICODE8:
      case BINBYTES8:
      case BYTEARRAY8: {
        uint64_t n = 0;
        VITRT_RETURN_IF_ERROR(read_le(&n));
        return push_string(op == BINUNICODE8 ? Kind::kStr : Kind::kBytes, n);
      }
      case EMPTY_DICT:
        push(make(Kind::kDict));
        return Status::Ok();
      case EMPTY_LIST:
        push(make(Kind::kList));
        return Status::Ok();
      case EMPTY_TUPLE:
        push(make(Kind::kTuple));
        return Status::Ok();
      case EMPTY_SET:
        push(make(Kind::kSet));
        return Status::Ok();
      case TUPLE1:
        return push_tuple(1);
      case TUPLE2:
        return push_tuple(2);
      case TUPLE3:
        return push_tuple(3);
      case TUPLE:
      case LIST:
      case FROZENSET:
        VITRT_RETURN_IF_ERROR(pop_mark(&items));
        a = make(op == TUPLE ? Kind::kTuple : op == LIST ? Kind::kList : Kind::kSet);
        count(items.size() * sizeof(Value*));
        a->items = std::move(items);
        push(a);
        return Status::Ok();
      case DICT:
        VITRT_RETURN_IF_ERROR(pop_mark(&items));
        if (items.size() % 2) return fail("DICT with an odd number of items");
        a = make(Kind::kDict);
        count(items.size() * sizeof(Value*));
        for (size_t k = 0; k < items.size(); k += 2) a->entries.emplace_back(items[k], items[k + 1]);
        push(a);
        return Status::Ok();
      case APPEND:
        VITRT_RETURN_IF_ERROR(pop(&b));
        VITRT_RETURN_IF_ERROR(top(&a));
        if (a->kind == Kind::kList)
          a->items.push_back(b);
        else if (a->kind != Kind::kOpaque)
          return fail(std::string("APPEND to a ") + kind_name(a->kind));
        return Status::Ok();
      case APPENDS:
      case ADDITEMS:
        VITRT_RETURN_IF_ERROR(pop_mark(&items));
        VITRT_RETURN_IF_ERROR(top(&a));
        count(items.size() * sizeof(Value*));
        if (a->kind == (op == APPENDS ? Kind::kList : Kind::kSet))
          a->items.insert(a->items.end(), items.begin(), items.end());
        else if (a->kind != Kind::kOpaque)
          return fail(std::string(op == APPENDS ? "APPENDS to a " : "ADDITEMS to a ") + kind_name(a->kind));
        return Status::Ok();
      case SETITEM:
        VITRT_RETURN_IF_ERROR(pop(&c));
        VITRT_RETURN_IF_ERROR(pop(&b));
        VITRT_RETURN_IF_ERROR(top(&a));
        if (a->kind == Kind::kDict)
          a->entries.emplace_back(b, c);
        else if (a->kind != Kind::kOpaque)
          return fail(std::string("SETITEM on a ") + kind_name(a->kind));
        return Status::Ok();
      case SETITEMS:
        VITRT_RETURN_IF_ERROR(pop_mark(&items));
        if (items.size() % 2) return fail("SETITEMS with an odd number of items");
        VITRT_RETURN_IF_ERROR(top(&a));
        count(items.size() * sizeof(Value*));
        if (a->kind == Kind::kDict) {
          for (size_t k = 0; k < items.size(); k += 2) a->entries.emplace_back(items[k], items[k + 1]);
        } else if (a->kind != Kind::kOpaque) {
          return fail(std::string("SETITEMS on a ") + kind_name(a->kind));
        }
        return Status::Ok();
      case BINPUT: {
        uint8_t i = 0;
        VITRT_RETURN_IF_ERROR(read_le(&i));
        return memo_put(i);
      }
      case LONG_BINPUT: {
        uint32_t i = 0;
        VITRT_RETURN_IF_ERROR(read_le(&i));
        return memo_put(i);
      }
      case MEMOIZE:
        return memo_put(memo_.size());
      case BINGET: {
        uint8_t i = 0;
        VITRT_RETURN_IF_ERROR(read_le(&i));
        return memo_get(i);
      }
      case LONG_BINGET: {
        uint32_t i = 0;
        VITRT_RETURN_IF_ERROR(read_le(&i));
        return memo_get(i);
      }
      case GLOBAL: {
        std::string module, name;
        VITRT_RETURN_IF_ERROR(read_line(&module));
        VITRT_RETURN_IF_ERROR(read_line(&name));
        a = make(Kind::kGlobal);
        a->s = module + "." + name;
        push(a);
        return Status::Ok();
      }
      case STACK_GLOBAL:
        VITRT_RETURN_IF_ERROR(pop(&b));
        VITRT_RETURN_IF_ERROR(pop(&a));
        if (a->kind != Kind::kStr || b->kind != Kind::kStr) return fail("STACK_GLOBAL with non-string names");
        c = make(Kind::kGlobal);
        c->s = a->s + "." + b->s;
        push(c);
        return Status::Ok();
      case BINPERSID:
        VITRT_RETURN_IF_ERROR(pop(&a));
        VITRT_RETURN_IF_ERROR(persistent(a, &b));
        push(b);
        return Status::Ok();
      case REDUCE:
        VITRT_RETURN_IF_ERROR(pop(&b));
        VITRT_RETURN_IF_ERROR(pop(&a));
        VITRT_RETURN_IF_ERROR(call(a, b, &c));
        push(c);
        return Status::Ok();
      case NEWOBJ:
        VITRT_RETURN_IF_ERROR(pop(&b));  // args
        VITRT_RETURN_IF_ERROR(pop(&a));  // cls
        VITRT_RETURN_IF_ERROR(new_object(a, &c));
        push(c);
        return Status::Ok();
      case NEWOBJ_EX:
        VITRT_RETURN_IF_ERROR(pop(&c));  // kwargs
        VITRT_RETURN_IF_ERROR(pop(&b));  // args
        VITRT_RETURN_IF_ERROR(pop(&a));  // cls
        VITRT_RETURN_IF_ERROR(new_object(a, &c));
        push(c);
        return Status::Ok();
      case BUILD:
        VITRT_RETURN_IF_ERROR(pop(&b));
        VITRT_RETURN_IF_ERROR(top(&a));
        return build(a, b);
      default: {
        static const char* hex = "0123456789abcdef";
        std::string h = "0x";
        h += hex[op >> 4];
        h += hex[op & 15];
        return fail("unsupported opcode " + h + " (not produced by torch.save)");
      }
    }
  }

  const uint8_t* p_;
  size_t size_;
  size_t pos_ = 0;
  size_t op_pos_ = 0;
  const std::string& what_;
  Arena* arena_;
  std::vector<Value*> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, Value*> memo_;
  uint64_t used_ = 0;  // bytes of objects made so far (an estimate, counted as they are made)
};

}  // namespace

Status unpickle(const uint8_t* data, size_t size, const std::string& what, Arena* arena, Value** root) {
  *root = nullptr;
  if (!data && size) return invalid_argument("unpickle: null data");
  try {
    return Unpickler(data, size, what, arena).run(root);
  } catch (const std::bad_alloc&) {
    return out_of_memory(what + ": out of memory while unpickling");
  }
}

}  // namespace vitrt::convert::pickle
