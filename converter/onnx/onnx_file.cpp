// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#include "onnx/onnx_file.h"

#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "checkpoint/read_limits.h"
#include "onnx/onnx_limits.h"

namespace vitrt::convert {

bool looks_like_onnx_bytes(const uint8_t* data, size_t size) {
  if (size < 2) return false;
  const uint8_t tag = data[0];
  const int field = tag >> 3, wire = tag & 7;
  // ModelProto: 1 ir_version (varint), 2-4 producer/domain strings, 5 model_version (varint), 6 doc_string,
  // 7 graph, 8 opset_import, 14 metadata_props, 20 training_info, 25 functions (length-delimited).
  switch (field) {
    case 1:
    case 5:
      return wire == 0;
    case 2:
    case 3:
    case 4:
    case 6:
    case 7:
    case 8:
    case 14:
      return wire == 2;
    default:
      return false;
  }
}

bool looks_like_onnx(const std::string& path) {
  uint64_t size = 0;
  if (!regular_file_size(path, &size).ok()) return false;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  uint8_t head[16] = {0};
  const size_t n = std::fread(head, 1, sizeof head, f);
  std::fclose(f);
  return looks_like_onnx_bytes(head, n);
}

int64_t onnx_opset(const onnx::ModelProto& model) {
  for (const auto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") return o.version();
  return -1;
}

std::string onnx_node_where(const onnx::NodeProto& n, int64_t opset) {
  const std::string name = n.name().empty() ? (n.output_size() ? n.output(0) : std::string("?")) : n.name();
  return "node '" + name + "' (" + n.op_type() + ", opset " + std::to_string(opset) + ")";
}

namespace {

// Parses `size` bytes of `stream` into `model` under protobuf's total-bytes limit (the size) and recursion
// limit, requiring all `size` bytes to make up the message; then the checks every ONNX model gets.
Status parse_stream(google::protobuf::io::ZeroCopyInputStream* stream, size_t size, const std::string& name,
                    onnx::ModelProto* model) {
  google::protobuf::io::CodedInputStream coded(stream);
  coded.SetTotalBytesLimit(static_cast<int>(size));
  coded.SetRecursionLimit(kMaxOnnxRecursion);
  model->Clear();
  if (!model->ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage() ||
      static_cast<size_t>(coded.CurrentPosition()) != size)
    return bad_input(
        "'" + name +
        "' is not a valid ONNX model: the protobuf parser rejected it (truncated or corrupt file, or "
        "messages nested deeper than " +
        std::to_string(kMaxOnnxRecursion) + " levels)");
  if (!model->has_graph()) return bad_input("'" + name + "' has no graph: not an ONNX model");
  for (const auto& o : model->opset_import()) {
    const std::string& d = o.domain();
    if (!d.empty() && d != "ai.onnx")
      return unsupported("'" + name + "' imports operator set domain '" + d + "' version " +
                         std::to_string(o.version()) + "; only the default ONNX domain is supported");
  }
  const int64_t opset = onnx_opset(*model);
  if (opset < 0) return bad_input("'" + name + "' imports no default-domain operator set");
  if (opset < kMinOnnxOpset || opset > kMaxOnnxOpset)
    return unsupported("'" + name + "' uses ONNX opset " + std::to_string(opset) + "; supported are opsets " +
                       std::to_string(kMinOnnxOpset) + " to " + std::to_string(kMaxOnnxOpset) +
                       " (re-export with torch.onnx.export(..., opset_version=20), PyTorch's default)");
  if (model->graph().node_size() > kMaxOnnxNodes || model->graph().initializer_size() > kMaxOnnxNodes)
    return bad_input("'" + name + "' has more than " + std::to_string(kMaxOnnxNodes) +
                     " nodes or initializers");
  return Status::Ok();
}

Status check_size(uint64_t size, const std::string& name) {
  if (size == 0) return bad_input("'" + name + "' is empty");
  if (size > kMaxOnnxFileBytes)
    return bad_input("'" + name + "' has " + std::to_string(size) + " bytes, more than the " +
                     std::to_string(kMaxOnnxFileBytes) +
                     "-byte limit of a protobuf message (keep large weights in external data files)");
  return Status::Ok();
}

// Closes a file descriptor when it goes out of scope.
struct FdCloser {
  int fd;
  ~FdCloser() { ::close(fd); }
};

}  // namespace

Status parse_onnx_model(const uint8_t* data, size_t size, const std::string& name, onnx::ModelProto* model) {
  VITRT_RETURN_IF_ERROR(check_size(size, name));
  google::protobuf::io::ArrayInputStream array(data, static_cast<int>(size));
  return parse_stream(&array, size, name, model);
}

Status read_onnx_model(const std::string& path, onnx::ModelProto* model) {
  uint64_t size = 0;
  VITRT_RETURN_IF_ERROR(regular_file_size(path, &size).with_context("'" + path + "'"));
  VITRT_RETURN_IF_ERROR(check_size(size, path));
  // O_NONBLOCK: a FIFO swapped in after the check above must not block the open.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return io_error("cannot open '" + path + "': " + std::strerror(errno));
  FdCloser closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) != size)
    return io_error("'" + path + "' changed while it was opened");
  // Parsed from the file in 1 MiB reads rather than from a copy of the whole file: the parsed message
  // (above all its initializers' raw data) is the only copy of the bytes in memory (docs/onnx.md, Cost of an
  // import).
  google::protobuf::io::FileInputStream stream(fd, 1 << 20);
  Status st_parse = parse_stream(&stream, static_cast<size_t>(size), path, model);
  if (stream.GetErrno() != 0)
    return io_error("cannot read '" + path + "': " + std::strerror(stream.GetErrno()));
  return st_parse;
}

}  // namespace vitrt::convert
