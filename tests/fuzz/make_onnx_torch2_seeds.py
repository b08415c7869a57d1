#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Fuzz seeds for the forms PyTorch 2's dynamo exporter writes (docs/onnx.md, "Exports by PyTorch 2"), built with
Debian's onnx (helper + numpy_helper; no checker: its ONNX 1.12 knows opsets up to 17):
  tests/fuzz/corpus/onnx/torch2_forms_opset20.onnx: as_strided's batch-indexed Gather (a transposed layout), Gelu-20,
    Pad with opset 18's axes, GatherND of constants;
  tests/fuzz/corpus/onnx/sdpa_attention_opset20.onnx: scaled_dot_product_attention in timm's form, kT through
    Reshape / Transpose / Reshape and the scale split over q and kT.
Run from the repository root: /usr/bin/python3 tests/fuzz/make_onnx_torch2_seeds.py
"""
import onnx, numpy as np
from onnx import helper as h, TensorProto as T, numpy_helper as nh
def model(nodes, inits, in_shape, opset, name):
    g = h.make_graph(nodes, name, [h.make_tensor_value_info("x", T.FLOAT, ["batch"] + in_shape)],
                     [h.make_tensor_value_info("y", T.FLOAT, None)], [nh.from_array(v, k) for k, v in inits.items()])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)], producer_name="vitrt-seed")
    m.ir_version = 8
    return m
i64 = lambda *v: np.array(v, dtype=np.int64)
# 1. as_strided's batch-indexed Gather (transposed layout), Gelu-20, Pad-18 axes, GatherND of constants
n = [h.make_node("Relu", ["x"], ["r"]), h.make_node("Reshape", ["r", "flat"], ["data"]),
     h.make_node("Shape", ["x"], ["shape"], start=0, end=1), h.make_node("Squeeze", ["shape"], ["batch"]),
     h.make_node("Range", ["zero", "batch", "one"], ["b"]), h.make_node("Mul", ["b", "stride"], ["base"]),
     h.make_node("Unsqueeze", ["base", "axes"], ["base3"]), h.make_node("Add", ["base3", "rows"], ["i1"]),
     h.make_node("Add", ["i1", "cols"], ["idx"]), h.make_node("Gather", ["data", "idx"], ["g"]),
     h.make_node("Gelu", ["g"], ["ge"], approximate="tanh"),
     h.make_node("Pad", ["ge", "pads", "", "padaxes"], ["p"]),
     h.make_node("GatherND", ["table", "index"], ["picked"]),
     h.make_node("Add", ["p", "picked"], ["y"])]
inits = {"flat": i64(-1), "zero": np.array(0, np.int64), "one": np.array(1, np.int64), "stride": np.array(6, np.int64),
         "axes": i64(1, 2), "rows": np.array([0, 1, 2], np.int64).reshape(1, 3, 1),
         "cols": np.array([0, 3], np.int64).reshape(1, 1, 2), "pads": i64(1, 1), "padaxes": i64(-1),
         "table": np.arange(8, dtype=np.float32).reshape(2, 4), "index": np.array([[1], [0], [1]], np.int64)}
onnx.save(model(n, inits, [2, 3], 20, "torch2_forms"), "tests/fuzz/corpus/onnx/torch2_forms_opset20.onnx")
# 2. scaled_dot_product_attention as the dynamo exporter writes it (timm form), 2 heads of 4, 5 tokens
C, H, D, N = 8, 2, 4, 5
rng = np.random.default_rng(0)
n = [h.make_node("MatMul", ["x", "wqkv"], ["qkv0"]), h.make_node("Add", ["qkv0", "bqkv"], ["qkv"]),
     h.make_node("Reshape", ["qkv", "s5"], ["qkv5"], allowzero=1),
     h.make_node("Transpose", ["qkv5"], ["perm"], perm=[2, 0, 3, 1, 4])]
for i, nm in enumerate("qkv"):
    n += [h.make_node("Slice", ["perm", f"st{i}", f"en{i}", "ax0"], [nm + "s"]),
          h.make_node("Squeeze", [nm + "s", "ax0"], [nm])]
n += [h.make_node("Reshape", ["k", "rows"], ["krows"]), h.make_node("Transpose", ["krows"], ["kswap"], perm=[0, 2, 1]),
      h.make_node("Reshape", ["kswap", "kts"], ["kt"]),
      h.make_node("Mul", ["q", "half"], ["qs"]), h.make_node("Mul", ["kt", "half"], ["ks"]),
      h.make_node("MatMul", ["qs", "ks"], ["sc"]), h.make_node("Softmax", ["sc"], ["pr"], axis=-1),
      h.make_node("MatMul", ["pr", "v"], ["o"]), h.make_node("Transpose", ["o"], ["ot"], perm=[0, 2, 1, 3]),
      h.make_node("Reshape", ["ot", "s3"], ["y"], allowzero=1)]
inits = {"wqkv": rng.standard_normal((C, 3 * C)).astype(np.float32), "bqkv": rng.standard_normal(3 * C).astype(np.float32),
         "s5": i64(-1, N, 3, H, D), "ax0": i64(0), "rows": i64(-1, N, D), "kts": i64(-1, H, D, N),
         "half": np.array(0.5, np.float32), "s3": i64(-1, N, C)}
for i in range(3):
    inits[f"st{i}"], inits[f"en{i}"] = i64(i), i64(i + 1)
onnx.save(model(n, inits, [N, C], 20, "sdpa"), "tests/fuzz/corpus/onnx/sdpa_attention_opset20.onnx")
