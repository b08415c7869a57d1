#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Writes two seeds of the `onnx` fuzz target (corpus/onnx/): activations_opset24.onnx, a small model through the
# ops and lowerings added last (PRelu, Selu, Celu, LRN, GroupNormalization-21, Shrink, ThresholdedRelu, Softsign,
# Swish, Atan, RMSNormalization), and bn_spatial_opset7.onnx, an opset-7 model with BatchNormalization-7's
# spatial attribute and a Clip-6, so that mutations of their attributes and constants start from something
# vitrt-convert accepts. Debian's onnx 1.12 knows no opset 24, so no checker runs on the first.
#   /usr/bin/python3 tests/fuzz/make_onnx_activation_seeds.py OUT_DIR
import os
import sys

import numpy as np
from onnx import helper as h, TensorProto as T, numpy_helper as nh

rng = np.random.default_rng(24)


def f(name, shape, scale=0.3):
    return nh.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


N = h.make_node
out = sys.argv[1]
inits = [f('conv.w', [6, 3, 3, 3]), f('prelu.slope', [6, 1, 1]), f('gn.scale', [6]), f('gn.bias', [6]),
         f('rms.scale', [4]), f('fc.w', [5, 24]), f('fc.b', [5]), nh.from_array(np.array([3], np.int64), 'rm.axes')]
nodes = [
    N('Conv', ['x', 'conv.w'], ['c'], pads=[1, 1, 1, 1]),                      # [B,6,4,4]
    N('PRelu', ['c', 'prelu.slope'], ['p']),
    N('Selu', ['p'], ['se'], alpha=1.5, gamma=1.25),
    N('Celu', ['se'], ['ce'], alpha=0.75),
    N('LRN', ['ce'], ['lrn'], size=3, alpha=2e-4, beta=0.5, bias=2.0),
    N('GroupNormalization', ['lrn', 'gn.scale', 'gn.bias'], ['gn'], num_groups=3, epsilon=1e-4),
    N('Shrink', ['gn'], ['sh'], lambd=0.25, bias=0.125),
    N('ThresholdedRelu', ['sh'], ['tr'], alpha=-0.5),
    N('Softsign', ['tr'], ['ss']),
    N('Swish', ['ss'], ['sw'], alpha=0.5),
    N('Atan', ['sw'], ['at']),
    N('RMSNormalization', ['at', 'rms.scale'], ['rms'], axis=-1, epsilon=1e-5),
    N('ReduceMean', ['rms', 'rm.axes'], ['rm'], keepdims=0),                  # [B,6,4]
    N('Flatten', ['rm'], ['flat']),                                            # [B,24]
    N('Gemm', ['flat', 'fc.w', 'fc.b'], ['logits'], transB=1),
]
x = h.make_tensor_value_info('x', T.FLOAT, ['batch', 3, 4, 4])
y = h.make_tensor_value_info('logits', T.FLOAT, ['batch', 5])
m = h.make_model(h.make_graph(nodes, 'activations', [x], [y], inits),
                 opset_imports=[h.make_opsetid('', 24)], ir_version=10, producer_name='vitrt-test')
open(os.path.join(out, 'activations_opset24.onnx'), 'wb').write(m.SerializeToString())

inits = [f('conv.w', [4, 3, 3, 3]), f('bn.s', [4], 1.0), f('bn.b', [4]), f('bn.m', [4]),
         nh.from_array(rng.uniform(0.5, 2.0, [4]).astype(np.float32), 'bn.v'), f('fc.w', [3, 64]), f('fc.b', [3])]
nodes = [
    N('Conv', ['x', 'conv.w'], ['c'], pads=[1, 1, 1, 1]),                      # [B,4,4,4]
    N('BatchNormalization', ['c', 'bn.s', 'bn.b', 'bn.m', 'bn.v'], ['bn'], epsilon=1e-5, spatial=1),
    N('Clip', ['bn'], ['clip'], min=0.0, max=6.0),
    N('Flatten', ['clip'], ['flat']),
    N('Gemm', ['flat', 'fc.w', 'fc.b'], ['logits'], transB=1),
]
y = h.make_tensor_value_info('logits', T.FLOAT, ['batch', 3])
m = h.make_model(h.make_graph(nodes, 'bn7', [x], [y], inits),
                 opset_imports=[h.make_opsetid('', 7)], ir_version=3, producer_name='vitrt-test')
open(os.path.join(out, 'bn_spatial_opset7.onnx'), 'wb').write(m.SerializeToString())
