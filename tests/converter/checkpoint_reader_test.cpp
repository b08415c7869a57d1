// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// Checkpoint readers against real torch.save files (fixture checkpoint_cases, tools/reference/
// make_checkpoint_cases.py), plus a fuzz of the restricted unpickler with damaged pickles.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "checkpoint/container.h"
#include "checkpoint/unpickler.h"

using vitrt::Status;
using vitrt::convert::Checkpoint;
using vitrt::convert::load_checkpoint;
namespace pk = vitrt::convert::pickle;

namespace {

std::string case_dir() {
  const char* d = std::getenv("VITRT_FIXTURE_DIR");
  return std::string(d ? d : "fixtures") + "/checkpoint_cases";
}

bool read_file(const std::string& path, std::string* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  out->assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  return true;
}

nlohmann::json manifest() {
  std::string text;
  REQUIRE_MESSAGE(read_file(case_dir() + "/manifest.json", &text),
                  "missing " << case_dir() << "/manifest.json (run the checkpoint_cases fixture)");
  return nlohmann::json::parse(text);
}

bool same_float(float a, float b) {
  return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b));
}

bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

void check_ok_case(const nlohmann::json& c, const Checkpoint& ck) {
  CHECK(ck.container == c["container"].get<std::string>());
  CHECK(ck.arch_hint == c["arch_hint"].get<std::string>());
  for (auto it = c["args"].begin(); it != c["args"].end(); ++it) {
    INFO("arg " << it.key());
    REQUIRE(ck.args.count(it.key()) == 1);
    CHECK(ck.args.at(it.key()) == it.value().get<std::string>());
  }
  for (const auto& s : c["skipped"]) {
    const std::string k = s.get<std::string>();
    INFO("skipped " << k);
    CHECK(std::find(ck.skipped.begin(), ck.skipped.end(), k) != ck.skipped.end());
  }
  const auto& tensors = c["tensors"];
  CHECK(ck.tensors.size() == tensors.size());
  for (auto it = tensors.begin(); it != tensors.end(); ++it) {
    INFO("tensor " << it.key());
    auto t = ck.tensors.find(it.key());
    REQUIRE(t != ck.tensors.end());
    CHECK(t->second.name == it.key());
    CHECK(t->second.shape == it.value()["shape"].get<std::vector<int64_t>>());
    CHECK(t->second.source_type == it.value()["source_type"].get<std::string>());
    std::vector<double> want;
    for (const auto& v : it.value()["values"])
      want.push_back(v.is_string() ? std::strtod(v.get<std::string>().c_str(), nullptr) : v.get<double>());
    REQUIRE(t->second.values.size() == want.size());
    size_t bad = 0;
    for (size_t i = 0; i < want.size(); ++i)
      bad += !same_float(t->second.values[i], static_cast<float>(want[i]));
    CHECK_MESSAGE(bad == 0, bad << " values differ");
  }
}

}  // namespace

TEST_CASE("checkpoint reader: every torch.save / safetensors case") {
  const nlohmann::json m = manifest();
  int ok = 0, errors = 0;
  for (const auto& c : m["cases"]) {
    const std::string name = c["name"].get<std::string>();
    const std::string path = case_dir() + "/" + c["file"].get<std::string>();
    INFO("case " << name << " (" << path << ")");
    Checkpoint ck;
    const Status st = load_checkpoint(path, &ck);
    if (c["expect"] == "ok") {
      REQUIRE_MESSAGE(st.ok(), st.message());
      check_ok_case(c, ck);
      ++ok;
    } else {
      INFO("message: " << st.message());
      REQUIRE(!st.ok());
      CHECK(contains(st.message(), path));  // the file is named
      for (const auto& s : c["error_contains"]) CHECK(contains(st.message(), s.get<std::string>()));
      CHECK(ck.tensors.empty());
      ++errors;
    }
  }
  CHECK(ok >= 10);
  CHECK(errors >= 15);
  std::string unused;
  CHECK_MESSAGE(!read_file(case_dir() + "/" + m["pwned"].get<std::string>(), &unused),
                "a forbidden global was executed");
}

TEST_CASE("checkpoint reader: status codes") {
  Checkpoint ck;
  CHECK(load_checkpoint(case_dir() + "/legacy.pt", &ck).code() == vitrt::StatusCode::kUnsupported);
  CHECK(load_checkpoint(case_dir() + "/forbidden.pt", &ck).code() == vitrt::StatusCode::kBadInput);
  CHECK(load_checkpoint(case_dir() + "/truncated.pt", &ck).code() == vitrt::StatusCode::kBadInput);
  CHECK(load_checkpoint(case_dir() + "/does_not_exist.pt", &ck).code() == vitrt::StatusCode::kIo);
}

// Every prefix of a real data.pkl must be refused, and single-byte corruptions must never crash (run under
// ASan or valgrind to check for out-of-bounds reads).
TEST_CASE("unpickler: truncated and corrupted pickles never crash") {
  std::string pkl;
  REQUIRE(read_file(case_dir() + "/" + manifest()["pickle_fuzz"].get<std::string>(), &pkl));
  const auto* data = reinterpret_cast<const uint8_t*>(pkl.data());
  {
    pk::Arena arena;
    pk::Value* root = nullptr;
    REQUIRE(pk::unpickle(data, pkl.size(), "data.pkl", &arena, &root).ok());
  }
  for (size_t n = 0; n < pkl.size(); ++n) {
    std::vector<uint8_t> cut(data, data + n);  // exact-size buffer, so ASan sees any overread
    pk::Arena arena;
    pk::Value* root = nullptr;
    const Status st = pk::unpickle(cut.data(), cut.size(), "data.pkl", &arena, &root);
    INFO("prefix " << n);
    REQUIRE(!st.ok());
    CHECK(st.code() == vitrt::StatusCode::kBadInput);
    CHECK(contains(st.message(), "data.pkl"));
  }
  int accepted = 0;
  for (size_t i = 0; i < pkl.size(); ++i) {
    for (uint8_t x : {0x01, 0x20, 0x80, 0xff}) {
      std::vector<uint8_t> bad(data, data + pkl.size());
      bad[i] ^= x;
      pk::Arena arena;
      pk::Value* root = nullptr;
      if (!pk::unpickle(bad.data(), bad.size(), "data.pkl", &arena, &root).ok()) continue;
      ++accepted;
      Checkpoint ck;
      std::vector<vitrt::convert::SelectedTensor> tensors;
      (void)vitrt::convert::select_state_dict(root, &ck, &tensors);
    }
  }
  MESSAGE(accepted << " corrupted pickles still parsed (their values are checked later)");
}

TEST_CASE("unpickler: hand-made malformed pickles") {
  struct Case {
    const char* bytes;
    size_t size;
    bool ok;
    const char* message;
  };
#define PICKLE(literal) literal, sizeof(literal) - 1
  const Case cases[] = {
      {PICKLE(""), false, "truncated"},
      {PICKLE("\x80\x02R."), false, "stack underflow"},
      {PICKLE("\x80\x02h\x05."), false, "memo"},
      {PICKLE("\x80\x02X\xff\xff\xff\xff"), false, "truncated"},
      {PICKLE("\x80\x02\x8d\xff\xff\xff\xff\xff\xff\xff\xff."), false, "truncated"},
      {PICKLE("\x80\x09N."), false, "protocol"},
      {PICKLE("\x80\x02N\x00."), false, "opcode"},
      {PICKLE("\x80\x02((((("), false, "truncated"},
      {PICKLE("\x80\x02Nu."), false, "MARK"},
      {PICKLE("\x80\x02NN."), false, "STOP"},
      {PICKLE("\x80\x02(Q."), false, "underflow"},
      {PICKLE("\x80\x02K\x01Q."), false, "persistent id"},
      {PICKLE("\x80\x02]q\x00h\x00"
              "a."),
       true, ""},  // a list that contains itself
      {PICKLE("\x80\x02"
              "cposix\nsystem\nX\x02\x00\x00\x00ls\x85R."),
       true, ""},  // recorded, not run
      {PICKLE("\x80\x02K\x01]a."), false, "APPEND to a int"},
  };
#undef PICKLE
  for (const Case& c : cases) {
    const std::vector<uint8_t> bytes(c.bytes, c.bytes + c.size);
    pk::Arena arena;
    pk::Value* root = nullptr;
    const Status st = pk::unpickle(bytes.data(), bytes.size(), "test.pkl", &arena, &root);
    INFO("pickle " << std::string(c.bytes, c.size) << " -> " << st.message());
    CHECK(st.ok() == c.ok);
    if (!c.ok) CHECK(contains(st.message(), c.message));
  }
  // The os.system call is an opaque value naming the global.
  const std::string sys(
      "\x80\x02"
      "cposix\nsystem\nX\x02\x00\x00\x00ls\x85R.",
      26);
  const std::vector<uint8_t> bytes(sys.begin(), sys.end());
  pk::Arena arena;
  pk::Value* root = nullptr;
  REQUIRE(pk::unpickle(bytes.data(), bytes.size(), "t", &arena, &root).ok());
  CHECK(root->kind == pk::Kind::kOpaque);
  CHECK(root->s == "posix.system");
  Checkpoint ck;
  std::vector<vitrt::convert::SelectedTensor> tensors;
  const Status st = vitrt::convert::select_state_dict(root, &ck, &tensors);
  CHECK(!st.ok());
  CHECK(contains(st.message(), "posix.system"));
}

TEST_CASE("args render like Python") {
  pk::Arena arena;
  auto fl = [&](double v) {
    pk::Value* x = arena.make(pk::Kind::kFloat, 0);
    x->f = v;
    std::string s;
    REQUIRE(vitrt::convert::render_arg(x, &s));
    return s;
  };
  CHECK(fl(0.9) == "0.9");
  CHECK(fl(224.0) == "224.0");
  CHECK(fl(100000.0) == "100000.0");
  CHECK(fl(5e-4) == "0.0005");
  CHECK(fl(1e-6) == "1e-06");
  CHECK(fl(1e16) == "1e+16");
  CHECK(fl(0.1 + 0.2) == "0.30000000000000004");
  CHECK(fl(-2.5) == "-2.5");
  pk::Value* list = arena.make(pk::Kind::kTuple, 0);
  for (int v : {3, 224, 224}) {
    pk::Value* i = arena.make(pk::Kind::kInt, 0);
    i->i = v;
    list->items.push_back(i);
  }
  std::string s;
  REQUIRE(vitrt::convert::render_arg(list, &s));
  CHECK(s == "3,224,224");
}
