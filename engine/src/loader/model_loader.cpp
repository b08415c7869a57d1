// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "loader/model_loader.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/checked_math.h"
#include "file_checksum.h"
#include "format_version.h"
#include "ir/shape_propagation.h"
#include "op_codes.h"
#include "op_options.h"
#include "ops/op_registry.h"
#include "vitrt_generated.h"

namespace vitrt {
namespace {

// Verifier limits: a ViT has a few thousand tables; these leave a wide margin while bounding the work a
// hostile file can cause.
constexpr flatbuffers::uoffset_t kMaxDepth = 64;
constexpr flatbuffers::uoffset_t kMaxTables = 1u << 22;

std::string tensor_where(size_t i, const fb::Tensor* t) {
  return "tensor #" + std::to_string(i) + (t && t->name() ? " '" + t->name()->str() + "'" : std::string());
}

Status check_tensors(const fb::Model& m, const std::shared_ptr<MappedFile>& file, Graph* g,
                     uint64_t* weight_bytes) {
  const auto* tensors = m.graph()->tensors();
  const auto* buffers = m.buffers();
  if (!tensors) return bad_model("graph has no tensor list");
  if (tensors->size() > static_cast<flatbuffers::uoffset_t>(kMaxGraphTensors))
    return bad_model("graph has " + std::to_string(tensors->size()) + " tensors, more than the limit of " +
                     std::to_string(kMaxGraphTensors));
  *weight_bytes = 0;
  std::vector<bool> buffer_used(buffers->size(), false);
  for (flatbuffers::uoffset_t i = 0; i < tensors->size(); ++i) {
    const fb::Tensor* ft = tensors->Get(i);
    const std::string where = tensor_where(i, ft);
    Tensor t;
    t.name = ft->name() ? ft->name()->str() : std::string();
    const int dt = static_cast<int>(ft->dtype());
    if (!dtype_valid(dt)) return bad_model(where + ": unknown dtype " + std::to_string(dt));
    t.dtype = static_cast<DType>(dt);
    if (!ft->shape()) return bad_model(where + ": missing shape");
    if (ft->shape()->size() > static_cast<flatbuffers::uoffset_t>(kMaxRank))
      return bad_model(where + ": rank " + std::to_string(ft->shape()->size()) + " exceeds " +
                       std::to_string(kMaxRank));
    const std::vector<int64_t> dims = copy_int64_vector(*ft->shape());
    Shape::from_vector(dims, &t.shape);
    const uint32_t b = ft->buffer();
    if (b >= buffers->size())
      return bad_model(where + ": buffer index " + std::to_string(b) + " out of range (" +
                       std::to_string(buffers->size()) + " buffers)");
    Shape at_batch_1 = t.shape;
    for (int d = 0; d < t.shape.rank; ++d) {
      const int64_t v = t.shape[d];
      if (v < 0 && !(v == kDynamicDim && b == 0))
        return bad_model(where + ": invalid dimension " + std::to_string(v) + " in shape " + t.shape.str());
      if (v == kDynamicDim) at_batch_1[d] = 1;
    }
    int64_t declared = 0;
    if (!checked_numel(at_batch_1, &declared) || declared > kMaxTensorElements)
      return bad_model(where + ": shape " + t.shape.str() + " holds more than " +
                       std::to_string(kMaxTensorElements) + " elements (the per-tensor limit)");
    if (b != 0) {
      if (buffer_used[b])
        return bad_model(where + ": buffer " + std::to_string(b) + " is shared by two tensors");
      buffer_used[b] = true;
      const fb::Buffer* buf = buffers->Get(b);
      int64_t numel;
      if (!checked_numel(t.shape, &numel))
        return bad_model(where + ": element count of shape " + t.shape.str() + " overflows");
      const uint64_t elem = dtype_size(t.dtype);
      if (static_cast<uint64_t>(numel) > UINT64_MAX / elem ||
          static_cast<uint64_t>(numel) * elem != buf->size())
        return bad_model(where + ": shape " + t.shape.str() + " of " + dtype_name(t.dtype) + " needs " +
                         std::to_string(static_cast<uint64_t>(numel) * elem) +
                         " bytes but its buffer holds " + std::to_string(buf->size()));
      t.is_constant = true;
      t.constant.data = file->data() + buf->offset();
      t.constant.size = buf->size();
      t.constant.owner = file;
      t.constant.file_mapped = file->file_mapped();
      *weight_bytes += buf->size();
    }
    g->tensors.push_back(std::move(t));
  }
  return Status::Ok();
}

Status check_buffers(const fb::Model& m, size_t fb_end, size_t file_size) {
  const auto* buffers = m.buffers();
  if (!buffers || buffers->size() == 0)
    return bad_model("missing buffer table (buffer 0 must be the empty sentinel)");
  // The verifier checks only the 4-byte alignment of a vector's length; Buffer holds 64-bit fields.
  if (reinterpret_cast<uintptr_t>(buffers->Data()) % alignof(fb::Buffer) != 0)
    return bad_model("the buffer table is not " + std::to_string(alignof(fb::Buffer)) + "-byte aligned");
  const fb::Buffer* s = buffers->Get(0);
  if (s->offset() != 0 || s->size() != 0) return bad_model("buffer 0 is not the empty sentinel");
  for (flatbuffers::uoffset_t i = 1; i < buffers->size(); ++i) {
    const fb::Buffer* b = buffers->Get(i);
    const std::string where = "buffer #" + std::to_string(i);
    if (b->offset() % kDataAlignment != 0)
      return bad_model(where + ": offset " + std::to_string(b->offset()) + " is not " +
                       std::to_string(kDataAlignment) + "-byte aligned");
    if (b->offset() < fb_end) return bad_model(where + ": offset overlaps the flatbuffer header");
    if (b->size() > file_size || b->offset() > file_size - b->size())
      return bad_model(where + ": bytes [" + std::to_string(b->offset()) + ", +" + std::to_string(b->size()) +
                       ") lie beyond the end of the file (" + std::to_string(file_size) +
                       " bytes): the file is truncated");
  }
  // No two buffers may share bytes: each weight is its own data, as the writer lays it out.
  std::vector<std::pair<uint64_t, flatbuffers::uoffset_t>> by_offset;
  for (flatbuffers::uoffset_t i = 1; i < buffers->size(); ++i)
    if (buffers->Get(i)->size() > 0) by_offset.emplace_back(buffers->Get(i)->offset(), i);
  std::sort(by_offset.begin(), by_offset.end());
  for (size_t k = 1; k < by_offset.size(); ++k) {
    const fb::Buffer* prev = buffers->Get(by_offset[k - 1].second);
    if (by_offset[k].first < prev->offset() + prev->size())
      return bad_model("buffer #" + std::to_string(by_offset[k].second) + " overlaps buffer #" +
                       std::to_string(by_offset[k - 1].second) + " (bytes from " +
                       std::to_string(by_offset[k].first) + ")");
  }
  return Status::Ok();
}

Status build_nodes(const fb::Model& m, Graph* g) {
  const auto* codes = m.operator_codes();
  const auto* ops = m.graph()->operators();
  if (!ops) return bad_model("graph has no operator list");
  if (ops->size() > static_cast<flatbuffers::uoffset_t>(kMaxGraphNodes))
    return bad_model("graph has " + std::to_string(ops->size()) + " ops, more than the limit of " +
                     std::to_string(kMaxGraphNodes));
  const size_t ncodes = codes ? codes->size() : 0;
  std::vector<OpType> type_of_code(ncodes);  // the file's op codes in IR terms (formats/op_codes.h)
  for (size_t c = 0; c < ncodes; ++c) {
    const auto* code = codes->Get(static_cast<flatbuffers::uoffset_t>(c));
    VITRT_RETURN_IF_ERROR(op_type_of_code(code->builtin(), &type_of_code[c])
                              .with_context("operator code #" + std::to_string(c)));
    const OpSchema* schema = find_op_schema(type_of_code[c]);
    if (code->version() < 1 || code->version() > schema->max_version)
      return unsupported(std::string("op ") + schema->name + " version " + std::to_string(code->version()) +
                         " is not supported by this build (knows 1.." + std::to_string(schema->max_version) +
                         ")");
  }
  for (flatbuffers::uoffset_t i = 0; i < ops->size(); ++i) {
    const fb::Operator* op = ops->Get(i);
    std::string where = "op #" + std::to_string(i);
    if (op->name()) where += " '" + op->name()->str() + "'";
    if (op->opcode_index() >= ncodes)
      return bad_model(where + ": opcode index " + std::to_string(op->opcode_index()) + " out of range");
    const auto* code = codes->Get(op->opcode_index());
    Node n;
    n.type = type_of_code[op->opcode_index()];
    n.version = code->version();
    n.name = op->name() ? op->name()->str() : std::string();
    where = describe_node(n, i);
    if (!op->inputs() || !op->outputs()) return bad_model(where + ": missing input or output list");
    n.inputs.assign(op->inputs()->begin(), op->inputs()->end());
    n.outputs.assign(op->outputs()->begin(), op->outputs()->end());
    // Conv2d's fourth input, a residual added before the activation, exists only in planned graphs
    // (fuse_epilogue): the passes that run before it (squeeze-excite, selective kernel, channels-last stem)
    // do not carry one, so a file that has it would lose it or misread its layout (docs/format.md).
    if (n.type == OpType::kConv2d && n.inputs.size() > 3)
      return bad_model(
          where + ": Conv2d has " + std::to_string(n.inputs.size()) +
          " inputs; a model file gives it 2 or 3 (src, weight, bias): its residual input is set by "
          "the planner only");
    VITRT_RETURN_IF_ERROR(decode_op_options(*op, n.type, where, &n.attrs));
    g->nodes.push_back(std::move(n));
  }
  return Status::Ok();
}

void read_metadata(const fb::Model& m, ModelMetadata* md) {
  if (m.producer()) md->producer = m.producer()->str();
  if (m.arch()) md->arch = m.arch()->str();
  if (m.labels())
    for (const auto* s : *m.labels()) md->labels.push_back(s ? s->str() : std::string());
  if (const auto* p = m.preprocess()) {
    Preprocess& pp = md->preprocess;
    pp.resize_shorter = p->resize_shorter();
    pp.crop_h = p->crop_h();
    pp.crop_w = p->crop_w();
    pp.interpolation = static_cast<Interpolation>(p->interpolation());
    if (p->mean()) pp.mean.assign(p->mean()->begin(), p->mean()->end());
    if (p->std()) pp.std.assign(p->std()->begin(), p->std()->end());
    pp.channels = p->channels();
  }
  if (m.metadata())
    for (const auto* kv : *m.metadata())
      if (kv->key()) md->extra[kv->key()->str()] = kv->value() ? kv->value()->str() : std::string();
}

Status check_metadata(const Graph& g) {
  const Preprocess& p = g.metadata.preprocess;
  const int ip = static_cast<int>(p.interpolation);
  if (ip < 0 || ip > 2) return bad_model("preprocess: unknown interpolation " + std::to_string(ip));
  if (p.channels != 1 && p.channels != 3) return bad_model("preprocess: channels must be 1 or 3");
  if (p.mean.size() != static_cast<size_t>(p.channels) || p.std.size() != static_cast<size_t>(p.channels))
    return bad_model("preprocess: mean/std need one value per channel (" + std::to_string(p.channels) + ")");
  for (float m : p.mean)
    if (!std::isfinite(m)) return bad_model("preprocess: mean values must be finite numbers");
  for (float s : p.std)
    if (!(s > 0) || !std::isfinite(s)) return bad_model("preprocess: std values must be finite and positive");
  if (p.resize_shorter < 1 || p.crop_h < 1 || p.crop_w < 1 || p.resize_shorter > 65536 || p.crop_h > 65536 ||
      p.crop_w > 65536)
    return bad_model("preprocess: resize/crop sizes out of range");
  if (g.inputs.size() != 1) return bad_model("expected exactly one graph input (the image batch)");
  const Shape& in = g.tensors[g.inputs[0]].shape;
  if (in.rank != 4 || in[0] != kDynamicDim || in[1] < 1 || in[2] < 1 || in[3] < 1)
    return bad_model("graph input must be [B,C,H,W] with a dynamic batch, got " + in.str());
  if (in[1] != p.channels || in[2] != p.crop_h || in[3] != p.crop_w)
    return bad_model("preprocess produces " + std::to_string(p.channels) + "x" + std::to_string(p.crop_h) +
                     "x" + std::to_string(p.crop_w) + " but the graph input is " + in.str());
  return Status::Ok();
}

// What `run` can honestly serve: float32 outputs [B, ...] (the first: the logits [B, classes] of a
// classifier) computed by ops (not constants nor the input), float32 everywhere an op reads or writes (the
// only dtype this build computes), finite weights, and either no labels or one per class.
Status check_runnable(const Graph& g) {
  // run() returns outputs[0]; further outputs are tensors kept alive for inspection (Session::tensor_data).
  for (int32_t out : g.outputs) {
    const Tensor& t = g.tensors[out];
    if (t.is_constant)
      return bad_model("graph output '" + t.name + "' is a constant, not computed from the input");
    if (out == g.inputs[0]) return bad_model("graph output '" + t.name + "' is the graph input itself");
    if (t.shape.rank < 1 || t.shape[0] != kDynamicDim)
      return bad_model("graph output '" + t.name +
                       "' must carry the batch as its first axis ([B,classes] for a "
                       "classifier), got " +
                       t.shape.str());
  }
  const int32_t out = g.outputs[0];
  const Tensor& ot = g.tensors[out];
  const int64_t classes = ot.shape.dim(-1);
  const auto& labels = g.metadata.labels;
  if (!labels.empty() && static_cast<int64_t>(labels.size()) != classes)
    return bad_model("the model has " + std::to_string(labels.size()) + " labels for " +
                     std::to_string(classes) + " classes");
  std::vector<bool> used(g.tensors.size(), false);
  for (const Node& n : g.nodes) {
    for (int32_t t : n.inputs)
      if (t != kAbsent) used[t] = true;
    for (int32_t t : n.outputs) used[t] = true;
  }
  used[g.inputs[0]] = used[out] = true;
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    const Tensor& t = g.tensors[i];
    if (!used[i]) continue;
    if (t.dtype != DType::kFloat32)
      return bad_model("tensor #" + std::to_string(i) + " '" + t.name + "' is " + dtype_name(t.dtype) +
                       ", but this build computes in float32 only");
    if (!t.is_constant) continue;
    const float* w = reinterpret_cast<const float*>(t.constant.data);
    const size_t n = t.constant.size / sizeof(float);
    for (size_t k = 0; k < n; ++k)
      if (!std::isfinite(w[k]))
        return bad_model("weight '" + t.name + "' holds " + std::to_string(w[k]) + " at element " +
                         std::to_string(k) + "; weights must be finite");
  }
  return Status::Ok();
}

Status load_verified(const std::shared_ptr<MappedFile>& file, const std::string& name,
                     std::shared_ptr<const Model>* out) {
  const uint8_t* data = file->data();
  const size_t size = file->size();
  if (size < 12)
    return bad_model("file is too small (" + std::to_string(size) + " bytes) to be a vitrt model");
  if (!fb::SizePrefixedModelBufferHasIdentifier(data)) {
    std::string got(reinterpret_cast<const char*>(data) + 8, 4);
    for (char& c : got)
      if (c < 32 || c > 126) c = '?';
    return bad_model("not a vitrt model: file identifier is '" + got + "', expected '" + kFileIdentifier +
                     "'");
  }
  uint32_t fb_len;
  std::memcpy(&fb_len, data, 4);
  if (fb_len > size - 4)
    return bad_model("truncated: the header declares " + std::to_string(fb_len) + " bytes but the file has " +
                     std::to_string(size - 4) + " after the size prefix");
  const size_t fb_end = 4 + static_cast<size_t>(fb_len);
  flatbuffers::Verifier verifier(data, fb_end, kMaxDepth, kMaxTables);
  if (!fb::VerifySizePrefixedModelBuffer(verifier))
    return bad_model("the FlatBuffers verifier rejected the header (corrupt or truncated file)");
  const fb::Model* m = fb::GetSizePrefixedModel(data);
  const uint8_t* crc_field = crc32_field_address(m);
  if (!crc_field) return bad_model("the header has no checksum field");
  FileChecksum crc(static_cast<size_t>(crc_field - data));
  crc.update(data, size);
  if (crc.value() != m->crc32())
    return bad_model("checksum mismatch (stored " + std::to_string(m->crc32()) + ", computed " +
                     std::to_string(crc.value()) + "): the file is corrupt or was modified after writing");
  if (!format_version_supported(m->format_version()))
    return unsupported("format version " + std::to_string(m->format_version()) +
                       " is not supported (this build reads version " + std::to_string(kFormatVersion) + ")");
  if (!m->graph()) return bad_model("model has no graph");
  VITRT_RETURN_IF_ERROR(check_buffers(*m, fb_end, size));

  auto model = std::make_shared<Model>();
  model->file = file;
  model->path = name;
  model->format_version = m->format_version();
  Graph& g = model->graph;
  VITRT_RETURN_IF_ERROR(check_tensors(*m, file, &g, &model->weight_bytes));
  VITRT_RETURN_IF_ERROR(build_nodes(*m, &g));
  if (m->graph()->inputs()) g.inputs.assign(m->graph()->inputs()->begin(), m->graph()->inputs()->end());
  if (m->graph()->outputs()) g.outputs.assign(m->graph()->outputs()->begin(), m->graph()->outputs()->end());
  read_metadata(*m, &g.metadata);
  VITRT_RETURN_IF_ERROR(g.validate_structure());
  VITRT_RETURN_IF_ERROR(check_metadata(g));
  VITRT_RETURN_IF_ERROR(resolve_activation_shapes(&g));
  VITRT_RETURN_IF_ERROR(check_runnable(g));
  *out = std::move(model);
  return Status::Ok();
}

}  // namespace

Status load_model(const std::string& path, std::shared_ptr<const Model>* out) {
  std::shared_ptr<MappedFile> file;
  VITRT_RETURN_IF_ERROR(MappedFile::open(path, &file));
  Status st = load_verified(file, path, out);
  return st.with_context("'" + path + "'");
}

Status load_model_from_memory(const void* data, size_t size, std::shared_ptr<const Model>* out) {
  if (!data && size) return invalid_argument("null model memory");
  if (reinterpret_cast<uintptr_t>(data) % kDataAlignment != 0)
    return invalid_argument("model memory must be " + std::to_string(kDataAlignment) + "-byte aligned");
  Status st = load_verified(MappedFile::borrow(data, size), "<memory>", out);
  return st.with_context("model in memory");
}

}  // namespace vitrt
