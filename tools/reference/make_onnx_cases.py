#!/usr/bin/python3
"""ONNX import fixtures: vitrt's own reference models exported by torch.onnx.export (offline; needs Debian's
python3-onnx) next to the same weights as a checkpoint, so the test can compare the .onnx route with the .pth route.
Run by ctest (fixture `onnx_cases`):

    /usr/bin/python3 tools/reference/make_onnx_cases.py --out build/fixtures/onnx_cases

Writes DIR/<case>/{model.pth, opset14.onnx, opset17.onnx, input.npy, logits_f32.npy} and DIR/manifest.json.
The batch axis is exported dynamic (dynamic_axes), as vitrt keeps it; deit_tiny_2layer also as exported without
dynamic_axes (opset17_static_batch.onnx: batch 1 written into its shapes).

Cases (small, for CI time): DeiT-Tiny depth 2 and a distilled one of depth 1; PVT v2 b0 with one block per
stage; a LaViT with LaViT-Tiny's layout (VA layers, an attention residual into every later stage, one LA layer
at the end of stages 2-4) at depths 1,2,2,2, widths 64,128,128,192 (heads 1,2,2,3) and MLP ratio 2 (the tiny's
widths would make this fixture ~150 MB); a SOFT (scaled Newton, 20 steps) with one block per stage at widths
32,64,64,96 (heads 1,2,2,3; SOFT-Tiny's widths make each file 28 MB), also exported as the official SOFT code
writes its forward (opset17_pos_interpolate.onnx: each position table goes through F.interpolate(bicubic),
an identity at 224, so the export holds four Resize nodes that the importer removes).
"""
import argparse
import json
import os
import sys
import warnings

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vitrt_reference as R  # noqa: E402
from vitrt_reference import lavit as L  # noqa: E402
from vitrt_reference import soft as S  # noqa: E402

OPSETS = (14, 17)


def export(model, x, path, opset, dynamic=True):
    axes = {"input": {0: "batch"}, "logits": {0: "batch"}} if dynamic else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, torch.from_numpy(x), path, opset_version=opset, input_names=["input"],
                          output_names=["logits"], dynamic_axes=axes, do_constant_folding=True)


def interpolate_pos_embed(pos, H, W):
    """The official SOFT code's position-table resize: F.interpolate(bicubic) called in forward whatever the
    size (an identity at 224), so its export holds a Resize of each table to sizes computed from the image."""
    _, L, C = pos.shape
    s = int(L ** 0.5)
    p = pos.reshape(1, s, s, C).permute(0, 3, 1, 2)
    p = F.interpolate(p, size=(H, W), mode="bicubic", align_corners=False)
    return p.flatten(2).transpose(1, 2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    cases = {}
    # Tiny DeiT: depth 2, 10 classes (DeiT-Tiny's width and heads, 224x224, patch 16), raw state_dict.
    models = [("deit_tiny_2layer", lambda: R.deit_tiny(depth=2, num_classes=10), 11),
              ("deit_tiny_distilled_1layer", lambda: R.deit_tiny_distilled(depth=1, num_classes=7), 12),
              ("pvt_v2_b0_1111", lambda: R.pvt_v2_b0(num_classes=10, depths=(1, 1, 1, 1)), 13),
              ("lavit_1222_narrow", lambda: L.LaViT(num_classes=10, depths=(1, 2, 2, 2), la_layers=(0, 1, 1, 1),
                                                    embed_dims=(64, 128, 128, 192), mlp_ratios=(2, 2, 2, 2)), 14),
              ("soft_1111_narrow", lambda: S.SoftmaxFreeVisionTransformer(num_classes=10, embed_dims=(32, 64, 64, 96),
                                                                          depths=(1, 1, 1, 1)), 15)]
    for name, factory, seed in models:
        d = os.path.join(args.out, name)
        os.makedirs(d, exist_ok=True)
        model = factory().eval()
        R.init_for_tests(model, seed)
        if isinstance(model, L.LaViT):
            L.init_lavit_extras(model, seed)
        x = R.make_images(2, 224, seed)
        R.calibrate_heads(model, torch.from_numpy(x), 4.0)
        with torch.no_grad():
            logits = model(torch.from_numpy(x)).numpy().astype(np.float32)
        R.save_in_container(os.path.join(d, "model.pth"), R.clone_state_dict(model), "raw")
        onnx_files = {}
        for opset in OPSETS:
            export(model, x, os.path.join(d, f"opset{opset}.onnx"), opset)
            onnx_files[str(opset)] = f"{name}/opset{opset}.onnx"
        if name == "deit_tiny_2layer":  # as exported without dynamic_axes: batch 1 written into the graph
            export(model, x[:1], os.path.join(d, "opset17_static_batch.onnx"), 17, dynamic=False)
            onnx_files["17 static batch"] = f"{name}/opset17_static_batch.onnx"
        if name == "soft_1111_narrow":  # the official code's form: Resize (bicubic) of every position table
            resize, S.resize_pos_embed = S.resize_pos_embed, interpolate_pos_embed
            try:
                with torch.no_grad():
                    assert torch.equal(model(torch.from_numpy(x)).float(), torch.from_numpy(logits))
                export(model, x, os.path.join(d, "opset17_pos_interpolate.onnx"), 17)
            finally:
                S.resize_pos_embed = resize
            onnx_files["17 pos_embed F.interpolate"] = f"{name}/opset17_pos_interpolate.onnx"
        np.save(os.path.join(d, "input.npy"), x)
        np.save(os.path.join(d, "logits_f32.npy"), logits)
        cases[name] = dict(checkpoint=f"{name}/model.pth", input=f"{name}/input.npy",
                           logits=f"{name}/logits_f32.npy",
                           onnx=onnx_files)
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(dict(cases=cases), f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
