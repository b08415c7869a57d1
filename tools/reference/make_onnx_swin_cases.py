#!/usr/bin/python3
"""ONNX Swin fixtures: tiny Swin Transformers built from torchvision's own SwinTransformer class (python3-torchvision,
random init, no download) and exported by torch.onnx.export as users export torchvision.models.swin_t, with PyTorch's
logits in float64 and float32. The export carries what issue 28 names for Swin: Mod on shape values (window
padding), ScatterND chains on constants and Equal/Not/Where (the shifted-window attention mask), Dropout nodes with
training_mode=true and ratio 0, and Slice with steps (patch merging). Run by ctest (fixture `onnx_swin_cases`):

    /usr/bin/python3 tools/reference/make_onnx_swin_cases.py --out build/fixtures/onnx_swin_cases

Writes DIR/<case>.onnx (dynamic batch), DIR/<case>.input.npy [2,3,S,S], DIR/<case>.logits64.npy,
DIR/<case>.logits32.npy and DIR/manifest.json ({"cases": {name: {"opset": N, "image": S}}}).

Cases (patch 4, embed 16, depths [2, 2], heads [2, 4], window 4, 5 classes; about 200 KB each):
  swin_opset17 / swin_opset14: 40x40 images, so the 10x10 and 5x5 token grids are padded to the window (Mod gives
  pads of 2 and 3) and both stages shift their windows (the mask is built);
  swin_opset17_even: 32x32 images, no padding, and the second stage's 4x4 grid fits one window (no shift).
Parameters torchvision initialises to constants (LayerNorm affine, biases, the relative position bias table at
std 0.02) are redrawn larger, so the attention is far from uniform and the mask's -100 entries matter.
"""
import argparse
import json
import os
import warnings

import numpy as np
import torch
from torchvision.models.swin_transformer import SwinTransformer


def tiny_swin():
    m = SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[2, 4], window_size=[4, 4],
                        stochastic_depth_prob=0.0, num_classes=5).eval()
    with torch.no_grad():
        for name, p in m.named_parameters():
            if "relative_position_bias_table" in name:
                p.normal_(0, 1.0)
            elif p.dim() == 1:
                p.copy_(p + torch.empty_like(p).normal_(0, 0.2))
    return m


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    cases = {}
    for name, opset, image in [("swin_opset17", 17, 40), ("swin_opset14", 14, 40), ("swin_opset17_even", 17, 32)]:
        torch.manual_seed(20261126)
        model = tiny_swin()
        x = torch.randn(2, 3, image, image)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, x[:1], os.path.join(args.out, f"{name}.onnx"), opset_version=opset,
                              input_names=["input"], output_names=["logits"],
                              dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})
        with torch.no_grad():
            y32 = model(x).numpy()
            y64 = model.double()(x.double()).numpy()
        np.save(os.path.join(args.out, f"{name}.input.npy"), x.numpy())
        np.save(os.path.join(args.out, f"{name}.logits32.npy"), y32.astype(np.float32))
        np.save(os.path.join(args.out, f"{name}.logits64.npy"), y64)
        cases[name] = {"opset": opset, "image": image}
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump({"cases": cases}, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
