#!/usr/bin/python3
"""Exports the models bench/onnx_vs_ort.py compares into a cache folder (never into git), as a user would:
torch.onnx.export at opset 17 with a dynamic batch axis (input "input", output "logits").

    /usr/bin/python3 bench/export_onnx_zoo.py --out DIR [NAME ...]

NAME is `deit_tiny` (the project's own reference DeiT-Tiny, full depth, seeded and calibrated as
tools/reference/make_onnx_cases.py does for its fixtures) or a torchvision 0.14 classifier (vit_b_16, swin_t,
convnext_tiny, resnet50, mobilenet_v3_large, efficientnet_b0, ...) built with weights=None (random init, no
download), made alive enough that comparing two engines' logits means something: zero-initialised heads (ViT's
`heads.head`) get N(0, 0.02), ConvNeXt's layer scale 0.5 instead of 1e-6, BatchNorm statistics are measured on
images (`calibrate_batchnorm`). Speed does not depend on these values. A file already in DIR is reused;
exports are written to a temporary name first, so an interrupted run leaves no truncated model.
"""
import argparse
import os
import sys
import time
import warnings

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools", "reference"))

OPSET = 17
SEED = 0


def build(name):
    torch.manual_seed(SEED)
    if name == "deit_tiny":
        import vitrt_reference as R
        model = R.deit_tiny().eval()
        R.init_for_tests(model, 11)
        R.calibrate_heads(model, torch.from_numpy(R.make_images(2, 224, 11)), 4.0)
        return model
    import torchvision
    if not hasattr(torchvision.models, name):
        raise SystemExit(f"export_onnx_zoo: unknown model '{name}' (deit_tiny or a torchvision.models name)")
    model = getattr(torchvision.models, name)(weights=None).eval()
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() == 2 and p.abs().max() == 0:  # zero-initialised Linear (ViT's head)
                p.normal_(0, 0.02)
        for n, p in model.named_parameters():
            if n.endswith("layer_scale"):  # ConvNeXt's 1e-6 makes every block a near-identity
                p.fill_(0.5)
    calibrate_batchnorm(model)
    return model


def calibrate_batchnorm(model):
    """BatchNorm running statistics measured on images (a cumulative average, BatchNorm layers alone in train
    mode): with the init's mean 0 / variance 1, activations shrink through the depthwise layers of MobileNetV3 and
    EfficientNet until their logits are ~1e-10 and no comparison of two engines' logits means anything."""
    import vitrt_reference as R
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    for m in bns:
        m.reset_running_stats()
        m.momentum = None
        m.train()
    with torch.no_grad():
        for seed in (21, 22):
            model(torch.from_numpy(R.make_images(8, 224, seed)))
    model.eval()


def export(name, out_dir):
    path = os.path.join(out_dir, f"{name}.onnx")
    if os.path.exists(path):
        return path
    t0 = time.time()
    model = build(name)
    tmp = path + ".part"
    # Not under no_grad: there, torch 1.13 sends nn.MultiheadAttention (ViT) to its fused fast path, which
    # torch.onnx cannot export (aten::_native_multi_head_attention).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, torch.zeros(1, 3, 224, 224), tmp, opset_version=OPSET, input_names=["input"],
                          output_names=["logits"], dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}},
                          do_constant_folding=True)
    os.replace(tmp, path)
    print(f"exported {path} ({os.path.getsize(path) / 1e6:.1f} MB, {time.time() - t0:.0f} s)", file=sys.stderr)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="cache folder for NAME.onnx")
    ap.add_argument("names", nargs="+")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    torch.set_num_threads(2)
    for n in a.names:
        print(export(n, a.out))


if __name__ == "__main__":
    main()
