// SPDX-License-Identifier: Apache-2.0
// Copyright the vitrt authors.
#pragma once
// Limits of the ONNX importer on hostile files (docs/onnx.md, docs/limits.md). Every size an ONNX file
// declares is checked against these before anything is allocated for it.
#include <cstdint>

namespace vitrt::convert {

// The .onnx file itself: protobuf cannot parse messages over 2 GiB; larger models keep their weights in
// external data files.
constexpr uint64_t kMaxOnnxFileBytes = (uint64_t{2} << 30) - 1;
// Nesting of protobuf messages (ModelProto > GraphProto > NodeProto > AttributeProto > TensorProto is 5;
// subgraphs of If/Loop nest further and are refused anyway).
constexpr int kMaxOnnxRecursion = 32;
// Nodes and initializers of the graph.
constexpr int64_t kMaxOnnxNodes = 1 << 20;
// One external data file may be read at most up to this size; all of them together at most
// kMaxExternalBytes.
constexpr uint64_t kMaxExternalBytes = uint64_t{64} << 30;
// Elements of one tensor the importer materialises (initializer, folded constant): 2^32, the IR's limit.
constexpr int64_t kMaxOnnxTensorElements = int64_t{1} << 32;
// Elements of a constant the shape machinery may compute (Range, ConstantOfShape, arithmetic on constants).
constexpr int64_t kMaxFoldedElements = int64_t{1} << 24;
// Work of evaluating one node of constants with the reference kernels at import (onnx/fold_by_reference.h),
// counted as elements read plus multiply-adds: about a second; a node over it is computed at run time
// instead.
constexpr int64_t kMaxFoldedWork = int64_t{1} << 30;
// Opsets of the default domain the importer understands. Opsets 7 to 10 are read as 11 once
// onnx/opset_upgrade.h has rewritten the few ops whose form changed (kImportMinOpset is what the lowerings
// see). Below 7 the arithmetic ops broadcast only by a `broadcast` attribute with their own rules.
constexpr int64_t kMinOnnxOpset = 7;
constexpr int64_t kImportMinOpset = 11;
// Opsets 19-25 changed no float32 semantics of the ops the importer reads, except the forms
// onnx/opset_forms.cpp refuses and the attribute values the lowerings refuse by name (docs/onnx.md,
// "Opsets").
constexpr int64_t kMaxOnnxOpset = 25;

}  // namespace vitrt::convert
