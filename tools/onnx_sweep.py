#!/usr/bin/python3
"""A sweep of torchvision classifiers beyond the zoo test (docs/onnx.md, "Beyond the zoo"): each one random-init
and calibrated like the zoo (tools/reference/make_onnx_zoo.py: BatchNorm statistics and the classifier's input
standardised on skimage photographs), exported by torch.onnx.export at each opset, converted by vitrt-convert
and run by `vitrt run` at batch 2 on `cpu` and `ref`; prints the largest |logit difference| from PyTorch's float64
run beside PyTorch's own float32 error, and whether the argmax agrees. Not a ctest (minutes per model):

    /usr/bin/python3 tools/onnx_sweep.py --build build --out /tmp/sweep --models alexnet,resnet18 --opsets 17,13,11
"""
import argparse
import os
import subprocess
import sys
import time
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference"))
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torchvision  # noqa: E402

import make_onnx_zoo as zoo  # noqa: E402

# Constructor arguments for models whose defaults do not export as a plain classifier.
CONSTRUCTOR_ARGS = {"inception_v3": {"aux_logits": False, "init_weights": True}}
INPUT_SIZE = {"inception_v3": 299}


def check(build, path, inp, y64, d32):
    """Converts and runs `path` on both backends; one line per backend."""
    r = subprocess.run([f"{build}/bin/vitrt-convert", path, "-o", path + ".vitrt"], capture_output=True, text=True)
    if r.returncode != 0:
        return [f"CONVERT exit {r.returncode}: {(r.stderr or r.stdout).strip()[-400:]}"]
    lines = []
    for backend in ("cpu", "ref"):
        out = f"{path}.{backend}.npy"
        r = subprocess.run([f"{build}/bin/vitrt", "run", "-m", path + ".vitrt", "-b", backend, "-t", "2", "--batch",
                            "2", "-i", inp, "-o", out], capture_output=True, text=True)
        if r.returncode != 0:
            lines.append(f"{backend}: RUN exit {r.returncode}: {r.stderr.strip()[-400:]}")
            continue
        y = np.load(out).astype(np.float64)
        d = float(np.abs(y - y64).max())
        same = bool((y.argmax(1) == y64.argmax(1)).all())
        bad = d > max(10 * d32, 1e-4 * float(np.abs(y64).max()))
        lines.append(f"{backend}: max|d| {d:.2e} (torch f32 {d32:.2e}, max|logit| {np.abs(y64).max():.3g}) "
                     f"argmax {'equal' if same else 'DIFFERS'}{'  OUT OF TOLERANCE' if bad else ''}")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", required=True, help="comma-separated torchvision.models names")
    ap.add_argument("--opsets", default="17,13,11")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(2)
    x224 = zoo.test_input()
    for i, name in enumerate(n for n in args.models.split(",") if n):
        t0 = time.time()
        torch.manual_seed(i)
        gen = torch.Generator().manual_seed(i)
        model = getattr(torchvision.models, name)(weights=None, **CONSTRUCTOR_ARGS.get(name, {})).eval()
        size = INPUT_SIZE.get(name, 224)
        x = x224 if size == 224 else torch.nn.functional.interpolate(x224, size=size, mode="bilinear")
        inp = os.path.join(args.out, f"input{size}.npy")
        np.save(inp, x.numpy())
        zoo.calibrate_batchnorm(model, gen)
        if any(isinstance(m, torch.nn.Linear) for m in model.modules()):  # SqueezeNet's head is a conv
            zoo.calibrate_head(model, gen)
        with torch.no_grad():
            y32 = model(x).numpy().astype(np.float64)
            y64 = model.double()(x.double()).numpy()
        model = model.float()
        d32 = float(np.abs(y32 - y64).max())
        for opset in (int(o) for o in args.opsets.split(",")):
            path = os.path.join(args.out, f"{name}.opset{opset}.onnx")
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    torch.onnx.export(model, x[:1], path, opset_version=opset, input_names=["input"],
                                      output_names=["logits"],
                                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})
            except Exception as e:  # torch's exporter refuses some models at some opsets
                print(f"{name} opset {opset}: torch.onnx.export failed: {str(e)[:200]}", flush=True)
                continue
            for line in check(args.build, path, inp, y64, d32):
                print(f"{name} opset {opset} {line}", flush=True)
        print(f"{name}: {time.time() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
