#!/usr/bin/env python3
"""A sweep of classifiers nobody on this team wrote, as a current PyTorch exports them: each model is built
with random weights (timm's and torchvision's own definitions, nothing downloaded), exported by
`torch.onnx.export(..., dynamo=True)` at its default opset with a dynamic batch (a static one when the
dynamic export fails), converted by vitrt-convert and run by `vitrt run`; the logits are compared with
PyTorch's in float64. Needs torch >= 2.9, timm, onnxruntime and a vitrt build (BIN holds vitrt and
vitrt-convert):

    python3 tools/reference/sweep_torch2_exports.py --bin build/bin --out DIR [--jobs 12] [--models a,b]

Writes DIR/sweep.jsonl (one record per model: export form and opset, ONNX Runtime's error, vitrt-convert's
exit code and message, vitrt's relative error against PyTorch float64 and PyTorch's own float32 one, the
planned ops) and prints a table. Each model runs in its own process under a time limit; its files are
deleted after it.

Not run yet: written 2026-11-28 for the lent GPU machine (which has torch 2.11, timm and onnxruntime), whose
loans were paused before it could run. Expect to fix it on its first run.
"""
import argparse
import concurrent.futures as cf
import json
import os
import subprocess
import sys
import tempfile
import time

TIMM = [
    "vit_tiny_patch16_224", "deit_tiny_patch16_224", "deit_tiny_distilled_patch16_224", "deit3_small_patch16_224",
    "cait_xxs24_224", "convit_tiny", "crossvit_tiny_240", "xcit_nano_12_p16_224", "levit_128s", "pit_ti_224",
    "coat_lite_tiny", "twins_pcpvt_small", "swin_tiny_patch4_window7_224", "swinv2_tiny_window8_256",
    "mobilevit_xxs", "mobilevitv2_050", "efficientformer_l1", "efficientformerv2_s0", "fastvit_t8",
    "edgenext_xx_small", "poolformer_s12", "convnext_atto", "convnextv2_atto", "resnet18", "resnet50d",
    "resnext26ts", "seresnext26d_32x4d", "regnetx_002", "regnety_002", "efficientnet_b0", "mobilenetv3_small_050",
    "mobilenetv2_050", "mnasnet_050", "ghostnet_050", "dla34", "densenet121", "inception_v3", "repvgg_a0",
    "rexnet_100", "lcnet_050", "pvt_v2_b0", "gcvit_xxtiny", "visformer_tiny", "resmlp_12_224", "gmlp_ti16_224",
    "davit_tiny", "focalnet_tiny_srf", "inception_next_tiny", "efficientvit_b0", "efficientvit_m0", "repvit_m1",
    "tiny_vit_5m_224", "hgnetv2_b0", "eva02_tiny_patch14_224", "vit_small_patch16_224", "mixer_s16_224",
    "maxvit_tiny_tf_224", "coatnet_nano_rw_224", "nextvit_small", "mobileone_s0", "ese_vovnet19b_dw",
]
TORCHVISION = [
    "tv:alexnet", "tv:vgg11", "tv:resnet18", "tv:squeezenet1_1", "tv:densenet121", "tv:inception_v3",
    "tv:googlenet", "tv:shufflenet_v2_x0_5", "tv:mobilenet_v2", "tv:mobilenet_v3_small", "tv:resnext50_32x4d",
    "tv:mnasnet0_5", "tv:efficientnet_b0", "tv:efficientnet_v2_s", "tv:regnet_y_400mf", "tv:vit_b_16",
    "tv:swin_t", "tv:swin_v2_t", "tv:maxvit_t", "tv:convnext_tiny",
]


def build(name):
    import torch
    if name.startswith("tv:"):
        import torchvision
        kw = {"aux_logits": False, "init_weights": True} if name in ("tv:inception_v3", "tv:googlenet") else {}
        m = getattr(torchvision.models, name[3:])(weights=None, **kw)
        size = (3, 299, 299) if name == "tv:inception_v3" else (3, 224, 224)
        return m, size
    import timm
    m = timm.create_model(name, pretrained=False)
    return m, tuple(m.pretrained_cfg.get("input_size", (3, 224, 224)))


def worker(name, bin_dir):
    import copy

    import numpy as np
    import torch
    torch.manual_seed(0)
    torch.set_num_threads(1)
    rec = {"model": name}
    m, size = build(name)
    m.eval()
    rec["params"] = int(sum(p.numel() for p in m.parameters()))
    rec["input"] = list(size)
    x = torch.randn(2, *size)
    with torch.no_grad():
        y32 = m(x)
        try:
            y64 = copy.deepcopy(m).double()(x.double()).numpy()
        except Exception as e:  # noqa: BLE001
            y64 = None
            rec["f64_error"] = str(e)[:200]
    y32 = y32.numpy().astype(np.float64)
    ref = y64 if y64 is not None else y32
    rec["d32"] = float(np.abs(y32 - ref).max())
    rec["scale"] = float(np.abs(ref).max())
    tmp = tempfile.mkdtemp(prefix="sweep_")
    onnx_path, vitrt_path = os.path.join(tmp, "m.onnx"), os.path.join(tmp, "m.vitrt")
    xin, yout = os.path.join(tmp, "x.npy"), os.path.join(tmp, "y.npy")
    np.save(xin, x.numpy())
    t0 = time.time()
    for form in ("dynamic", "static"):
        try:
            kw = {"dynamic_shapes": ({0: torch.export.Dim("batch", min=1, max=1024)},)} if form == "dynamic" else {}
            prog = torch.onnx.export(m, (x,), None, dynamo=True, input_names=["input"], output_names=["logits"],
                                     **kw)
            prog.save(onnx_path)
            rec["export"] = form
            break
        except Exception as e:  # noqa: BLE001
            rec[f"export_error_{form}"] = f"{type(e).__name__}: {str(e)[:300]}"
    rec["export_s"] = round(time.time() - t0, 1)
    if "export" not in rec:
        return rec
    import onnx
    mo = onnx.load(onnx_path, load_external_data=False)
    rec["opset"] = [o.version for o in mo.opset_import if o.domain in ("", "ai.onnx")][0]
    ops = {}
    for n in mo.graph.node:
        ops[n.op_type] = ops.get(n.op_type, 0) + 1
    rec["onnx_ops"] = ops
    try:
        import onnxruntime as ort
        s = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
        yo = s.run(None, {s.get_inputs()[0].name: x.numpy()})[0]
        rec["ort_rel"] = float(np.abs(yo.astype(np.float64) - ref).max() / max(rec["scale"], 1e-30))
    except Exception as e:  # noqa: BLE001
        rec["ort_error"] = str(e)[:200]
    c = subprocess.run([os.path.join(bin_dir, "vitrt-convert"), onnx_path, "-o", vitrt_path], capture_output=True,
                       text=True)
    rec["convert_rc"] = c.returncode
    if c.returncode != 0:
        rec["convert_msg"] = (c.stderr.strip().splitlines() or [""])[-1][:400]
        return rec
    r = subprocess.run([os.path.join(bin_dir, "vitrt"), "run", "-m", vitrt_path, "-i", xin, "-o", yout, "--batch",
                        "2", "-t", "1"], capture_output=True, text=True)
    rec["run_rc"] = r.returncode
    if r.returncode != 0:
        rec["run_msg"] = (r.stderr.strip().splitlines() or [""])[-1][:400]
        return rec
    y = np.load(yout).astype(np.float64)
    rec["vitrt_rel"] = float(np.abs(y - ref).max() / max(rec["scale"], 1e-30))
    rec["d32_rel"] = rec["d32"] / max(rec["scale"], 1e-30)
    rec["argmax_equal"] = bool((y.argmax(1) == ref.argmax(1)).all())
    i = subprocess.run([os.path.join(bin_dir, "vitrt"), "inspect", vitrt_path], capture_output=True, text=True)
    for line in i.stdout.splitlines():
        if line.strip().startswith("ops"):
            rec["planned_ops"] = line.strip()[3:].strip()
    return rec


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--one":
        name, bin_dir = sys.argv[2], sys.argv[3]
        try:
            rec = worker(name, bin_dir)
        except Exception as e:  # noqa: BLE001
            rec = {"model": name, "error": f"{type(e).__name__}: {str(e)[:300]}"}
        print("RESULT " + json.dumps(rec), flush=True)
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--jobs", type=int, default=8)
    ap.add_argument("--models", default="")
    ap.add_argument("--timeout", type=int, default=180, help="seconds per model")
    ap.add_argument("--budget", type=int, default=0, help="stop starting models after this many seconds")
    args = ap.parse_args()
    names = [n for n in args.models.split(",") if n] or TIMM + TORCHVISION
    os.makedirs(args.out, exist_ok=True)
    start = time.time()

    def one(name):
        if args.budget and time.time() - start > args.budget:
            return {"model": name, "error": "not started: time budget spent"}
        try:
            p = subprocess.run([sys.executable, os.path.abspath(__file__), "--one", name, os.path.abspath(args.bin)],
                               capture_output=True, text=True, timeout=args.timeout)
            for line in p.stdout.splitlines():
                if line.startswith("RESULT "):
                    return json.loads(line[7:])
            return {"model": name, "error": "no result: " + (p.stderr.strip().splitlines() or [""])[-1][:300]}
        except subprocess.TimeoutExpired:
            return {"model": name, "error": f"timed out after {args.timeout} s"}

    with open(os.path.join(args.out, "sweep.jsonl"), "w") as f, cf.ThreadPoolExecutor(args.jobs) as ex:
        for rec in ex.map(one, names):
            f.write(json.dumps(rec) + "\n")
            f.flush()
            status = (rec.get("error") or rec.get("convert_msg") or rec.get("run_msg") or
                      (f"rel {rec['vitrt_rel']:.1e} (torch f32 {rec['d32_rel']:.1e}) argmax "
                       f"{'ok' if rec['argmax_equal'] else 'DIFFERS'}" if "vitrt_rel" in rec else
                       rec.get("export_error_static", "?")))
            print(f"{rec['model']:34s} {rec.get('export', '-'):8s} {status}", flush=True)


if __name__ == "__main__":
    main()
