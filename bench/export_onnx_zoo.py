#!/usr/bin/python3
"""Exports the models bench/onnx_vs_ort.py compares into a cache folder (never into git), as a user would:
torch.onnx.export at opset 17 with a dynamic batch axis (input "input", output "logits").

    /usr/bin/python3 bench/export_onnx_zoo.py --out DIR [NAME ...]

NAME is `deit_tiny` (the project's own reference DeiT-Tiny, full depth, seeded and calibrated as
tools/reference/make_onnx_cases.py does for its fixtures), `hf_vit_d32` (DeiT-Tiny's size with 6 heads of 32,
its attention written as Hugging Face's transformers writes it: tools/reference/make_onnx_hf_attention_cases.py)
or a torchvision 0.14 classifier (vit_b_16, swin_t,
convnext_tiny, resnet50, mobilenet_v3_large, efficientnet_b0, ...) built with weights=None (random init, no
download), calibrated so that comparing two engines' logits means something: the models of the zoo parity
fixture come as tools/reference/make_onnx_zoo.py builds them (BatchNorm statistics from photographs, ConvNeXt layer
scale, ViT attention and head); others get their BatchNorm statistics measured and zero heads drawn. Speed does
not depend on these values. A file already in DIR is reused while NAME.onnx.stamp matches these
scripts; exports are written to a temporary name first, so an interrupted run leaves no truncated model.
"""
import argparse
import hashlib
import os
import sys
import time
import warnings

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = os.path.join(os.path.dirname(HERE), "tools", "reference")
sys.path.insert(0, REFERENCE)

OPSET = 17
SEED = 0


def build(name):
    torch.manual_seed(SEED)
    if name == "hf_vit_d32":
        # DeiT-Tiny's size with 6 heads of 32, its attention written as Hugging Face's transformers writes it
        # (separate q/k/v Linears, the scores divided by sqrt(32): the export keeps the Div).
        import make_onnx_hf_attention_cases as H
        model = H.ViT(192, 6, image=224, patch=16, depth=12, classes=1000).eval()
        H.sharpen(model, torch.Generator().manual_seed(SEED))
        return model
    if name == "deit_tiny":
        import vitrt_reference as R
        model = R.deit_tiny().eval()
        R.init_for_tests(model, 11)
        R.calibrate_heads(model, torch.from_numpy(R.make_images(2, 224, 11)), 4.0)
        return model
    import make_onnx_zoo as Z  # the zoo parity fixture's calibrated models (tools/reference/make_onnx_zoo.py)
    if name in Z.MODELS:
        return Z.build(name, SEED)
    import torchvision
    if not hasattr(torchvision.models, name):
        raise SystemExit(f"export_onnx_zoo: unknown model '{name}' (deit_tiny, hf_vit_d32 or a torchvision.models name)")
    # Not in the zoo fixture (swin_t): its BatchNorm statistics measured, any zero-initialised head drawn.
    gen = torch.Generator().manual_seed(SEED)
    model = getattr(torchvision.models, name)(weights=None).eval()
    if any(isinstance(m, torch.nn.modules.batchnorm._BatchNorm) for m in model.modules()):
        Z.calibrate_batchnorm(model, gen)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() == 2 and p.abs().max() == 0:
                p.normal_(0, 0.02, generator=gen)
    return model.eval()


def stamp():
    """Hash of the scripts that decide an export's weights: a cached export made by other versions is redone."""
    h = hashlib.sha256()
    for f in (os.path.abspath(__file__), os.path.join(REFERENCE, "make_onnx_zoo.py"),
              os.path.join(REFERENCE, "make_onnx_hf_attention_cases.py")):
        with open(f, "rb") as fh:
            h.update(fh.read())
    return h.hexdigest()


def export(name, out_dir):
    path = os.path.join(out_dir, f"{name}.onnx")
    want = stamp()
    if os.path.exists(path) and os.path.exists(path + ".stamp") and open(path + ".stamp").read() == want:
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
    with open(path + ".stamp", "w") as f:
        f.write(want)
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
