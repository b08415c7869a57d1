// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
// vitrt-convert's library side on hostile inputs: the model writer's output handling (a planted temporary
// symlink, special-file targets, verification before the rename, nothing left behind), checkpoint readers
// whose memory must be bounded by the file (aliased safetensors entries, pickles that copy one list again and
// again or nest reduce calls), and conversion refusing what it used to accept silently (integer and
// non-finite weights, zero placeholders sized by other tensors, bad options and labels).
#include <dirent.h>
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "arch/arch.h"
#include "arch/graph_builder.h"
#include "checkpoint/checkpoint.h"
#include "checkpoint/element_type.h"
#include "checkpoint/unpickler.h"
#include "loader/model_loader.h"
#include "model_writer.h"
#include "unit/test_graphs.h"

using namespace vitrt;

namespace {

bool contains(const Status& st, const std::string& what) {
  return st.message().find(what) != std::string::npos;
}

// A fresh empty directory, removed (with the plain files, links and FIFOs in it) when the test ends.
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/vitrt_convert_test_XXXXXX";
    path = mkdtemp(tmpl) ? tmpl : "";
  }
  ~TempDir() {
    for (const std::string& e : entries()) ::unlink((path + "/" + e).c_str());
    ::rmdir(path.c_str());
  }
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    if (DIR* d = ::opendir(path.c_str())) {
      while (dirent* e = ::readdir(d))
        if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") out.push_back(e->d_name);
      ::closedir(d);
    }
    return out;
  }
  std::string file(const std::string& name) const { return path + "/" + name; }
};

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

convert::CheckpointTensor& add(convert::Checkpoint* ck, const std::string& name, std::vector<int64_t> shape,
                               float value = 0.1f) {
  auto& t = ck->tensors[name];
  t.name = name;
  t.source_type = "float32";
  t.shape = shape;
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  t.values.assign(n, value);
  return t;
}

// DeiT with embed 4, one block, patch 2 on a 2x2 image, 3 classes.
convert::Checkpoint tiny_deit() {
  convert::Checkpoint ck;
  ck.container = "raw";
  add(&ck, "patch_embed.proj.weight", {4, 3, 2, 2});
  add(&ck, "patch_embed.proj.bias", {4});
  add(&ck, "cls_token", {1, 1, 4});
  add(&ck, "pos_embed", {1, 2, 4});
  for (const char* ln : {"blocks.0.norm1", "blocks.0.norm2", "norm"}) {
    add(&ck, std::string(ln) + ".weight", {4}, 1.0f);
    add(&ck, std::string(ln) + ".bias", {4});
  }
  add(&ck, "blocks.0.attn.qkv.weight", {12, 4});
  add(&ck, "blocks.0.attn.qkv.bias", {12});
  add(&ck, "blocks.0.attn.proj.weight", {4, 4});
  add(&ck, "blocks.0.attn.proj.bias", {4});
  add(&ck, "blocks.0.mlp.fc1.weight", {4, 4});
  add(&ck, "blocks.0.mlp.fc1.bias", {4});
  add(&ck, "blocks.0.mlp.fc2.weight", {4, 4});
  add(&ck, "blocks.0.mlp.fc2.bias", {4});
  add(&ck, "head.weight", {3, 4});
  add(&ck, "head.bias", {3});
  return ck;
}

Status convert_tiny(const convert::Checkpoint& ck, convert::ConvertOptions opt, Graph* g = nullptr) {
  opt.arch = "deit";
  opt.heads = "1";
  Graph local;
  std::string log;
  return convert::convert_checkpoint(ck, opt, g ? g : &local, &log);
}

Status unpickle_bytes(const std::string& bytes, convert::pickle::Arena* arena,
                      convert::pickle::Value** root) {
  return convert::pickle::unpickle(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "test.pkl",
                                   arena, root);
}

}  // namespace

// ---- 1. The model writer's output ----

TEST_CASE("convert: a planted '<output>.tmp' symlink is neither written through nor removed") {
  TempDir dir;
  const std::string victim = dir.file("victim"), out = dir.file("m.vitrt");
  write_text(victim, "precious");
  REQUIRE(::symlink(victim.c_str(), (out + ".tmp").c_str()) == 0);
  REQUIRE(write_model_file(test::tiny_classifier(), out).ok());
  CHECK(read_text(victim) == "precious");
  struct stat st;
  CHECK((::lstat((out + ".tmp").c_str(), &st) == 0 && S_ISLNK(st.st_mode)));
  std::shared_ptr<const Model> m;
  CHECK(load_model(out, &m).ok());
  CHECK(dir.entries().size() == 3);  // victim, the link, the model: no temporary left
}

TEST_CASE("convert: an output that is a FIFO, a symlink or a directory is refused and left as it was") {
  TempDir dir;
  const std::string fifo = dir.file("fifo"), link = dir.file("link"), target = dir.file("target");
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  write_text(target, "old");
  REQUIRE(::symlink(target.c_str(), link.c_str()) == 0);
  Status st = write_model_file(test::tiny_classifier(), fifo);
  CHECK(st.code() == StatusCode::kInvalidArgument);
  CHECK(contains(st, "FIFO"));
  struct stat s;
  CHECK((::lstat(fifo.c_str(), &s) == 0 && S_ISFIFO(s.st_mode)));
  st = write_model_file(test::tiny_classifier(), link);
  CHECK(st.code() == StatusCode::kInvalidArgument);
  CHECK(contains(st, "symbolic link"));
  CHECK((::lstat(link.c_str(), &s) == 0 && S_ISLNK(s.st_mode)));
  CHECK(read_text(target) == "old");
  st = write_model_file(test::tiny_classifier(), dir.path);
  CHECK(st.code() == StatusCode::kInvalidArgument);
  CHECK(dir.entries().size() == 3);
}

TEST_CASE(
    "convert: the written file is checked before it replaces the output; a failed check leaves nothing") {
  TempDir dir;
  const std::string out = dir.file("m.vitrt");
  write_text(out, "the previous model");
  std::string seen;
  Status st = write_model_file(test::tiny_classifier(), out, [&](const std::string& written) {
    seen = written;
    std::shared_ptr<const Model> m;
    CHECK(load_model(written, &m).ok());  // the complete file, under its temporary name
    return bad_model("refused by the test");
  });
  CHECK_FALSE(st.ok());
  CHECK(contains(st, "refused by the test"));
  CHECK(seen != out);
  CHECK(seen.rfind(dir.path + "/", 0) == 0);  // next to the output, so the rename stays in one filesystem
  CHECK(read_text(out) == "the previous model");
  CHECK(dir.entries() == std::vector<std::string>{"m.vitrt"});

  st = write_model_file(test::tiny_classifier(), out, [](const std::string& written) {
    std::shared_ptr<const Model> m;
    return load_model(written, &m);
  });
  CHECK(st.ok());
  std::shared_ptr<const Model> m;
  CHECK(load_model(out, &m).ok());
  CHECK(dir.entries() == std::vector<std::string>{"m.vitrt"});
}

TEST_CASE("convert: the model file's mode is 0666 less the umask") {
  TempDir dir;
  const mode_t old = ::umask(027);
  const Status st = write_model_file(test::tiny_classifier(), dir.file("m.vitrt"));
  ::umask(old);
  REQUIRE(st.ok());
  struct stat s;
  REQUIRE(::stat(dir.file("m.vitrt").c_str(), &s) == 0);
  CHECK((s.st_mode & 0777) == 0640);
}

// ---- 2. Checkpoint readers: memory bounded by the file ----

TEST_CASE("convert: safetensors entries aliasing one range cannot expand beyond the file's budget") {
  TempDir dir;
  const size_t floats = 1 << 18;  // 1 MiB of float32, claimed by 200 entries
  std::string header = "{";
  for (int i = 0; i < 200; ++i)
    header += std::string(i ? "," : "") + "\"t" + std::to_string(i) + "\":{\"dtype\":\"F32\",\"shape\":[" +
              std::to_string(floats) + "],\"data_offsets\":[0," + std::to_string(floats * 4) + "]}";
  header += "}";
  std::string file(8, '\0');
  for (int k = 0; k < 8; ++k) file[k] = static_cast<char>((header.size() >> (8 * k)) & 0xFF);
  file += header + std::string(floats * 4, '\0');
  write_text(dir.file("alias.safetensors"), file);
  convert::Checkpoint ck;
  const Status st = convert::load_checkpoint(dir.file("alias.safetensors"), &ck);
  CHECK_FALSE(st.ok());
  CHECK(contains(st, "limit"));
  CHECK(ck.tensors.empty());
}

TEST_CASE("convert: a pickle that copies one list again and again is refused before it takes gigabytes") {
  // A list of 100k Nones, memoised, then 4000 x builtins.set(list): 3.2 GB of copied references from 76 KB.
  std::string p = "\x80\x02(";
  p += std::string(100000, 'N');
  p += "lq";
  p += '\0';
  p += "0";
  for (int i = 0; i < 4000; ++i) {
    p += "cbuiltins\nset\nh";
    p += '\0';
    p += "\x85R0";
  }
  p += "}.";
  convert::pickle::Arena arena;
  convert::pickle::Value* root = nullptr;
  const Status st = unpickle_bytes(p, &arena, &root);
  CHECK_FALSE(st.ok());
  CHECK(contains(st, "MiB"));
}

TEST_CASE("convert: nested _rebuild_from_type_v2 calls are refused beyond a small depth") {
  auto nested = [](int depth) {
    const std::string rft = "ctorch._utils\n_rebuild_from_type_v2\n", tensor = "ctorch\nTensor\n";
    std::string args = "(cbuiltins\ndict\n" + tensor + ")}t";  // innermost: builtins.dict()
    for (int i = 0; i < depth; ++i) args = "(" + rft + tensor + args + "}t";
    return "\x80\x02" + rft + args + "R.";
  };
  convert::pickle::Arena arena;
  convert::pickle::Value* root = nullptr;
  REQUIRE(unpickle_bytes(nested(1), &arena, &root).ok());  // what torch writes
  CHECK(root->kind == convert::pickle::Kind::kDict);
  const Status st = unpickle_bytes(nested(50), &arena, &root);
  CHECK_FALSE(st.ok());
  CHECK(contains(st, "nested"));
}

TEST_CASE("convert: check_view reports how far into its storage a view reads") {
  convert::StridedView v;
  v.offset = 3;
  v.size = {1 << 20};
  v.stride = {0};  // a legitimate expand(): 2^20 elements from one stored value
  int64_t numel = 0, end = 0;
  REQUIRE(convert::check_view(v, 10, &numel, &end).ok());
  CHECK(numel == (1 << 20));
  CHECK(end == 4);
  v.size = {2, 3};
  v.stride = {3, 1};
  REQUIRE(convert::check_view(v, 10, &numel, &end).ok());
  CHECK(end == 9);
}

// ---- 3. Conversion: weights, options, labels ----

TEST_CASE("convert: an integer or bool tensor used as a float weight is refused, naming it and its dtype") {
  convert::Checkpoint ck = tiny_deit();
  REQUIRE(convert_tiny(ck, {}).ok());
  ck.tensors["head.bias"].source_dtype = DType::kInt64;
  ck.tensors["head.bias"].source_type = "int64";
  Status st = convert_tiny(ck, {});
  CHECK_FALSE(st.ok());
  CHECK(contains(st, "'head.bias' has dtype int64"));
  ck = tiny_deit();
  ck.tensors["norm.weight"].source_dtype = DType::kUInt8;
  ck.tensors["norm.weight"].source_type = "bool";
  st = convert_tiny(ck, {});
  CHECK(contains(st, "'norm.weight' has dtype bool"));
}

TEST_CASE("convert: NaN and infinite weights are refused, naming the tensor and the first bad element") {
  convert::Checkpoint ck = tiny_deit();
  ck.tensors["blocks.0.attn.qkv.weight"].values[17] = std::nanf("");
  ck.tensors["blocks.0.attn.qkv.weight"].values[30] = INFINITY;
  Status st = convert_tiny(ck, {});
  CHECK_FALSE(st.ok());
  CHECK(contains(st, "'blocks.0.attn.qkv.weight' holds NaN at element 17"));
  ck = tiny_deit();
  ck.tensors["pos_embed"].values[5] = -INFINITY;
  st = convert_tiny(ck, {});
  CHECK(contains(st, "'pos_embed' holds an infinity at element 5"));
}

TEST_CASE("convert: integer buffers the architecture ignores stay accepted") {
  // BatchNorm's num_batches_tracked is an int64 the builder ignores: only tensors it computes with are
  // checked.
  convert::Checkpoint ck;
  auto& n = add(&ck, "bn.num_batches_tracked", {});
  n.source_dtype = DType::kInt64;
  n.source_type = "int64";
  add(&ck, "w", {2});
  convert::GraphBuilder b(ck);
  const int32_t x = b.input("x", Shape{1, 2});
  const int32_t w = b.weight("w", {2});
  b.ignore("bn.num_batches_tracked");
  b.mark_output(b.op(OpType::kAdd, NoAttrs{}, {x, w}, "y"));
  Graph g;
  CHECK(b.finish(&g).ok());
}

TEST_CASE("convert: a missing weight of a huge expected shape gets no placeholder of that size") {
  // The expected shape comes from other tensors' sizes; a zero placeholder of it (4 TiB here) was allocated.
  convert::Checkpoint ck;
  add(&ck, "w", {2});
  convert::GraphBuilder b(ck);
  b.weight("w", {2});
  b.weight("missing", {int64_t{1} << 20, int64_t{1} << 20});
  Graph g;
  const Status st = b.finish(&g);
  CHECK_FALSE(st.ok());
  CHECK(contains(st, "missing"));
}

TEST_CASE("convert: out-of-range and non-finite options are refused, naming the option") {
  const convert::Checkpoint ck = tiny_deit();
  auto refused = [&](convert::ConvertOptions opt, const char* flag) {
    const Status st = convert_tiny(ck, opt);
    CHECK(st.code() == StatusCode::kInvalidArgument);
    CHECK(contains(st, flag));
  };
  convert::ConvertOptions o;
  o.resize = -5;
  refused(o, "--resize");
  o = {};
  o.resize = 70000;
  refused(o, "--resize");
  o = {};
  o.crop = -2;
  refused(o, "--crop");
  o = {};
  o.image_size = -32;
  refused(o, "--image-size");
  o = {};
  o.mean = {NAN};
  refused(o, "--mean");
  o = {};
  o.std = {INFINITY};
  refused(o, "--std");
  o = {};
  o.resize = 4;
  o.mean = {0.5f};
  o.std = {0.25f};
  CHECK(convert_tiny(ck, o).ok());
}

TEST_CASE("convert: labels files must be small regular files with one label per class") {
  TempDir dir;
  std::vector<std::string> labels;
  Status st = convert::read_labels_file("/dev/zero", &labels);
  CHECK(st.code() == StatusCode::kBadInput);
  CHECK(contains(st, "character device"));
  REQUIRE(::mkfifo(dir.file("fifo").c_str(), 0644) == 0);
  st = convert::read_labels_file(dir.file("fifo"), &labels);  // would block forever if opened
  CHECK(contains(st, "FIFO"));
  write_text(dir.file("long.txt"), "a\n" + std::string(5000, 'x') + "\n");
  st = convert::read_labels_file(dir.file("long.txt"), &labels);
  CHECK(contains(st, "line 2 has 5000 bytes"));

  write_text(dir.file("two.txt"), "cat\r\ndog\n\n");
  REQUIRE(convert::read_labels_file(dir.file("two.txt"), &labels).ok());
  CHECK(labels == std::vector<std::string>{"cat", "dog"});
  convert::ConvertOptions opt;
  opt.labels_path = dir.file("two.txt");
  st = convert_tiny(tiny_deit(), opt);
  CHECK_FALSE(st.ok());
  CHECK(contains(st, "two.txt' has 2 labels (lines) but the model has 3 classes"));
  write_text(dir.file("three.txt"), "cat\ndog\nbird\n");
  opt.labels_path = dir.file("three.txt");
  Graph g;
  REQUIRE(convert_tiny(tiny_deit(), opt, &g).ok());
  CHECK(g.metadata.labels == std::vector<std::string>{"cat", "dog", "bird"});
  st = convert::apply_labels({"a"}, "test labels", &g);
  CHECK(contains(st, "test labels has 1 labels (lines) but the model has 3 classes"));
}
