#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Copyright the vitrt authors.
"""ONNX fixtures at opsets 7 to 10 (docs/onnx.md, "Opsets 7 to 10"): one small net exported by torch.onnx.export
at opsets 7, 8, 9, 10 and 11, with PyTorch's logits in float64, so the test can check that the old exports import
(their Clip-6, Pad-2, Slice-1 and TopK-1 rewritten in the opset-11 form), compute what PyTorch does, and give the
opset-11 export's bits; the same net at opset 7 without constant folding (and in PRESERVE mode, which keeps torch from
folding the BatchNorm into the Conv), so that its BatchNormalization-7 stays a node; and an upsampling net at 9 and 10 whose Upsample / Resize-10 must be refused naming the node.
Run by ctest (fixture `onnx_old_opset_cases`):

    /usr/bin/python3 tools/reference/make_onnx_old_opset_cases.py --out build/fixtures/onnx_old_opset_cases

Writes DIR/net_opset{7,8,9,10,11}.onnx and DIR/net_opset7_bn.onnx (dynamic batch), DIR/net.input.npy [2,3,16,16],
DIR/net.logits64.npy and DIR/upsample_opset{9,10}.onnx.

The net: Conv + BatchNorm + ReLU6 (Clip), zero padding and reflection padding (Pad), a crop x[:, :, 1:, :-1]
(Slice), MaxPool, AveragePool, Hardsigmoid gate, channel concat, the sum of each row's 3 largest features (TopK),
Flatten and a Linear (Gemm), 5 classes.
"""
import argparse
import os
import warnings

import numpy as np
import torch
from torch import nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv, self.bn = nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3)
        self.fc = nn.Linear(8 * 4 * 4 + 1, 5)

    def forward(self, x):
        y = F.relu6(self.bn(self.conv(F.pad(x, (1, 1, 1, 1)))))      # [B,8,16,16]
        y = self.conv2(F.pad(y, (1, 1, 1, 1), mode="reflect"))[:, :, 1:, :-1]  # [B,8,15,15]
        y = F.max_pool2d(y, 2) * F.hardsigmoid(y.mean((2, 3), keepdim=True))   # [B,8,7,7]
        y = torch.cat([F.avg_pool2d(y, 2, 1)[:, :4], y[:, 4:, :6, :6]], 1)     # [B,8,6,6]
        y = F.max_pool2d(y, 2, 1)[:, :, :4, :4]                                  # [B,8,4,4]
        flat = y.flatten(1)
        top = flat.topk(3, dim=1).values.sum(1, keepdim=True)
        return self.fc(torch.cat([flat, top], 1))


class Up(nn.Module):
    def forward(self, x):
        return F.interpolate(x, scale_factor=2, mode="nearest").flatten(1)[:, :5]


def export(model, x, path, opset, fold=True):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, x, path, opset_version=opset, input_names=["input"], output_names=["logits"],
                          dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}}, do_constant_folding=fold,
                          training=torch.onnx.TrainingMode.EVAL if fold else torch.onnx.TrainingMode.PRESERVE)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(20261129)
    net = Net().eval()
    with torch.no_grad():  # live BatchNorm statistics, so that it is not an identity
        net.bn.running_mean.normal_(0, 0.3)
        net.bn.running_var.uniform_(0.5, 2.0)
        net.bn.weight.normal_(1, 0.3)
        net.bn.bias.normal_(0, 0.3)
    x = torch.randn(2, 3, 16, 16) * 2
    for opset in (7, 8, 9, 10, 11):
        export(net, x, os.path.join(args.out, f"net_opset{opset}.onnx"), opset)
    export(net, x, os.path.join(args.out, "net_opset7_bn.onnx"), 7, fold=False)
    for opset in (9, 10):
        export(Up().eval(), x, os.path.join(args.out, f"upsample_opset{opset}.onnx"), opset)
    np.save(os.path.join(args.out, "net.input.npy"), x.numpy())
    with torch.no_grad():
        np.save(os.path.join(args.out, "net.logits64.npy"), net.double()(x.double()).numpy())


if __name__ == "__main__":
    main()
