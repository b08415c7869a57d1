// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "model_writer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>

#include "file_checksum.h"
#include "format_version.h"
#include "op_options.h"
#include "vitrt_generated.h"

namespace vitrt {
namespace {

size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

struct Layout {
  std::vector<int32_t> buffer_of_tensor;  // 0 for activations
  std::vector<uint64_t> rel_offset;       // per buffer (index 0 = sentinel), relative to the data section
  std::vector<uint64_t> size;
  uint64_t data_bytes = 0;
};

Layout plan_data_section(const Graph& g) {
  Layout l;
  l.buffer_of_tensor.assign(g.tensors.size(), 0);
  l.rel_offset.push_back(0);
  l.size.push_back(0);
  uint64_t cursor = 0;
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    const Tensor& t = g.tensors[i];
    if (!t.is_constant) continue;
    cursor = align_up(cursor, kDataAlignment);
    l.buffer_of_tensor[i] = static_cast<int32_t>(l.rel_offset.size());
    l.rel_offset.push_back(cursor);
    l.size.push_back(t.constant.size);
    cursor += t.constant.size;
  }
  l.data_bytes = cursor;
  return l;
}

// Builds the flatbuffer with buffer offsets relative to `data_start`.
void build_flatbuffer(const Graph& g, const Layout& l, uint64_t data_start, flatbuffers::FlatBufferBuilder* fbb) {
  fbb->Clear();
  fbb->ForceDefaults(true);  // same size whatever the values, so the two-pass layout is stable
  // Operator codes: one per (type, version) in order of first use.
  std::vector<std::pair<OpType, int32_t>> codes;
  std::vector<uint32_t> code_of_node;
  for (const Node& n : g.nodes) {
    uint32_t idx = 0;
    while (idx < codes.size() && !(codes[idx].first == n.type && codes[idx].second == n.version)) ++idx;
    if (idx == codes.size()) codes.emplace_back(n.type, n.version);
    code_of_node.push_back(idx);
  }
  std::vector<flatbuffers::Offset<fb::OperatorCode>> fb_codes;
  for (const auto& c : codes)
    fb_codes.push_back(fb::CreateOperatorCode(*fbb, static_cast<fb::BuiltinOp>(c.first), c.second));

  std::vector<flatbuffers::Offset<fb::Tensor>> fb_tensors;
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    const Tensor& t = g.tensors[i];
    fb_tensors.push_back(fb::CreateTensor(*fbb, fbb->CreateString(t.name), static_cast<fb::DType>(t.dtype),
                                          fbb->CreateVector(t.shape.to_vector()),
                                          static_cast<uint32_t>(l.buffer_of_tensor[i])));
  }
  std::vector<flatbuffers::Offset<fb::Operator>> fb_ops;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    const EncodedOptions opts = encode_op_options(*fbb, n);
    fb_ops.push_back(fb::CreateOperator(*fbb, code_of_node[i], fbb->CreateVector(n.inputs),
                                        fbb->CreateVector(n.outputs), opts.type, opts.offset,
                                        fbb->CreateString(n.name)));
  }
  auto graph = fb::CreateGraph(*fbb, fbb->CreateVector(fb_tensors), fbb->CreateVector(fb_ops),
                               fbb->CreateVector(g.inputs), fbb->CreateVector(g.outputs));
  std::vector<fb::Buffer> buffers;
  buffers.emplace_back(0, 0);  // the empty sentinel
  for (size_t b = 1; b < l.rel_offset.size(); ++b) buffers.emplace_back(data_start + l.rel_offset[b], l.size[b]);

  const ModelMetadata& m = g.metadata;
  std::vector<flatbuffers::Offset<flatbuffers::String>> labels;
  for (const auto& s : m.labels) labels.push_back(fbb->CreateString(s));
  const Preprocess& p = m.preprocess;
  auto pre = fb::CreatePreprocess(*fbb, p.resize_shorter, p.crop_h, p.crop_w,
                                  static_cast<fb::Interpolation>(p.interpolation), fbb->CreateVector(p.mean),
                                  fbb->CreateVector(p.std), p.channels);
  std::vector<flatbuffers::Offset<fb::KeyValue>> kvs;
  for (const auto& kv : m.extra)  // std::map: sorted, as the (key) attribute requires
    kvs.push_back(fb::CreateKeyValue(*fbb, fbb->CreateString(kv.first), fbb->CreateString(kv.second)));
  auto model = fb::CreateModel(*fbb, kFormatVersion, fbb->CreateString(m.producer), fbb->CreateString(m.arch),
                               fbb->CreateVector(fb_codes), graph, fbb->CreateVectorOfStructs(buffers),
                               fbb->CreateVector(labels), pre, fbb->CreateVector(kvs));
  fb::FinishSizePrefixedModelBuffer(*fbb, model);
}

Status check_writable(const Graph& g) {
  VITRT_RETURN_IF_ERROR(g.validate_structure());
  for (const Tensor& t : g.tensors) {
    if (!t.is_constant) continue;
    int64_t n;
    if (!checked_numel(t.shape, &n) || static_cast<uint64_t>(n) * dtype_size(t.dtype) != t.constant.size ||
        (t.constant.size && !t.constant.data))
      return invalid_argument("constant '" + t.name + "' has " + std::to_string(t.constant.size) +
                              " bytes, which does not match its shape " + t.shape.str() + " and dtype " +
                              dtype_name(t.dtype));
  }
  return Status::Ok();
}

// Hands each piece of the file after the flatbuffer (zero gaps and weights) to `emit`, in file order.
bool emit_data(const Graph& g, const Layout& l, uint64_t gap_before_data, const std::function<bool(const void*, size_t)>& emit) {
  static const uint8_t kZeros[kDataAlignment] = {};
  if (!emit(kZeros, gap_before_data)) return false;
  uint64_t pos = 0;
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    const int32_t b = l.buffer_of_tensor[i];
    if (b == 0) continue;
    if (!emit(kZeros, l.rel_offset[b] - pos) || !emit(g.tensors[i].constant.data, l.size[b])) return false;
    pos = l.rel_offset[b] + l.size[b];
  }
  return true;
}

// Lays the file out, fills in the checksum, and hands each piece to `emit` in file order.
Status emit_file(const Graph& g, const std::function<bool(const void*, size_t)>& emit) {
  VITRT_RETURN_IF_ERROR(check_writable(g));
  const Layout l = plan_data_section(g);
  flatbuffers::FlatBufferBuilder fbb(1 << 16);
  build_flatbuffer(g, l, 0, &fbb);
  const size_t fb_size = fbb.GetSize();
  const uint64_t data_start = align_up(fb_size, kDataAlignment);
  build_flatbuffer(g, l, data_start, &fbb);
  if (fbb.GetSize() != fb_size) return runtime_error("model writer: flatbuffer size changed between passes");
  fb::Model* model = fb::GetMutableSizePrefixedModel(fbb.GetBufferPointer());
  const uint8_t* field = crc32_field_address(model);
  if (!field) return runtime_error("model writer: crc32 field not stored");
  FileChecksum crc(static_cast<size_t>(field - fbb.GetBufferPointer()));
  crc.update(fbb.GetBufferPointer(), fb_size);
  emit_data(g, l, data_start - fb_size, [&crc](const void* p, size_t n) {
    crc.update(p, n);
    return true;
  });
  model->mutate_crc32(crc.value());
  if (!emit(fbb.GetBufferPointer(), fb_size) || !emit_data(g, l, data_start - fb_size, emit))
    return io_error("write failed");
  return Status::Ok();
}

}  // namespace

Status write_model_memory(const Graph& graph, std::vector<uint8_t>* out) {
  out->clear();
  return emit_file(graph, [out](const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    out->insert(out->end(), b, b + n);
    return true;
  });
}

Status write_model_file(const Graph& graph, const std::string& path) {
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return io_error("cannot create '" + tmp + "': " + std::strerror(errno));
  Status st = emit_file(graph, [f](const void* p, size_t n) { return n == 0 || std::fwrite(p, 1, n, f) == n; });
  if (std::fclose(f) != 0 && st.ok()) st = io_error("cannot close '" + tmp + "'");
  if (st.ok() && std::rename(tmp.c_str(), path.c_str()) != 0)
    st = io_error("cannot rename '" + tmp + "' to '" + path + "': " + std::strerror(errno));
  if (!st.ok()) {
    std::remove(tmp.c_str());
    return st.with_context("writing '" + path + "'");
  }
  return Status::Ok();
}

}  // namespace vitrt
