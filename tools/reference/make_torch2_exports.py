#!/usr/bin/env python3
"""Exports made by a current PyTorch (2.9 or later: `torch.onnx.export` defaults to the dynamo exporter there),
the form most users bring today. Debian's python3-torch (1.13) has only the TorchScript exporter, so these files
cannot be made on the development machines: they are made once on a machine with a current PyTorch, torchvision
and timm, and the small files are committed (tests/data/onnx_torch2/, test `onnx_torch2`):

    python3 tools/reference/make_torch2_exports.py --out DIR [--jobs 8]

Every model is small on purpose (random init, a few blocks, 64x64 input, 10 classes): what is tested is the
graph an exporter writes, not the width. Each model is exported up to three ways:
  * `dynamo`: `torch.onnx.export(..., dynamo=True)` at the exporter's default opset, batch dynamic
    (`dynamic_shapes`), the exporter's own optimiser on (its default);
  * `dynamo18`: the same at opset 18 (MORE_FORMS: the transformers);
  * `legacy17`: the TorchScript exporter (`dynamo=False`), opset 17, `dynamic_axes` on the batch (MORE_FORMS).

Writes DIR/<model>.<form>.onnx, DIR/input.npy [4,3,64,64] (skimage's astronaut, coffee, chelsea and rocket: shorter side 73,
centre crop 64, ImageNet mean and std), DIR/<model>.logits64.npy (PyTorch in float64) and DIR/manifest.json in
make_onnx_zoo.py's form ({"models": {name: {"onnx": {form: file}, "argmax", "max_abs_logit",
"max_abs_f32_vs_f64", "top_gap", "ort_max_abs_vs_f64": {form: err}, "opsets": {form: n}}}, plus the versions
and every export that failed, with its error).

Calibration as in make_onnx_zoo.py: BatchNorm statistics from crops of real photographs, attention q/k scaled so
that softmax rows are not flat, ConvNeXt layer scale not 1e-6, the classifier's input standardised.
"""
import argparse
import concurrent.futures as cf
import copy
import json
import os
import sys
import time
import traceback
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_onnx_zoo import CALIBRATION_IMAGES, MEAN, STD, photo  # noqa: E402

SIZE = 64
TEST_IMAGES = ["astronaut", "coffee", "chelsea", "rocket"]  # four, so that small heads still differ in top-1


def test_input():
    from PIL import Image
    from skimage import data as skdata
    out = []
    for name in TEST_IMAGES:
        im = Image.fromarray(np.asarray(getattr(skdata, name)())).convert("RGB")
        w, h = im.size
        s = 73 / min(w, h)
        im = im.resize((max(73, round(w * s)), max(73, round(h * s))), Image.BILINEAR)
        w, h = im.size
        left, top = (w - SIZE) // 2, (h - SIZE) // 2
        a = np.asarray(im.crop((left, top, left + SIZE, top + SIZE)), dtype=np.float32) / 255.0
        out.append((torch.from_numpy(a).permute(2, 0, 1) - MEAN) / STD)
    return torch.stack(out).contiguous()


def calibration_batches(gen, batches=3, size=16):
    photos = [photo(n) for n in CALIBRATION_IMAGES]
    for _ in range(batches):
        crops = []
        for _ in range(size):
            p = photos[int(torch.randint(len(photos), (1,), generator=gen))]
            _, h, w = p.shape
            side = int(min(h, w) * (0.25 + 0.75 * float(torch.rand(1, generator=gen))))
            y = int(torch.randint(h - side + 1, (1,), generator=gen))
            x = int(torch.randint(w - side + 1, (1,), generator=gen))
            c = F.interpolate(p[None, :, y:y + side, x:x + side], size=(SIZE, SIZE), mode="bilinear",
                              align_corners=False, antialias=True)[0]
            crops.append((c - MEAN) / STD)
        yield torch.stack(crops)


def calibrate_batchnorm(model, gen):
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    model.eval()
    for m in bns:
        m.reset_running_stats()
        m.momentum = None
        m.train()
    with torch.no_grad():
        for x in calibration_batches(gen):
            model(x)
    model.eval()


def calibrate_head(model, gen):
    heads = [m for m in model.modules() if isinstance(m, nn.Linear)]
    if not heads:  # SqueezeNet's classifier is a 1x1 conv
        return
    head = heads[-1]
    feats = []
    hook = head.register_forward_pre_hook(lambda m, inp: feats.append(inp[0].detach().reshape(-1, m.in_features)))
    model.eval()
    with torch.no_grad():
        head.weight.normal_(0, 0.05, generator=gen)
        if head.bias is not None:
            head.bias.zero_()
        for x in calibration_batches(gen, batches=2):
            model(x)
        hook.remove()
        f = torch.cat(feats)
        mu, sigma = f.mean(0), f.std(0) + 1e-3
        head.weight /= sigma
        if head.bias is not None:
            head.bias -= head.weight @ mu


def sharpen(model, gen, factor=3.0):
    """q and k projections scaled (q.k grows factor^2) and relative position tables at std 1."""
    with torch.no_grad():
        for name, m in model.named_modules():
            if isinstance(m, nn.MultiheadAttention):
                d = m.embed_dim
                m.in_proj_weight[:2 * d] *= factor
                m.in_proj_bias[:2 * d] *= factor
            qkv = getattr(m, "qkv", None)
            if isinstance(qkv, nn.Linear):
                c = qkv.in_features
                qkv.weight[:2 * c] *= factor
                if qkv.bias is not None:
                    qkv.bias[:2 * c] *= factor
            q, kv = getattr(m, "q", None), getattr(m, "kv", None)
            if isinstance(q, nn.Linear) and isinstance(kv, nn.Linear):  # PVT v2
                q.weight *= factor
                kv.weight[:kv.out_features // 2] *= factor
            table = getattr(m, "relative_position_bias_table", None)
            if isinstance(table, torch.Tensor):
                table.normal_(0, 1.0, generator=gen)
        for name, p in model.named_parameters():
            if name.endswith("layer_scale") or name.endswith(".gamma"):
                p.copy_(0.1 + 0.9 * torch.rand(p.shape, generator=gen))


def no_fused_attention(model):
    for m in model.modules():
        if hasattr(m, "fused_attn"):
            m.fused_attn = False
    return model


def tv(name, **kw):
    import torchvision
    return getattr(torchvision.models, name)(weights=None, num_classes=10, **kw)


def make(name):
    import torchvision
    if name == "tv_vit":
        return torchvision.models.VisionTransformer(image_size=SIZE, patch_size=16, num_layers=2, num_heads=4,
                                                    hidden_dim=64, mlp_dim=128, num_classes=10)
    if name == "tv_swin":
        return torchvision.models.SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[1, 2],
                                                  window_size=[4, 4], num_classes=10)
    if name == "tv_swin_v2":
        from torchvision.models.swin_transformer import PatchMergingV2, SwinTransformerBlockV2
        return torchvision.models.SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[1, 2],
                                                  window_size=[4, 4], num_classes=10, block=SwinTransformerBlockV2,
                                                  downsample_layer=PatchMergingV2)
    if name == "tv_convnext":
        from torchvision.models.convnext import CNBlockConfig, ConvNeXt
        return ConvNeXt([CNBlockConfig(32, 64, 2), CNBlockConfig(64, None, 1)], num_classes=10)
    if name == "tv_mobilenet_v3":
        return tv("mobilenet_v3_small", width_mult=0.25)
    if name == "tv_mobilenet_v2":
        return tv("mobilenet_v2", width_mult=0.25)
    if name == "tv_shufflenet":
        return torchvision.models.ShuffleNetV2([2, 2, 2], [16, 24, 48, 96, 128], num_classes=10)
    if name == "tv_densenet":
        return torchvision.models.DenseNet(growth_rate=8, block_config=(2, 2), num_init_features=16, bn_size=2,
                                           num_classes=10)
    if name == "tv_regnet":
        from torchvision.models.regnet import BlockParams, RegNet
        return RegNet(BlockParams.from_init_params(depth=4, w_0=16, w_a=8.0, w_m=2.0, group_width=8,
                                                   se_ratio=0.25), num_classes=10)
    if name == "tv_efficientnet":
        from torchvision.models.efficientnet import EfficientNet, _efficientnet_conf
        setting, last = _efficientnet_conf("efficientnet_b0", width_mult=0.25, depth_mult=0.25)
        return EfficientNet(setting, 0.2, last_channel=last, num_classes=10)
    if name in ("timm_vit_sdpa", "timm_vit_eager"):
        from timm.models.vision_transformer import VisionTransformer
        m = VisionTransformer(img_size=SIZE, patch_size=16, embed_dim=64, depth=2, num_heads=4, num_classes=10)
        return no_fused_attention(m) if name.endswith("eager") else m
    if name == "timm_pvt_v2":
        from timm.models.pvt_v2 import PyramidVisionTransformerV2
        return PyramidVisionTransformerV2(depths=(1, 1, 1, 1), embed_dims=(16, 32, 32, 64), num_heads=(1, 2, 2, 4),
                                          mlp_ratios=(2, 2, 2, 2), num_classes=10)
    raise ValueError(name)


MODELS = ["tv_vit", "tv_swin", "tv_swin_v2", "tv_convnext", "tv_mobilenet_v3", "tv_mobilenet_v2", "tv_shufflenet",
          "tv_densenet", "tv_regnet", "tv_efficientnet", "timm_vit_sdpa", "timm_vit_eager", "timm_pvt_v2"]
# Every model is exported by the dynamo exporter at its default opset; these also in the other forms (the
# committed set stays small: the CNNs' opset-18 and TorchScript forms are the same graphs as the zoo's).
MORE_FORMS = {"tv_vit": ["dynamo18", "legacy17"], "tv_swin": ["dynamo18", "legacy17"], "tv_convnext": ["dynamo18"],
              "timm_vit_sdpa": ["dynamo18", "legacy17"], "tv_swin_v2": ["legacy17"]}


def op_histogram(path):
    import onnx
    m = onnx.load(path)
    ops = {}
    for n in m.graph.node:
        key = n.op_type if n.domain in ("", "ai.onnx") else f"{n.domain}::{n.op_type}"
        ops[key] = ops.get(key, 0) + 1
    opset = [o.version for o in m.opset_import if o.domain in ("", "ai.onnx")]
    others = [f"{o.domain}:{o.version}" for o in m.opset_import if o.domain not in ("", "ai.onnx")]
    return (opset[0] if opset else None), others, dict(sorted(ops.items()))


def export_one(model, x, path, form):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if form == "legacy17":
            legacy = {"dynamo": False} if int(torch.__version__.split(".")[0]) >= 2 else {}
            torch.onnx.export(model, (x,), path, **legacy, opset_version=17, input_names=["input"],
                              output_names=["logits"], dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})
        else:
            kw = {"opset_version": 18} if form == "dynamo18" else {}
            batch = torch.export.Dim("batch", min=1, max=1024)
            prog = torch.onnx.export(model, (x,), None, dynamo=True, input_names=["input"], output_names=["logits"],
                                     dynamic_shapes=({0: batch},), **kw)
            prog.save(path)


def run_model(i, name, out, x):
    torch.set_num_threads(2)
    log = []
    t0 = time.time()
    seed = 20261128 + i
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    model = make(name).eval()
    sharpen(model, gen)
    calibrate_batchnorm(model, gen)
    calibrate_head(model, gen)
    model.eval()
    with torch.no_grad():
        y32 = model(x).numpy().astype(np.float64)
        y64 = copy.deepcopy(model).double()(x.double()).numpy()
    np.save(os.path.join(out, f"{name}.logits64.npy"), y64)
    top = np.sort(y64, axis=1)
    rec = {"onnx": {}, "opsets": {}, "ort_max_abs_vs_f64": {}, "export_errors": {},
           "argmax": [int(a) for a in y64.argmax(1)], "max_abs_logit": float(np.abs(y64).max()),
           "max_abs_f32_vs_f64": float(np.abs(y32 - y64).max()), "top_gap": float((top[:, -1] - top[:, -2]).min()),
           "params": int(sum(p.numel() for p in model.parameters()))}
    for form in ["dynamo"] + MORE_FORMS.get(name, []):
        path = f"{name}.{form}.onnx"
        try:
            export_one(model, x, os.path.join(out, path), form)
        except Exception as e:  # noqa: BLE001 - recorded, the other forms still run
            rec["export_errors"][form] = f"{type(e).__name__}: {str(e)[:600]}"
            log.append(f"{name} {form}: export failed: {traceback.format_exc()[-1500:]}")
            continue
        opset, others, ops = op_histogram(os.path.join(out, path))
        rec["onnx"][form] = path
        rec["opsets"][form] = opset
        try:
            import onnxruntime as ort
            s = ort.InferenceSession(os.path.join(out, path), providers=["CPUExecutionProvider"])
            y = s.run(None, {s.get_inputs()[0].name: x.numpy()})[0]
            rec["ort_max_abs_vs_f64"][form] = float(np.abs(y.astype(np.float64) - y64).max())
        except Exception as e:  # noqa: BLE001
            rec["ort_max_abs_vs_f64"][form] = f"{type(e).__name__}: {str(e)[:300]}"
        log.append(f"{name} {form}: opset {opset} {others} {os.path.getsize(os.path.join(out, path))} bytes, "
                   f"ort err {rec['ort_max_abs_vs_f64'][form]}, ops {ops}")
    log.append(f"{name}: params {rec['params']}, argmax {rec['argmax']}, max|logit| {rec['max_abs_logit']:.3g}, "
               f"gap {rec['top_gap']:.3g}, f32 vs f64 {rec['max_abs_f32_vs_f64']:.2e}, {time.time() - t0:.1f} s")
    return name, rec, "\n".join(log)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    x = test_input()
    np.save(os.path.join(args.out, "input.npy"), x.numpy())
    names = [n for n in args.models.split(",") if n]
    models, failed = {}, {}
    with cf.ProcessPoolExecutor(max_workers=args.jobs, mp_context=__import__("multiprocessing").get_context(
            "spawn")) as ex:
        futs = {ex.submit(run_model, i, n, args.out, x): n for i, n in enumerate(names)}
        for f in cf.as_completed(futs):
            n = futs[f]
            try:
                name, rec, log = f.result()
                models[name] = rec
                print(log, flush=True)
            except Exception:  # noqa: BLE001
                failed[n] = traceback.format_exc()[-2000:]
                print(f"{n}: FAILED\n{failed[n]}", flush=True)
    versions = {"torch": torch.__version__}
    for mod in ("torchvision", "timm", "onnx", "onnxscript", "onnxruntime"):
        try:
            versions[mod] = __import__(mod).__version__
        except Exception:  # noqa: BLE001
            versions[mod] = None
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump({"models": dict(sorted(models.items())), "failed": failed, "versions": versions}, f, indent=1,
                  sort_keys=True)
    print(json.dumps(versions))


if __name__ == "__main__":
    main()
