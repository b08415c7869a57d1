#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Copyright the vitrt authors.
"""ONNX fixtures of the activations torch.onnx.export writes as their own ONNX ops (docs/onnx.md, the lowering
table): one small CNN with nn.PReLU (a slope per channel, [C,1,1] in the export, and one shared slope, [1]),
nn.SELU, nn.CELU, and torch.atan, torch.tan, torch.asin and torch.acos, beside the ones torch writes as plain ops
(Softsign, Hardshrink, Softshrink, Tanhshrink: Abs/Div, Where chains, Tanh/Sub), exported at opsets 12 (the first
with Celu) and 17, with PyTorch's logits in float64. Run by ctest (fixture `onnx_activation_cases`):

    /usr/bin/python3 tools/reference/make_onnx_activation_cases.py --out build/fixtures/onnx_activation_cases

Writes DIR/act_opset{12,17}.onnx (dynamic batch), DIR/act_opset{12,17}.input.npy [2,3,12,12],
DIR/act_opset{12,17}.logits64.npy and DIR/manifest.json (per case: the IR PRelu ops and Unary kinds the import
must hold). Debian's torch 1.13 exports no Sinh, Cosh, Asinh, Acosh or Atanh at any opset; ONNX's own conformance
cases cover those (tests/onnx/conformance_test.cpp).
"""
import argparse
import json
import os
import warnings

import numpy as np
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.prelu_c = nn.Conv2d(3, 8, 3), nn.PReLU(8)
        self.conv2, self.prelu_1 = nn.Conv2d(8, 8, 3, padding=1), nn.PReLU()
        self.selu, self.celu = nn.SELU(), nn.CELU(1.5)
        self.hard, self.soft, self.tanhshrink = nn.Hardshrink(0.3), nn.Softshrink(0.2), nn.Tanhshrink()
        self.softsign = nn.Softsign()
        self.fc = nn.Linear(8, 6)

    def forward(self, x):
        y = self.selu(self.prelu_c(self.conv1(x)))           # [B,8,10,10]
        y = self.celu(self.prelu_1(self.conv2(y)))
        y = self.tanhshrink(self.soft(self.hard(y))) + y
        s = self.softsign(y)                                  # in (-1, 1): the domain of asin and acos
        y = y + torch.atan(3 * y) + torch.tan(s) + torch.asin(0.9 * s) - torch.acos(0.5 * s)
        return self.fc(y.mean((2, 3)))


def export(model, x, path, opset):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, x, path, opset_version=opset, input_names=["input"], output_names=["logits"],
                          dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}}, do_constant_folding=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(20261129)
    net = Net().eval()
    with torch.no_grad():  # slopes of both signs and sizes, so that every channel's negative side differs
        net.prelu_c.weight.uniform_(-0.6, 0.6)
        net.prelu_1.weight.fill_(-0.35)
    x = torch.randn(2, 3, 12, 12) * 1.5
    with torch.no_grad():
        logits64 = net.double()(x.double()).numpy()
    net.float()
    cases = {}
    for opset in (12, 17):
        name = f"act_opset{opset}"
        export(net, x, os.path.join(args.out, f"{name}.onnx"), opset)
        np.save(os.path.join(args.out, f"{name}.input.npy"), x.numpy())
        np.save(os.path.join(args.out, f"{name}.logits64.npy"), logits64)
        cases[name] = dict(prelu=2, unary=["Selu", "Celu", "Atan", "Tan", "Asin", "Acos"])
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(dict(cases=cases), f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
