#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Hand-made hostile ONNX probes: one small model per (op, attribute or constant, extreme value), for the onnx
# fuzz target's binary, which runs each file once (under ASan + UBSan):
#   /usr/bin/python3 tests/fuzz/make_onnx_attr_probes.py OUT_DIR
#   for f in OUT_DIR/*.onnx; do VITRT_FUZZ_VERBOSE=1 build-fuzz/bin/fuzz_onnx "$f" || echo "FAIL $f"; done
# Values: 0, -1, ±2^31, 2^62, INT64_MIN/MAX, and NaN, ±Inf, 3e38, 1e-45 for float attributes and constants.
# On 2026-11-27 its 576 files found regressions/onnx/reshape_to_rank0.onnx and the BatchNormalization /
# LayerNormalization epsilon check (docs/onnx.md). Not a test: a probe to rerun after changing the importer.
import sys

import onnx, numpy as np, os, itertools
from onnx import helper as h, TensorProto as T, numpy_helper as nh
OUT=sys.argv[1]
os.makedirs(OUT, exist_ok=True)
BIG=2**62; MAXI=2**63-1; MINI=-2**63
n=0
def model(name, nodes, inits=(), in_shape=(1,3,8,8), opset=17, out_shape=None, extra_inputs=()):
    global n
    g=h.make_graph(nodes, name, [h.make_tensor_value_info('x',T.FLOAT,list(in_shape))]+list(extra_inputs),
                   [h.make_tensor_value_info('y',T.FLOAT,out_shape)], initializer=list(inits))
    m=h.make_model(g, opset_imports=[h.make_opsetid('',opset)], producer_name='fuzz5')
    m.ir_version=8
    open(os.path.join(OUT,name+'.onnx'),'wb').write(m.SerializeToString()); n+=1
def i64(name, vals): return nh.from_array(np.array(vals,dtype=np.int64), name)
def f32(name, vals, shape=None):
    a=np.array(vals,dtype=np.float32)
    if shape is not None: a=a.reshape(shape)
    return nh.from_array(a, name)
N=h.make_node
for v in [0,-1,MINI,MAXI,BIG,2**31,-2**31]:
    s=str(v).replace('-','m')
    model(f'softmax_axis_{s}', [N('Softmax',['x'],['y'],axis=v)])
    model(f'logsoftmax_axis_{s}', [N('LogSoftmax',['x'],['y'],axis=v)],opset=11)
    model(f'flatten_axis_{s}', [N('Flatten',['x'],['y'],axis=v)])
    model(f'concat_axis_{s}', [N('Concat',['x','x'],['y'],axis=v)])
    model(f'layernorm_axis_{s}', [N('LayerNormalization',['x','g','b'],['y'],axis=v)],[f32('g',np.ones(8)),f32('b',np.zeros(8))])
    model(f'argmax_axis_{s}', [N('ArgMax',['x'],['y'],axis=v)])
    model(f'cumsum_axis_{s}', [N('CumSum',['x','a'],['y'])],[i64('a',v)])
    model(f'trilu_k_{s}', [N('Trilu',['x','k'],['y'])],[i64('k',v)])
    model(f'topk_k_{s}', [N('TopK',['x','k'],['y','i'],axis=-1)],[i64('k',[v])])
    model(f'topk_axis_{s}', [N('TopK',['x','k'],['y','i'],axis=v)],[i64('k',[1])])
    model(f'gather_idx_{s}', [N('Gather',['x','i'],['y'],axis=1)],[i64('i',[v])])
    model(f'gather_axis_{s}', [N('Gather',['x','i'],['y'],axis=v)],[i64('i',[0])])
    model(f'gatherelements_idx_{s}', [N('GatherElements',['c','i'],['y'],axis=0)],[f32('c',[1,2,3]),i64('i',[v])],in_shape=(1,3))
    model(f'depthtospace_{s}', [N('DepthToSpace',['x'],['y'],blocksize=v)])
    model(f'spacetodepth_{s}', [N('SpaceToDepth',['x'],['y'],blocksize=v)])
    model(f'squeeze_{s}', [N('Squeeze',['x','a'],['y'])],[i64('a',[v])])
    model(f'unsqueeze_{s}', [N('Unsqueeze',['x','a'],['y'])],[i64('a',[v])])
    model(f'transpose_perm_{s}', [N('Transpose',['x'],['y'],perm=[0,1,3,v])])
    model(f'reducemean_axes_{s}', [N('ReduceMean',['x'],['y'],axes=[v])])
    model(f'reducesum_axes_{s}', [N('ReduceSum',['x','a'],['y'])],[i64('a',[v])])
    model(f'slice_start_{s}', [N('Slice',['x','s','e','a','p'],['y'])],[i64('s',[v]),i64('e',[MAXI]),i64('a',[3]),i64('p',[1])])
    model(f'slice_step_{s}', [N('Slice',['x','s','e','a','p'],['y'])],[i64('s',[0]),i64('e',[MAXI]),i64('a',[3]),i64('p',[v])])
    model(f'slice_stepneg_{s}', [N('Slice',['x','s','e','a','p'],['y'])],[i64('s',[v]),i64('e',[MINI]),i64('a',[3]),i64('p',[-1])])
    model(f'slice_axis_{s}', [N('Slice',['x','s','e','a'],['y'])],[i64('s',[0]),i64('e',[2]),i64('a',[v])])
    model(f'split_{s}', [N('Split',['x','s'],['y','z'],axis=3)],[i64('s',[v,8-v if abs(v)<2**62 else v])])
    model(f'split_axis_{s}', [N('Split',['x'],['y','z'],axis=v)])
    model(f'split18_num_{s}', [N('Split',['x'],['y'],axis=3,num_outputs=v)],opset=18)
    model(f'tile_{s}', [N('Tile',['x','r'],['y'])],[i64('r',[1,1,1,v])])
    model(f'tile2_{s}', [N('Tile',['x','r'],['y'])],[i64('r',[1,v,v,v])])
    model(f'pad_{s}', [N('Pad',['x','p'],['y'])],[i64('p',[0,0,0,v,0,0,0,v])])
    model(f'pad_reflect_{s}', [N('Pad',['x','p'],['y'],mode='reflect')],[i64('p',[0,0,v,0,0,0,0,0])])
    model(f'resize_sizes_{s}', [N('Resize',['x','','','s'],['y'],mode='linear')],[i64('s',[1,3,8,v])])
    model(f'resize_sizes2_{s}', [N('Resize',['x','','','s'],['y'],mode='cubic')],[i64('s',[1,3,v,v])])
    model(f'expand_{s}', [N('Expand',['x','s'],['y'])],[i64('s',[1,3,8,v])])
    model(f'reshape_{s}', [N('Reshape',['x','s'],['y'])],[i64('s',[1,3,v,-1])])
    model(f'maxpool_k_{s}', [N('MaxPool',['x'],['y'],kernel_shape=[v,2])])
    model(f'maxpool_stride_{s}', [N('MaxPool',['x'],['y'],kernel_shape=[2,2],strides=[v,1])])
    model(f'maxpool_dil_{s}', [N('MaxPool',['x'],['y'],kernel_shape=[2,2],dilations=[v,1])])
    model(f'maxpool_pads_{s}', [N('MaxPool',['x'],['y'],kernel_shape=[2,2],pads=[v,0,v,0])])
    model(f'maxpool_ceil_stride_{s}', [N('MaxPool',['x'],['y'],kernel_shape=[2,2],strides=[v,v],ceil_mode=1)])
    model(f'avgpool_pads_{s}', [N('AveragePool',['x'],['y'],kernel_shape=[3,3],pads=[1,1,v,v],count_include_pad=1)])
    model(f'avgpool1d_{s}', [N('AveragePool',['x'],['y'],kernel_shape=[v],strides=[v])],in_shape=(1,3,8))
    model(f'conv_group_{s}', [N('Conv',['x','w'],['y'],group=v)],[f32('w',np.ones((3,1,1,1)),None)])
    model(f'conv_pads_{s}', [N('Conv',['x','w'],['y'],pads=[v,v,v,v])],[f32('w',np.ones((4,3,1,1)))])
    model(f'conv_stride_{s}', [N('Conv',['x','w'],['y'],strides=[v,v])],[f32('w',np.ones((4,3,1,1)))])
    model(f'conv_dil_{s}', [N('Conv',['x','w'],['y'],dilations=[v,v])],[f32('w',np.ones((4,3,3,3)))])
    model(f'convT_group_{s}', [N('ConvTranspose',['x','w'],['y'],group=v)],[f32('w',np.ones((3,1,2,2)))])
    model(f'convT_outpad_{s}', [N('ConvTranspose',['x','w'],['y'],strides=[2,2],output_padding=[v,0])],[f32('w',np.ones((3,2,2,2)))])
    model(f'convT_outshape_{s}', [N('ConvTranspose',['x','w'],['y'],strides=[2,2],output_shape=[v,v])],[f32('w',np.ones((3,2,2,2)))])
    model(f'convT_pads_{s}', [N('ConvTranspose',['x','w'],['y'],pads=[v,0,0,v])],[f32('w',np.ones((3,2,2,2)))])
    model(f'convT_dil_{s}', [N('ConvTranspose',['x','w'],['y'],dilations=[v,1])],[f32('w',np.ones((3,2,2,2)))])
    model(f'range_fold_{s}', [N('Range',['a','b','c'],['r']),N('Reshape',['x','r'],['y'])],[i64('a',0),i64('b',v),i64('c',1)])
    model(f'range_delta_{s}', [N('Range',['a','b','c'],['r']),N('Reshape',['x','r'],['y'])],[i64('a',MINI),i64('b',MAXI),i64('c',v)])
    model(f'cos_fold_{s}', [N('ConstantOfShape',['s'],['c'],value=h.make_tensor('v',T.FLOAT,[1],[1.0])),N('Add',['x','c'],['y'])],[i64('s',[1,1,1,v])])
    model(f'eyelike_k_{s}', [N('ConstantOfShape',['s'],['c'],value=h.make_tensor('v',T.FLOAT,[1],[1.0])),N('EyeLike',['c'],['e'],k=v),N('Add',['x','e'],['y'])],[i64('s',[8,8])])
    model(f'intdiv_{s}', [N('Div',['a','b'],['d']),N('Reshape',['x','d'],['y'])],[i64('a',[MINI,1,1,-1]),i64('b',[v,1,1,1])])
    model(f'intmod_{s}', [N('Mod',['a','b'],['d']),N('Reshape',['x','d'],['y'])],[i64('a',[MINI,1,1,-1]),i64('b',[v,1,1,1])])
    model(f'intmod_fmod_{s}', [N('Mod',['a','b'],['d'],fmod=1),N('Reshape',['x','d'],['y'])],[i64('a',[MINI,1,1,-1]),i64('b',[v,1,1,1])])
    model(f'intpow_{s}', [N('Pow',['a','b'],['d']),N('Reshape',['x','d'],['y'])],[i64('a',[3,1,1,-1]),i64('b',[v,1,1,1])])
    model(f'intmul_{s}', [N('Mul',['a','b'],['d']),N('Reshape',['x','d'],['y'])],[i64('a',[v,1,1,-1]),i64('b',[v,1,1,1])])
    model(f'intabs_{s}', [N('Abs',['a'],['d']),N('Neg',['d'],['e']),N('Reshape',['x','e'],['y'])],[i64('a',[v,1,1,1])])
    model(f'scatternd_idx_{s}', [N('ScatterND',['x','i','u'],['y'])],[i64('i',[[0,0,0,v]]),f32('u',[1.0])])
    model(f'scatternd_fold_{s}', [N('ScatterND',['c','i','u'],['d']),N('Add',['x','d'],['y'])],[f32('c',np.zeros(8)),i64('i',[[v]]),f32('u',[1.0])])
    model(f'gather_shape_{s}', [N('Shape',['x'],['sh']),N('Gather',['sh','i'],['g']),N('Unsqueeze',['g','z'],['u']),N('Reshape',['x','u'],['y'])],[i64('i',v),i64('z',[0])])
    model(f'shape_start_{s}', [N('Shape',['x'],['sh'],start=v,end=v),N('Reshape',['x','sh'],['y'])],opset=15)
    model(f'clip_{s}', [N('Clip',['x','a','b'],['y'])],[f32('a',float(v)),f32('b',float(-v))])
    model(f'einsum_{s}', [N('Einsum',['x','x'],['y'],equation='bchw,bchk->bcwk' if v>0 else '...ii,...jj->...')])
    model(f'castint_{s}', [N('Cast',['c'],['d'],to=T.INT64),N('Reshape',['x','d'],['y'])],[f32('c',[1,3,8,float(v)*1e10])])
    model(f'instnorm_{s}', [N('InstanceNormalization',['x','g','b'],['y'],epsilon=float(v))],[f32('g',np.ones(3)),f32('b',np.zeros(3))])
    model(f'leaky_{s}', [N('LeakyRelu',['x'],['y'],alpha=float(v))])
    model(f'resize_scales_{s}', [N('Resize',['x','','sc'],['y'],mode='nearest')],[f32('sc',[1,1,1,float(v)])])
    model(f'resize_cubic_a_{s}', [N('Resize',['x','','sc'],['y'],mode='cubic',cubic_coeff_a=float(v))],[f32('sc',[1,1,2,2])])
    model(f'input_dim_{s}', [N('Relu',['x'],['y'])],in_shape=(1,3,8,v if v>0 else 8))
# special floats
for nm,fv in [('nan',float('nan')),('inf',float('inf')),('ninf',float('-inf')),('huge',3e38),('tiny',1e-45)]:
    model(f'resize_scales_{nm}', [N('Resize',['x','','sc'],['y'],mode='linear')],[f32('sc',[1,1,fv,fv])])
    model(f'castint_{nm}', [N('Cast',['c'],['d'],to=T.INT64),N('Reshape',['x','d'],['y'])],[f32('c',[1,3,8,fv])])
    model(f'castint32_{nm}', [N('Cast',['c'],['d'],to=T.INT32),N('Cast',['d'],['e'],to=T.INT64),N('Reshape',['x','e'],['y'])],[f32('c',[1,3,8,fv])])
    model(f'pow_exp_{nm}', [N('Pow',['x','e'],['y'])],[f32('e',fv)])
    model(f'floor_fold_{nm}', [N('Floor',['c'],['d']),N('Cast',['d'],['e'],to=T.INT64),N('Reshape',['x','e'],['y'])],[f32('c',[1,3,8,fv])])
    model(f'range_f_{nm}', [N('Range',['a','b','c'],['r']),N('Add',['x','r'],['y'])],[f32('a',0.0),f32('b',fv),f32('c',1e-30)])
    model(f'range_f2_{nm}', [N('Range',['a','b','c'],['r']),N('Add',['x','r'],['y'])],[f32('a',0.0),f32('b',8.0),f32('c',fv)])
    model(f'dropout_ratio_{nm}', [N('Dropout',['x','r','t'],['y'])],[f32('r',fv),nh.from_array(np.array(True),'t')])
    model(f'constant_pad_{nm}', [N('Pad',['x','p','c'],['y'])],[i64('p',[0,0,1,1,0,0,1,1]),f32('c',fv)])
    model(f'hardsig_{nm}', [N('HardSigmoid',['x'],['y'],alpha=fv,beta=fv)])
    model(f'bn_eps_{nm}', [N('BatchNormalization',['x','g','b','m','v'],['y'],epsilon=fv)],[f32('g',np.ones(3)),f32('b',np.zeros(3)),f32('m',np.zeros(3)),f32('v',np.ones(3))])
    model(f'ln_eps_{nm}', [N('LayerNormalization',['x','g','b'],['y'],axis=-1,epsilon=fv)],[f32('g',np.ones(8)),f32('b',np.zeros(8))])
    model(f'gemm_alpha_{nm}', [N('Flatten',['x'],['f']),N('Gemm',['f','w'],['y'],alpha=fv,beta=fv)],[f32('w',np.ones((192,4)))])
print(n)
