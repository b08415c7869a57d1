#!/usr/bin/python3
"""ONNX squeeze-and-excitation fixtures: tiny SE-ResNet-like nets exported by torch.onnx.export, with PyTorch's
logits in float64 and float32, so the test can check that the exported SE blocks import, plan to SqueezeExcite
(the planner's fuse_squeeze_excite) and compute what PyTorch does. Run by ctest (fixture `onnx_se_cases`):

    /usr/bin/python3 tools/reference/make_onnx_se_cases.py --out build/fixtures/onnx_se_cases

Writes DIR/<case>.onnx (opset 17, dynamic batch), DIR/<case>.input.npy [2,3,12,12], DIR/<case>.logits64.npy,
DIR/<case>.logits32.npy and DIR/manifest.json ({"cases": {name: {"blocks": SE blocks}}}).

Cases (a stem conv, two residual blocks conv-BN-ReLU-SE, a linear head; C=16, Cr=4; about 30 KB each):
  torchvision: torchvision.ops.SqueezeExcitation as in SE-ResNet (ReLU, sigmoid);
  mobilenet_v3: MobileNetV3's (ReLU, hardsigmoid) and EfficientNet's (SiLU, sigmoid) in the two blocks;
  senet_linear: SENet's original pool -> view(B, C) -> Linear -> ReLU -> Linear -> sigmoid -> view(B, C, 1, 1)
                -> expand_as(x), and x.mean((2, 3)) -> ... -> view(B, C, 1, 1) broadcast by the Mul.
"""
import argparse
import json
import os
import warnings

import numpy as np
import torch
import torch.nn as nn


class SqueezeExcitation(nn.Module):
    """torchvision.ops.SqueezeExcitation (torchvision is not a dependency): pool, 1x1 convs, scale."""

    def __init__(self, c, cr, activation=nn.ReLU, scale_activation=nn.Sigmoid):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1, self.fc2 = nn.Conv2d(c, cr, 1), nn.Conv2d(cr, c, 1)
        self.activation, self.scale_activation = activation(), scale_activation()

    def forward(self, x):
        return x * self.scale_activation(self.fc2(self.activation(self.fc1(self.avgpool(x)))))


class LinearSE(nn.Module):
    """SENet's original block: the channel means through Linear layers, viewed back as [B,C,1,1] and broadcast
    with expand_as (as SENet's code writes it), or with x.mean((2, 3)) and implicit broadcasting."""

    def __init__(self, c, cr, expand_as):
        super().__init__()
        self.expand_as = expand_as
        self.avg_pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Sequential(nn.Linear(c, cr), nn.ReLU(inplace=True), nn.Linear(cr, c), nn.Sigmoid())

    def forward(self, x):
        b, c = x.shape[:2]
        if self.expand_as:
            return x * self.fc(self.avg_pool(x).view(b, c)).view(b, c, 1, 1).expand_as(x)
        return x * self.fc(x.mean((2, 3))).view(b, c, 1, 1)


class Block(nn.Module):
    def __init__(self, c, se):
        super().__init__()
        self.conv, self.bn, self.se = nn.Conv2d(c, c, 3, padding=1), nn.BatchNorm2d(c), se

    def forward(self, x):
        return torch.relu(x + self.se(torch.relu(self.bn(self.conv(x)))))


class Net(nn.Module):
    def __init__(self, c, blocks, classes=5):
        super().__init__()
        self.stem = nn.Conv2d(3, c, 3, padding=1)
        self.blocks = nn.Sequential(*[Block(c, se) for se in blocks])
        self.head = nn.Linear(c, classes)

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)).mean((2, 3)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(20261128)
    c, cr = 16, 4
    nets = {
        "torchvision": [SqueezeExcitation(c, cr), SqueezeExcitation(c, cr)],
        "mobilenet_v3": [SqueezeExcitation(c, cr, nn.ReLU, nn.Hardsigmoid),
                         SqueezeExcitation(c, cr, nn.SiLU, nn.Sigmoid)],
        "senet_linear": [LinearSE(c, cr, True), LinearSE(c, cr, False)],
    }
    cases = {}
    for name, blocks in nets.items():
        model = Net(c, blocks).eval()
        with torch.no_grad():  # BatchNorm statistics away from the identity, so folding it is exercised
            for m in model.modules():
                if isinstance(m, nn.BatchNorm2d):
                    m.running_mean.uniform_(-0.2, 0.2)
                    m.running_var.uniform_(0.5, 1.5)
        x = torch.randn(2, 3, 12, 12)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, x, os.path.join(args.out, f"{name}.onnx"), opset_version=17,
                              input_names=["input"], output_names=["logits"],
                              dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}}, do_constant_folding=True)
        with torch.no_grad():
            y32 = model(x).numpy()
            y64 = model.double()(x.double()).numpy()
        np.save(os.path.join(args.out, f"{name}.input.npy"), x.numpy())
        np.save(os.path.join(args.out, f"{name}.logits32.npy"), y32.astype(np.float32))
        np.save(os.path.join(args.out, f"{name}.logits64.npy"), y64)
        cases[name] = {"blocks": len(blocks)}
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump({"cases": cases}, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
