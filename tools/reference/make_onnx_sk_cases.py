#!/usr/bin/python3
"""ONNX squeeze-and-excitation + Selective Kernel fixtures: tiny CNNs with one SK block and one SE block in each
of the official codes' forms (tools/reference/vitrt_reference/sk.py), exported by torch.onnx.export, with
PyTorch's logits in float64 and float32, so the test can check that the blocks import, plan to SelectiveKernel
and SqueezeExcite (the planner's fuse_selective_kernel and fuse_squeeze_excite) and compute what PyTorch does.
Run by ctest (fixture `onnx_sk_cases`, a few seconds):

    /usr/bin/python3 tools/reference/make_onnx_sk_cases.py --out build/fixtures/onnx_sk_cases

Writes DIR/<case>.onnx (opset 17, dynamic batch), DIR/<case>.input.npy [2,3,16,16], DIR/<case>.logits64.npy,
DIR/<case>.logits32.npy and DIR/manifest.json ({"cases": {name: {"sk": SK blocks, "se": SE blocks}}}).

Cases (stem conv-BN-ReLU to C = 32, SK, SE, a residual ReLU, mean, a linear head):
  survey: the attention survey's SKModule (M = 2, G = 32, r = 16, L = 32) and SEAttention (Linear, no bias, r = 16);
  xmu:    xmu's SKAttention (kernels 1, 3, 5, 7 with bias, L = 8; z without BN or activation) and SEAttention;
  timm:   timm's SelectiveKernel (split input, 3x3 with dilation 1 and 2, SelectiveKernelAttn) and SEModule
          (fc1 / fc2 1x1 convs with bias, rd = make_divisible(32/16, 8) = 8).
"""
import argparse
import json
import os
import sys
import warnings

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vitrt_reference.sk import SKModule, SKAttention, SelectiveKernel, SEAttention, SEModule  # noqa: E402


class Net(nn.Module):
    def __init__(self, c, sk, se, classes=5):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU())
        self.sk, self.se = sk, se
        self.head = nn.Linear(c, classes)

    def forward(self, x):
        x = self.stem(x)
        x = torch.relu(x + self.se(self.sk(x)))
        return self.head(x.mean((2, 3)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(20261154)
    c = 32
    nets = {
        "survey": (SKModule(c, M=2, G=32, r=16, L=32), SEAttention(c, 16)),
        "xmu": (SKAttention(c, kernels=[1, 3, 5, 7], reduction=16, L=8), SEAttention(c, 16)),
        "timm": (SelectiveKernel(c, c), SEModule(c)),
    }
    cases = {}
    for name, (sk, se) in nets.items():
        model = Net(c, sk, se).eval()
        with torch.no_grad():  # BatchNorm statistics away from the identity, so folding it is exercised
            for m in model.modules():
                if isinstance(m, nn.BatchNorm2d):
                    m.running_mean.uniform_(-0.2, 0.2)
                    m.running_var.uniform_(0.5, 1.5)
                    m.weight.uniform_(0.5, 1.5)
                    m.bias.uniform_(-0.2, 0.2)
        x = torch.randn(2, 3, 16, 16)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, x, os.path.join(args.out, f"{name}.onnx"), opset_version=17,
                              input_names=["input"], output_names=["logits"],
                              dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}}, do_constant_folding=True)
        with torch.no_grad():
            y32 = model(x).numpy()
            y64 = model.double()(x.double()).numpy()
        top2 = np.sort(y64, axis=1)[:, -2:]
        assert (top2[:, 1] - top2[:, 0]).min() > 1e-3, f"{name}: top-1 and top-2 logits too close"
        np.save(os.path.join(args.out, f"{name}.input.npy"), x.numpy())
        np.save(os.path.join(args.out, f"{name}.logits32.npy"), y32.astype(np.float32))
        np.save(os.path.join(args.out, f"{name}.logits64.npy"), y64)
        cases[name] = {"sk": 1, "se": 1}
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump({"cases": cases}, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
