#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The command-line tools end to end, as a user (and an outside checker) drives them: conversion with
# auto-detection, `vitrt run` parity with PyTorch through .npy files, classify/preprocess/inspect/bench, and
# the exit codes and messages for bad models, bad checkpoints and bad inputs.
set -uo pipefail
build=$1
fixtures=$2
cases=$fixtures/model_cases
py=${VITRT_PYTHON:-/usr/bin/python3}
bin=$build/bin
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
ok() { echo "ok   $*"; passed=$((passed + 1)); }
bad() { echo "FAIL $*"; failed=$((failed + 1)); }

# expect_exit CODE PATTERN DESCRIPTION -- command...: the command exits with CODE and stderr matches PATTERN.
expect_exit() {
  local want=$1 pattern=$2 what=$3
  shift 4
  "$@" >"$work/out" 2>"$work/err"
  local got=$?
  if [ "$got" -eq "$want" ] && grep -Eq -- "$pattern" "$work/err"; then
    ok "$what (exit $got: $(head -c 200 "$work/err" | tr '\n' ' '))"
  else
    bad "$what: exit $got (want $want), stderr: $(head -c 400 "$work/err")"
  fi
}

compare_npy() {  # compare_npy OUT.npy REF_F64.npy MAX_ABS_F32_VS_F64 MAX_ABS_LOGIT
  "$py" - "$@" <<'PY'
import sys, numpy as np
out, ref = np.load(sys.argv[1]), np.load(sys.argv[2])
f32err, scale = float(sys.argv[3]), float(sys.argv[4])
tol = max(8 * f32err, 4e-7 * scale)
err = float(np.abs(out.astype(np.float64) - ref).max())
same = bool((out.argmax(1) == ref.argmax(1)).all())
print(f"max err {err:.3g} tol {tol:.3g} rel {err/scale:.3g} argmax {'equal' if same else 'DIFFERENT'}")
sys.exit(0 if out.shape == ref.shape and err <= tol and err <= 1e-4 * scale and same else 1)
PY
}

case_field() { "$py" -c "import json,sys; m=json.load(open('$cases/manifest.json')); c=[c for c in m['cases'] if c['name']=='$1'][0]; print(c['$2'])"; }

# 1. Parity through the CLI for every architecture, auto-detected, in the containers real projects use.
for name in deit_tiny pvt_v2_b0 deit_tiny_timm deit_safetensors; do
  ckpt=$cases/$(case_field $name checkpoint)
  if "$bin/vitrt-convert" "$ckpt" -o "$work/$name.vitrt" --labels "$cases/$name/labels.txt" >"$work/conv.out" 2>"$work/conv.err"; then
    ok "convert $name ($(grep -m1 architecture "$work/conv.err"))"
  else
    bad "convert $name: $(cat "$work/conv.err")"
    continue
  fi
  if "$bin/vitrt" run -m "$work/$name.vitrt" --input "$cases/$name/input.npy" --output "$work/$name.out.npy" --batch 2 2>"$work/err" &&
     msg=$(compare_npy "$work/$name.out.npy" "$cases/$name/logits_f64.npy" "$(case_field $name max_abs_f32_vs_f64)" "$(case_field $name max_abs_logit)"); then
    ok "vitrt run $name matches PyTorch: $msg"
  else
    bad "vitrt run $name: ${msg:-} $(cat "$work/err")"
  fi
done

# 1b. --dump-dir keeps every intermediate; its last tensor is the logits.
if "$bin/vitrt" run -m "$work/pvt_v2_b0.vitrt" --input "$cases/pvt_v2_b0/input.npy" --output "$work/d.npy" --dump-dir "$work/dump" 2>"$work/err" &&
   "$py" -c "
import numpy as np, glob
files = sorted(glob.glob('$work/dump/*.npy'))
assert len(files) > 50, len(files)
assert np.array_equal(np.load(files[-1]), np.load('$work/d.npy'))
assert all(np.isfinite(np.load(f)).all() for f in files)"; then
  ok "run --dump-dir writes every intermediate ($(ls "$work/dump" | wc -l) tensors)"
else
  bad "run --dump-dir: $(cat "$work/err")"
fi

# 2. Bad model files: truncated, bit-flipped, not a model, missing.
model=$work/deit_tiny.vitrt
head -c 100000 "$model" >"$work/truncated.vitrt"
expect_exit 2 "truncated.vitrt" "truncated model is refused" -- "$bin/vitrt" run -m "$work/truncated.vitrt" --input "$cases/deit_tiny/input.npy" --output "$work/x.npy"
cp "$model" "$work/flipped.vitrt"
printf '\x01' | dd of="$work/flipped.vitrt" bs=1 seek=3000000 conv=notrunc status=none
expect_exit 2 "checksum mismatch" "bit-flipped model is refused" -- "$bin/vitrt" run -m "$work/flipped.vitrt" --input "$cases/deit_tiny/input.npy" --output "$work/x.npy"
expect_exit 2 "not a vitrt model" "a checkpoint passed as a model is refused" -- "$bin/vitrt" inspect "$cases/deit_tiny/model.pth"
expect_exit 2 "nope.vitrt" "a missing model file is reported" -- "$bin/vitrt" inspect "$work/nope.vitrt"

# 3. Bad checkpoints: missing and unexpected keys are listed; garbage is refused.
expect_exit 2 "blocks.1.attn.proj.weight" "checkpoint with a missing key" -- "$bin/vitrt-convert" "$cases/$(case_field deit_missing_key checkpoint)" -o "$work/m.vitrt"
expect_exit 2 "blocks.0.foo.weight" "checkpoint with an unexpected key" -- "$bin/vitrt-convert" "$cases/$(case_field deit_extra_key checkpoint)" -o "$work/m.vitrt"
head -c 5000 "$cases/deit_tiny/model.pth" >"$work/trunc.pth"
expect_exit 2 "trunc.pth" "truncated checkpoint" -- "$bin/vitrt-convert" "$work/trunc.pth" -o "$work/m.vitrt"
[ ! -e "$work/m.vitrt" ] && ok "no partial model file is left behind" || bad "a failed conversion left $work/m.vitrt"
expect_exit 1 "arch" "unknown --arch" -- "$bin/vitrt-convert" "$cases/deit_tiny/model.pth" -o "$work/m.vitrt" --arch resnet

# 4. Bad inputs.
"$py" -c "import numpy as np; np.save('$work/wrong.npy', np.zeros((1,3,32,32), np.float32))"
expect_exit 3 "expected float32 \[N,3,224,224\]" "wrong input shape" -- "$bin/vitrt" run -m "$model" --input "$work/wrong.npy" --output "$work/x.npy"
expect_exit 3 "missing.npy" "missing input file" -- "$bin/vitrt" run -m "$model" --input "$work/missing.npy" --output "$work/x.npy"
expect_exit 4 "cuda" "--backend cuda without a CUDA build or GPU" -- "$bin/vitrt" run -m "$model" --input "$cases/deit_tiny/input.npy" --output "$work/x.npy" --backend cuda

# 5. classify / preprocess on real image files.
"$py" - "$work" <<'PY'
import sys, numpy as np
from PIL import Image
w = sys.argv[1]
y, x = np.mgrid[0:300, 0:400]
img = np.stack([(x * 0.6) % 256, (y * 0.8) % 256, ((x + y) * 0.3) % 256], -1).astype(np.uint8)
Image.fromarray(img).save(f"{w}/a.png")
Image.fromarray(img[::-1]).save(f"{w}/b.jpg", quality=92)
open(f"{w}/broken.png", "wb").write(b"\x89PNG\r\n\x1a\n garbage")
PY
if "$bin/vitrt" classify -m "$model" "$work/a.png" "$work/b.jpg" -k 3 >"$work/out" 2>"$work/err" && grep -q "a.png" "$work/out" && [ "$(grep -c '^  [123]\.' "$work/out")" -eq 6 ]; then
  ok "classify prints top-3 for two images"
else
  bad "classify: $(cat "$work/out" "$work/err")"
fi
if "$bin/vitrt" classify -m "$model" "$work/a.png" --json -k 2 >"$work/out" 2>"$work/err" &&
   "$py" -c "import json; r=json.load(open('$work/out'))['results']; assert len(r)==1 and len(r[0]['top'])==2 and abs(sum(t['probability'] for t in r[0]['top']))<=1.0001"; then
  ok "classify --json is valid JSON"
else
  bad "classify --json: $(cat "$work/out" "$work/err")"
fi
expect_exit 3 "broken.png" "an unreadable image among good ones" -- "$bin/vitrt" classify -m "$model" "$work/a.png" "$work/broken.png"
grep -q "a.png" "$work/out" && ok "the good image is still classified" || bad "the good image's result was lost"
if "$bin/vitrt" preprocess -m "$model" "$work/a.png" --output "$work/p.npy" 2>"$work/err" &&
   "$py" -c "import numpy as np; a=np.load('$work/p.npy'); assert a.shape==(1,3,224,224) and a.dtype==np.float32"; then
  ok "preprocess writes [1,3,224,224] float32"
else
  bad "preprocess: $(cat "$work/err")"
fi

# 5b. `vitrt preprocess` on natural photos (python3-skimage's, copied into the image_cases fixture) equals PIL +
# torchvision's Resize(256|248, bicubic) / CenterCrop(224) / ToTensor / Normalize: within one uint8 level
# (1/255/std after normalisation) for every value.
images=$fixtures/image_cases
ckpt=$cases/$(case_field deit_tiny checkpoint)
for resize in 256 248; do
  "$bin/vitrt-convert" "$ckpt" -o "$work/pp$resize.vitrt" --resize $resize --crop 224 --interp bicubic >/dev/null 2>&1 ||
    bad "convert with --resize $resize"
  count=0
  while IFS=$'\t' read -r kind src rs cw ch filt chans mean std exp; do
    [ "$kind" = pipeline ] && [ "$rs" = "$resize" ] && [ "$filt" = bicubic ] && [ "$cw" = 224 ] || continue
    case "$src" in *skimage_*) ;; *) continue ;; esac
    count=$((count + 1))
    if "$bin/vitrt" preprocess -m "$work/pp$resize.vitrt" "$images/$src" --output "$work/pp.npy" 2>"$work/err" &&
       msg=$("$py" - "$work/pp.npy" "$images/$exp" "$std" <<'PY'
import sys, numpy as np
got, want = np.load(sys.argv[1])[0].astype(np.float64), np.load(sys.argv[2]).astype(np.float64)
std = np.array([float(v) for v in sys.argv[3].split(",")]).reshape(-1, 1, 1)
levels = np.abs(got - want) * std * 255.0
print(f"max difference {levels.max():.3g} uint8 levels")
sys.exit(0 if got.shape == want.shape and levels.max() <= 1.0 + 1e-3 else 1)
PY
); then
      ok "preprocess $(basename "$src") $resize->224 bicubic vs PIL: $msg"
    else
      bad "preprocess $(basename "$src") $resize->224: ${msg:-} $(cat "$work/err")"
    fi
  done <"$images/manifest.txt"
  [ "$count" -ge 4 ] || bad "only $count natural photos for $resize->224 (is python3-skimage installed?)"
done

# 6. inspect and bench.
if "$bin/vitrt" inspect "$model" --plan >"$work/out" 2>"$work/err" && grep -q "SoftmaxAttention" "$work/out" && grep -q "lower bound" "$work/out"; then
  ok "inspect --plan"
else
  bad "inspect --plan: $(cat "$work/err")"
fi
if "$bin/vitrt" inspect "$model" --plan --json >"$work/out" 2>"$work/err" &&
   "$py" -c "import json; d=json.load(open('$work/out')); assert d['plan']['activation_bytes'] >= d['plan']['activation_lower_bound'] > 0 and len(d['plan']['steps'])==d['plan']['ops'] <= d['ops']"; then
  ok "inspect --plan --json"
else
  bad "inspect --json: $(cat "$work/out" "$work/err" | head -c 600)"
fi
if "$bin/vitrt" bench -m "$work/deit_safetensors.vitrt" --batch 1,2 --repeat 2 --warmup 1 --json >"$work/out" 2>"$work/err" &&
   "$py" -c "import json; d=json.load(open('$work/out')); assert len(d['rows'])==2 and all(r['median_ms']>0 for r in d['rows'])"; then
  ok "bench --json"
else
  bad "bench: $(cat "$work/out" "$work/err" | head -c 600)"
fi
# --precision: bf16 runs (bf16 where the CPU has AVX512-BF16, else fp32 saying why); another value is a usage error.
if "$bin/vitrt" bench -m "$work/deit_safetensors.vitrt" --batch 1 --repeat 2 --warmup 1 --json --precision bf16 >"$work/out" 2>"$work/err" &&
   "$py" -c "import json; d=json.load(open('$work/out')); p=d['rows'][0]['precision']; assert p.startswith('bf16: ') or p.startswith('fp32: bf16 was asked for'), p" &&
   grep -q "vitrt: precision " "$work/err"; then
  ok "bench --precision bf16 ($(head -c 120 "$work/err"))"
else
  bad "bench --precision bf16: $(cat "$work/out" "$work/err" | head -c 600)"
fi
expect_exit 1 "unknown precision 'fp16' \\(expected fp32 or bf16\\)" "run --precision fp16 is a usage error" -- \
  "$bin/vitrt" run -m "$work/deit_safetensors.vitrt" -i "$cases/deit_safetensors/input.npy" -o "$work/p.npy" --precision fp16
expect_exit 1 "" "no subcommand is a usage error" -- "$bin/vitrt"

# 7. The shipped models (trained on Fashion-MNIST) convert with no options but their labels (image size and
# preprocessing come from the checkpoint's args) and classify the bundled samples as PyTorch does
# (models/fashion_*/expected.txt: top-3 labels and probabilities through the same PIL pipeline).
src=$(cd "$(dirname "$0")/../.." && pwd)
for dir in "$src"/models/fashion_*; do
  name=$(basename "$dir")
  [ -f "$dir/expected.txt" ] || continue
  if ! "$bin/vitrt-convert" "$dir/$name.pth" -o "$work/$name.vitrt" --labels "$dir/labels.txt" >/dev/null 2>"$work/err"; then
    bad "convert shipped $name: $(cat "$work/err")"
    continue
  fi
  for backend in ref cpu; do
    if "$bin/vitrt" classify -m "$work/$name.vitrt" "$src/samples/fashion" -k 3 --json --backend $backend >"$work/out" 2>"$work/err" &&
       msg=$("$py" - "$work/out" "$dir/expected.txt" <<'PY'
import json, os, sys
got = {os.path.basename(r["image"]): r["top"] for r in json.load(open(sys.argv[1]))["results"]}
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[2]) if not l.startswith("#")]
worst = 0.0
for r in rows:
    top = got[r[0]]
    for k in range(3):
        assert top[k]["label"] == r[2 + 2 * k], f"{r[0]}: top-{k + 1} {top[k]['label']} != {r[2 + 2 * k]}"
        worst = max(worst, abs(top[k]["probability"] - float(r[3 + 2 * k])))
assert len(rows) == len(got) and worst <= 2e-4, f"{len(rows)} expected, {len(got)} got, max prob diff {worst}"
print(f"{len(rows)} images, top-3 labels equal, max probability difference {worst:.1e}")
PY
); then
      ok "shipped $name on $backend: $msg"
    else
      bad "shipped $name on $backend: ${msg:-} $(head -c 400 "$work/err")"
    fi
  done
done

# 8. --emit primitive: attention written as PyTorch's plain ops. The planner's fuse_attention pass must find
# every attention again, so the plan (each step, arena, offset and lifetime at batch 1 and 8) is the fused
# model's, and the logits are the same bytes; with the pass switched off the plain ops run and agree closely.
for dir in "$src"/models/fashion_*; do
  name=$(basename "$dir")
  if ! "$bin/vitrt-convert" "$dir/$name.pth" -o "$work/$name.fused.vitrt" >/dev/null 2>"$work/err" ||
     ! "$bin/vitrt-convert" "$dir/$name.pth" -o "$work/$name.prim.vitrt" --emit primitive >/dev/null 2>"$work/err"; then
    bad "convert $name --emit primitive: $(cat "$work/err")"
    continue
  fi
  plans_equal=1
  for b in 1 8; do
    for v in fused prim; do
      "$bin/vitrt" inspect --plan --batch $b "$work/$name.$v.vitrt" 2>&1 |
        sed -n '/^plan (/,$p' >"$work/$v.plan"
    done
    [ -s "$work/fused.plan" ] && cmp -s "$work/fused.plan" "$work/prim.plan" || plans_equal=0
  done
  fused_ops=$("$bin/vitrt" inspect "$work/$name.prim.vitrt" 2>&1 | grep -c 'MatMul×' || true)
  if [ "$plans_equal" = 1 ] && [ "$fused_ops" = 1 ]; then
    ok "$name --emit primitive: plain ops (MatMul, Softmax, ...) in the file, plan identical to the fused model at batch 1 and 8"
  else
    bad "$name --emit primitive: plans differ or no plain ops in the file; diff: $(diff "$work/fused.plan" "$work/prim.plan" | head -c 600)"
  fi
  side=$("$bin/vitrt" inspect "$work/$name.fused.vitrt" | sed -n 's/.*input  *\[B,3,\([0-9]*\),.*/\1/p')
  "$py" -c "import numpy as np; np.save('$work/x.npy', np.random.default_rng(7).standard_normal((3, 3, $side, $side)).astype(np.float32))"
  for backend in ref cpu; do
    "$bin/vitrt" run -m "$work/$name.fused.vitrt" -i "$work/x.npy" -o "$work/f.npy" -b $backend -t 2 --batch 3 2>"$work/err" &&
      "$bin/vitrt" run -m "$work/$name.prim.vitrt" -i "$work/x.npy" -o "$work/p.npy" -b $backend -t 2 --batch 3 2>>"$work/err" &&
      "$bin/vitrt" run -m "$work/$name.prim.vitrt" -i "$work/x.npy" -o "$work/u.npy" -b $backend -t 2 --batch 3 \
        --disable-pass fuse_attention 2>>"$work/err"
    if [ $? -eq 0 ] && cmp -s "$work/f.npy" "$work/p.npy" && msg=$("$py" - "$work/f.npy" "$work/u.npy" <<'PY'
import sys, numpy as np
f, u = np.load(sys.argv[1]), np.load(sys.argv[2])
rel = float(np.abs(f - u).max() / np.abs(f).max())
assert rel < 1e-5 and (f.argmax(1) == u.argmax(1)).all(), f"unfused plain ops differ: rel {rel:.3g}"
print(f"unfused plain ops within {rel:.1e} relative")
PY
); then
      ok "$name primitive == fused logits (identical bytes) on $backend; $msg"
    else
      bad "$name primitive vs fused logits on $backend: ${msg:-} $(head -c 400 "$work/err")"
    fi
  done
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
