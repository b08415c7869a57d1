#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Writes the `onnx` fuzz target's seed corpus/onnx/index_ops_opset17.onnx: a small model that imports, using the ops
# the importer added last (Conv with auto_pad SAME, DepthToSpace/SpaceToDepth, Resize, Trilu, CumSum,
# ConvTranspose, TopK, GatherElements) and the folded ones (ConstantOfShape -> EyeLike, ScatterND), so that
# mutations of their attributes and constants start from something vitrt-convert accepts.
#   /usr/bin/python3 tests/fuzz/make_onnx_index_seed.py OUT.onnx
import sys

import onnx, numpy as np
from onnx import helper as h, TensorProto as T, numpy_helper as nh
rng = np.random.default_rng(5)
def f(name, shape): return nh.from_array(rng.standard_normal(shape).astype(np.float32) * 0.3, name)
def i64(name, v): return nh.from_array(np.array(v, np.int64), name)
inits = [f('conv.w', [8, 3, 3, 3]), f('ct.w', [2, 2, 2, 2]), f('fc.w', [4, 96]), f('fc.b', [4]),
         i64('trilu.k', 1), i64('cumsum.axis', 3), i64('topk.k', [3]),
         nh.from_array(np.array([1, 1, 0.5, 0.5], np.float32), 'resize.scales'),
         f('ge.data', [1, 2, 8, 3]), i64('ge.idx', rng.integers(-8, 8, [1, 2, 4, 3])),
         i64('eye.shape', [4, 3]),
         f('sc.data', [4, 3]), i64('sc.idx', [[2], [0]]), f('sc.upd', [2, 3]),
         i64('sl.s', [0]), i64('sl.e', [2]), i64('sl.a', [1])]
N = h.make_node
nodes = [
  N('Conv', ['x', 'conv.w'], ['c'], auto_pad='SAME_UPPER'),                            # [B,8,8,8]
  N('DepthToSpace', ['c'], ['d2s'], blocksize=2, mode='CRD'),                          # [B,2,16,16]
  N('SpaceToDepth', ['d2s'], ['s2d'], blocksize=2),                                    # [B,8,8,8]
  N('Resize', ['s2d', '', 'resize.scales'], ['rs'], mode='linear'),                    # [B,8,4,4]
  N('Trilu', ['rs', 'trilu.k'], ['tri'], upper=1),
  N('CumSum', ['tri', 'cumsum.axis'], ['cs']),
  N('Slice', ['cs', 'sl.s', 'sl.e', 'sl.a'], ['cs2']),                                 # [B,2,4,4]
  N('ConvTranspose', ['cs2', 'ct.w'], ['ct'], strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1]),
  N('TopK', ['cs2', 'topk.k'], ['tk', 'tk_i'], axis=-1),                               # [B,2,4,3]
  N('GatherElements', ['ge.data', 'ge.idx'], ['ge'], axis=2),                          # [1,2,4,3]
  N('Add', ['tk', 'ge'], ['a1']),
  N('ConstantOfShape', ['eye.shape'], ['zeros']),
  N('EyeLike', ['zeros'], ['eye'], k=1),                                               # [4,3]
  N('ScatterND', ['sc.data', 'sc.idx', 'sc.upd'], ['sc']),                             # [4,3]
  N('Add', ['eye', 'sc'], ['es']),
  N('Mul', ['a1', 'es'], ['m1']),                                                      # [B,2,4,3]
  N('ReduceMean', ['ct'], ['ctm'], axes=[2, 3], keepdims=1),                           # [B,2,1,1]
  N('Add', ['m1', 'ctm'], ['m2']),
  N('Flatten', ['m2'], ['flat']),                                                      # [B,24]
  N('Concat', ['flat', 'flat', 'flat', 'flat'], ['cat'], axis=1),                      # [B,96]
  N('Gemm', ['cat', 'fc.w', 'fc.b'], ['logits'], transB=1),
]
x = h.make_tensor_value_info('x', T.FLOAT, ['batch', 3, 8, 8])
y = h.make_tensor_value_info('logits', T.FLOAT, ['batch', 4])
g = h.make_graph(nodes, 'index_ops', [x], [y], inits)
m = h.make_model(g, opset_imports=[h.make_opsetid('', 17)], ir_version=8, producer_name='vitrt-test')
onnx.checker.check_model(m)
import onnx.shape_inference
onnx.shape_inference.infer_shapes(m, strict_mode=True)
open(sys.argv[1], 'wb').write(m.SerializeToString())
