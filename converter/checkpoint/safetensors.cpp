// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "checkpoint/safetensors.h"

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "checkpoint/element_type.h"
#include "checkpoint/read_limits.h"

namespace vitrt::convert {
namespace {

struct FileCloser {
  void operator()(FILE* f) const {
    if (f) std::fclose(f);
  }
};

// Refuses JSON nested deeper than kMaxSafetensorsHeaderDepth before it is parsed (a parser would build every
// level: a deeply nested header costs far more memory than its bytes). Brackets inside strings do not count.
Status check_nesting(const std::string& json) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > kMaxSafetensorsHeaderDepth)
        return bad_input("safetensors header nests deeper than " +
                         std::to_string(kMaxSafetensorsHeaderDepth) + " levels (at byte " +
                         std::to_string(i) + "); the format needs no more");
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return Status::Ok();
}

Status parse_entry(const std::string& name, const nlohmann::json& info, uint64_t data_bytes,
                   ElementInfo* elem, std::vector<int64_t>* shape, uint64_t* begin, uint64_t* end) {
  const std::string what = "safetensors entry '" + name + "'";
  if (!info.is_object() || !info.contains("dtype") || !info.contains("shape") ||
      !info.contains("data_offsets"))
    return bad_input(what + " lacks dtype/shape/data_offsets");
  const auto& dt = info["dtype"];
  if (!dt.is_string()) return bad_input(what + ": dtype is not a string");
  if (!element_from_safetensors(dt.get<std::string>(), elem))
    return unsupported(what + " has dtype '" + dt.get<std::string>() + "', which the converter cannot read");
  const auto& sh = info["shape"];
  if (!sh.is_array() || sh.size() > 16) return bad_input(what + ": shape is not a short list");
  uint64_t numel = 1;
  for (const auto& d : sh) {
    if (!d.is_number_unsigned()) return bad_input(what + ": shape holds a non-integer or negative value");
    const uint64_t v = d.get<uint64_t>();
    if (v != 0 && numel > (uint64_t{1} << 40) / v) return bad_input(what + ": too many elements");
    numel *= v;
    shape->push_back(static_cast<int64_t>(v));
  }
  const auto& off = info["data_offsets"];
  if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
    return bad_input(what + ": data_offsets is not a pair of non-negative integers");
  *begin = off[0].get<uint64_t>();
  *end = off[1].get<uint64_t>();
  if (*begin > *end || *end > data_bytes)
    return bad_input(what + ": data_offsets [" + std::to_string(*begin) + ", " + std::to_string(*end) +
                     "] lie outside the " + std::to_string(data_bytes) + "-byte data section");
  if (*end - *begin != numel * elem->size)
    return bad_input(what + ": " + std::to_string(*end - *begin) + " bytes for " + std::to_string(numel) +
                     " " + elem->name + " elements");
  return Status::Ok();
}

}  // namespace

Status load_safetensors(const std::string& path, Checkpoint* out) {
  uint64_t file_size = 0;
  VITRT_RETURN_IF_ERROR(regular_file_size(path, &file_size));
  std::unique_ptr<FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) return io_error("cannot open the file");
  if (file_size < 8) return bad_input("file too short for safetensors");
  ExpansionBudget budget(file_size);
  uint8_t len_bytes[8];
  if (std::fread(len_bytes, 1, 8, f.get()) != 8) return io_error("cannot read the safetensors header length");
  uint64_t header_len = 0;
  for (int k = 7; k >= 0; --k) header_len = (header_len << 8) | len_bytes[k];
  const uint64_t rest = file_size - 8;
  if (header_len > rest)
    return bad_input("safetensors header length " + std::to_string(header_len) + " exceeds the file (" +
                     std::to_string(file_size) + " bytes): truncated or not a safetensors file");
  if (header_len > kMaxSafetensorsHeaderBytes)
    return bad_input("safetensors header length " + std::to_string(header_len) + " exceeds the " +
                     std::to_string(kMaxSafetensorsHeaderBytes >> 20) + " MiB limit");
  std::string header(static_cast<size_t>(header_len), '\0');
  if (std::fread(header.data(), 1, header.size(), f.get()) != header.size())
    return io_error("cannot read the safetensors header");
  const uint64_t data_bytes = rest - header_len;
  const long data_start = static_cast<long>(8 + header_len);

  VITRT_RETURN_IF_ERROR(check_nesting(header));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(header);
  } catch (const nlohmann::json::exception& e) {
    return bad_input(std::string("safetensors header is not valid JSON (") + e.what() + ")");
  }
  if (!j.is_object()) return bad_input("safetensors header is not a JSON object");
  out->container = "safetensors";
  try {
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string& name = it.key();
      if (name == "__metadata__") {
        if (!it.value().is_object()) return bad_input("safetensors __metadata__ is not an object");
        for (auto m = it.value().begin(); m != it.value().end(); ++m)
          if (m.value().is_string()) out->args[m.key()] = m.value().get<std::string>();
        continue;
      }
      ElementInfo elem;
      std::vector<int64_t> shape;
      uint64_t begin = 0, end = 0;
      VITRT_RETURN_IF_ERROR(parse_entry(name, it.value(), data_bytes, &elem, &shape, &begin, &end));
      // Entries may overlap (aliases of one range): each costs its bytes and float32 values again.
      VITRT_RETURN_IF_ERROR(budget.charge(end - begin, "the data of safetensors entry '" + name + "'"));
      VITRT_RETURN_IF_ERROR(budget.charge((end - begin) / elem.size * sizeof(float),
                                          "the float32 values of safetensors entry '" + name + "'"));
      std::vector<uint8_t> bytes(static_cast<size_t>(end - begin));
      if (std::fseek(f.get(), data_start + static_cast<long>(begin), SEEK_SET) != 0 ||
          std::fread(bytes.data(), 1, bytes.size(), f.get()) != bytes.size())
        return io_error("cannot read the data of safetensors entry '" + name + "'");
      StridedView view;
      view.size = shape;
      view.stride.assign(shape.size(), 1);
      for (size_t k = shape.size(); k-- > 1;) view.stride[k - 1] = view.stride[k] * shape[k];
      const int64_t numel = static_cast<int64_t>(bytes.size() / elem.size);
      const std::string key = name.rfind("module.", 0) == 0 ? name.substr(7) : name;
      if (out->tensors.count(key))
        return bad_input("safetensors entries '" + name + "' and '" + key +
                         "' clash once 'module.' is stripped");
      CheckpointTensor& t = out->tensors[key];
      t.name = key;
      t.source_dtype = elem.dtype;
      t.source_type = elem.name;
      t.shape = shape;
      gather_float32(bytes.data(), elem, view, numel, &t.values);
    }
  } catch (const nlohmann::json::exception& e) {
    return bad_input(std::string("malformed safetensors header (") + e.what() + ")");
  }
  auto arch = out->args.find("arch");
  if (arch == out->args.end()) arch = out->args.find("model");
  if (arch != out->args.end()) out->arch_hint = arch->second;
  if (out->tensors.empty()) return bad_input("the safetensors file holds no tensors");
  return Status::Ok();
}

}  // namespace vitrt::convert
