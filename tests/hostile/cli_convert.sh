#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Hostile inputs through vitrt-convert: output paths that must not be replaced or written through, checkpoints
# whose headers claim far more memory than the file holds, flags and weights that used to be accepted silently,
# and labels files that are not small regular files. Inputs are made here (bash, and Python with torch for the
# checkpoints, edited copies of the shipped models/fashion_* checkpoints).
build=$1
source "$(dirname "$0")/cli_lib.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)
py=${VITRT_PYTHON:-/usr/bin/python3}
conv=$bin/vitrt-convert
deit=$src/models/fashion_deit/fashion_deit.pth
labels=$src/models/fashion_deit/labels.txt
# "${limited[@]}" KB command...: runs the command with at most KB kilobytes of address space, so a reader that
# allocates what a header claims fails instead of taking the machine's memory.
limited=(bash -c 'ulimit -v "$0" && exec "$@"')
sanitized && limited=(bash -c 'exec "$@"')  # cli_lib.sh: no address-space caps under ASan

# 1. The output path. A fixed OUT.tmp was opened with fopen (following a planted symlink) and renamed over
#    whatever OUT was; a model that failed verification was left in place.
mkdir "$work/dst"
echo precious >"$work/victim"
ln -s "$work/victim" "$work/dst/m.vitrt.tmp"
if "$conv" "$deit" -o "$work/dst/m.vitrt" >/dev/null 2>"$work/err" && [ "$(cat "$work/victim")" = precious ] &&
   [ -L "$work/dst/m.vitrt.tmp" ]; then
  ok "a planted OUT.tmp symlink is neither followed nor removed"
else
  bad "planted OUT.tmp symlink: victim now '$(head -c 80 "$work/victim")', $(cat "$work/err")"
fi
left=$(find "$work/dst" -mindepth 1 ! -name m.vitrt ! -name m.vitrt.tmp | head -3)
[ -z "$left" ] && ok "no temporary left after a successful write" || bad "temporaries left behind: $left"
mode=$( (umask 027 && "$conv" "$deit" -o "$work/dst/umask.vitrt" >/dev/null 2>&1) && stat -c %a "$work/dst/umask.vitrt")
[ "$mode" = 640 ] && ok "the model's mode follows the umask (027 -> 640)" || bad "mode with umask 027: '$mode'"

mkfifo "$work/dst/fifo"
expect_exit 1 "FIFO" "an output that is a FIFO is refused" -- "$conv" "$deit" -o "$work/dst/fifo"
[ -p "$work/dst/fifo" ] && ok "the FIFO is still a FIFO" || bad "the FIFO was replaced"
ln -s "$work/victim" "$work/dst/link"
expect_exit 1 "symbolic link" "an output that is a symlink is refused" -- "$conv" "$deit" -o "$work/dst/link"
[ -L "$work/dst/link" ] && [ "$(cat "$work/victim")" = precious ] && ok "the symlink and its target are untouched" ||
  bad "the symlink or its target changed"
if mknod "$work/dst/null" c 1 3 2>/dev/null; then
  expect_exit 1 "character device" "an output that is a device node is refused" -- "$conv" "$deit" -o "$work/dst/null"
  [ -c "$work/dst/null" ] && ok "the device node is still there" || bad "the device node was replaced"
fi
expect_exit 1 "directory" "an output that is a directory is refused" -- "$conv" "$deit" -o "$work/dst"
cp "$deit" "$work/self.pth"  # a copy: the code before this check wrote the model over its checkpoint
expect_exit 1 "checkpoint itself" "the checkpoint as its own output is refused" -- \
  "$conv" "$work/self.pth" -o "$work/self.pth"
cmp -s "$deit" "$work/self.pth" && ok "the checkpoint is untouched" || bad "the checkpoint was overwritten"

# 1b. ONNX external data sized by the file's header: a [65536, 65536] float tensor (16 GiB) whose external file
#     holds 48 bytes. The importer sized the tensor's values before checking the file (a 16 GiB allocation and
#     zero fill; under this cap: "out of memory"); it is refused by what the file holds. Python's onnx writes it.
if "$py" -c "import onnx" 2>/dev/null; then
  mkdir "$work/ext"
  "$py" - "$work/ext" <<'EOF' 2>"$work/err"
import os, sys
import onnx
from onnx import TensorProto, helper
d = sys.argv[1]
w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[65536, 65536], data_location=TensorProto.EXTERNAL)
for k, v in (("location", "w.bin"), ("offset", "0")):
    e = w.external_data.add()
    e.key, e.value = k, v
g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 65536])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=[w])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
open(os.path.join(d, "huge_external.onnx"), "wb").write(m.SerializeToString())
open(os.path.join(d, "w.bin"), "wb").write(bytes(48))
EOF
  expect_exit 2 "initializer 'w': external data \[0, \+17179869184\) lies outside 'w.bin' \(48 bytes\)" \
    "ONNX external data of 16 GiB declared over a 48-byte file is refused before allocating" -- \
    "${limited[@]}" 1048576 "$conv" "$work/ext/huge_external.onnx" -o "$work/m.vitrt"
else
  ok "SKIPPED the ONNX external-data case: no Python with onnx at $py"
fi

# 2-4. Crafted checkpoints (Python with torch writes them; skipped without it).
if ! "$py" -c "import torch" 2>/dev/null; then
  ok "SKIPPED the crafted-checkpoint cases: no Python with torch at $py"
  finish
  exit
fi
cat >"$work/gen.py" <<'EOF'
import collections, io, pickle, struct, sys, zipfile
import torch
out, deit, soft = sys.argv[1:4]

class Storage:
    def __init__(self, key, numel): self.key, self.numel = key, numel

class View:  # pickles as torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...), as torch.save does
    def __init__(self, storage, offset, size, stride): self.a = (storage, offset, tuple(size), tuple(stride))
    def __reduce__(self): return (torch._utils._rebuild_tensor_v2, self.a + (False, collections.OrderedDict()))

class P(pickle.Pickler):
    def persistent_id(self, obj):
        return ('storage', torch.FloatStorage, obj.key, 'cpu', obj.numel) if isinstance(obj, Storage) else None

def torch_zip(path, tensors, entries, method=zipfile.ZIP_STORED):
    buf = io.BytesIO()
    P(buf, protocol=2).dump(collections.OrderedDict(tensors))
    with zipfile.ZipFile(path, 'w', method) as z:
        z.writestr('archive/data.pkl', buf.getvalue())
        z.writestr('archive/byteorder', 'little')
        for key, chunks in entries.items():
            with z.open('archive/data/' + key, 'w', force_zip64=True) as f:
                for c in chunks: f.write(c)

# One stored float viewed with stride 0 as 2^30 elements (4 GiB of float32) in a ~550-byte file.
torch_zip(f'{out}/stride0.pth', [('w', View(Storage('0', 1), 0, [1 << 30], [0]))], {'0': [b'\0' * 4]})
# 256 MiB of zeros deflated to ~256 KB: a tensor over all of it, and one over its first 16 floats only.
big, zeros = Storage('0', 1 << 26), b'\0' * (1 << 20)
torch_zip(f'{out}/bomb_all.pth', [('w', View(big, 0, [1 << 26], [1]))], {'0': [zeros] * 256}, zipfile.ZIP_DEFLATED)
torch_zip(f'{out}/bomb_head.pth', [('w', View(big, 0, [16], [1]))], {'0': [zeros] * 256}, zipfile.ZIP_DEFLATED)

def safetensors(path, header, data=b''):
    with open(path, 'wb') as f: f.write(struct.pack('<Q', len(header)) + header + data)
safetensors(f'{out}/nested.safetensors', b'{"a":' + b'[' * 5_000_000 + b']' * 5_000_000 + b'}')
safetensors(f'{out}/longheader.safetensors', b'{' + b' ' * (17 << 20) + b'}')

def edit(src, dst, fn):
    ck = torch.load(src, map_location='cpu')
    fn(ck['model'], ck['args'])
    torch.save(ck, dst)
edit(deit, f'{out}/int64.pth', lambda sd, a: sd.__setitem__('head.bias', sd['head.bias'].long()))
edit(deit, f'{out}/bool.pth', lambda sd, a: sd.__setitem__('norm.weight', sd['norm.weight'] > 0))
edit(deit, f'{out}/nan.pth', lambda sd, a: sd['head.weight'][0].__setitem__(3, float('nan')))
edit(soft, f'{out}/inf.pth', lambda sd, a: sd['patch_embed1.proj.1.running_var'].__setitem__(1, float('inf')))
edit(deit, f'{out}/crop_pct.pth', lambda sd, a: a.__setitem__('crop_pct', 1e-30))
edit(deit, f'{out}/mean_nan.pth', lambda sd, a: a.__setitem__('mean', (float('nan'), 0.5, 0.5)))
EOF
if ! "$py" "$work/gen.py" "$work" "$deit" "$src/models/fashion_soft/fashion_soft.pth" 2>"$work/err"; then
  bad "making the crafted checkpoints: $(tail -c 400 "$work/err")"
  finish
  exit
fi

# 2. Memory sized by untrusted headers: refused with a message, within a small address space.
expect_exit 2 "stride-0 view.*limit|limit.*stride-0" "a 550-byte stride-0 checkpoint is not expanded to 4 GiB" -- \
  "${limited[@]}" 1048576 "$conv" "$work/stride0.pth" -o "$work/m.vitrt"
expect_exit 2 "exceeds the [0-9]+-byte limit" "a 256 KB zip bomb is refused before inflating 256 MiB" -- \
  "${limited[@]}" 1048576 "$conv" "$work/bomb_all.pth" -o "$work/m.vitrt"
expect_exit 2 "cannot tell the architecture" "a 16-float view of the bomb inflates 64 bytes, not 256 MiB" -- \
  "${limited[@]}" 131072 "$conv" "$work/bomb_head.pth" -o "$work/m.vitrt"
expect_exit 2 "nests deeper than 3" "a deeply nested safetensors header is refused before parsing" -- \
  "${limited[@]}" 1048576 "$conv" "$work/nested.safetensors" -o "$work/m.vitrt"
expect_exit 2 "16 MiB limit" "a safetensors header over 16 MiB is refused" -- \
  "$conv" "$work/longheader.safetensors" -o "$work/m.vitrt"
mkfifo "$work/fifo.pth"
expect_exit 2 "FIFO" "a checkpoint that is a FIFO is refused without blocking" -- "$conv" "$work/fifo.pth" -o "$work/m.vitrt"
expect_exit 3 "character device" "--labels /dev/zero is refused, not read without end" -- \
  "${limited[@]}" 1048576 "$conv" "$deit" -o "$work/m.vitrt" --labels /dev/zero
expect_exit 3 "FIFO" "--labels FIFO is refused without blocking" -- "$conv" "$deit" -o "$work/m.vitrt" --labels "$work/fifo.pth"
head -c $((17 << 20)) /dev/zero | tr '\0' 'a' >"$work/huge_labels.txt"
expect_exit 3 "16 MiB limit" "a labels file over 16 MiB is refused" -- \
  "$conv" "$deit" -o "$work/m.vitrt" --labels "$work/huge_labels.txt"
{ head -9 "$labels"; head -c 5000 /dev/zero | tr '\0' 'b'; echo; } >"$work/long_line.txt"
expect_exit 3 "line 10 has 5000 bytes" "a 5000-byte label is refused" -- \
  "$conv" "$deit" -o "$work/m.vitrt" --labels "$work/long_line.txt"

# 3. Flags and weights accepted silently before.
for flag in --image-size --resize --crop; do
  for value in 0 -3 100000; do
    expect_exit 1 "$flag" "$flag $value is a usage error" -- "$conv" "$deit" -o "$work/m.vitrt" "$flag" "$value"
  done
done
expect_exit 1 "--mean" "--mean nan is a usage error" -- "$conv" "$deit" -o "$work/m.vitrt" --mean nan
expect_exit 1 "--std" "--std inf is a usage error" -- "$conv" "$deit" -o "$work/m.vitrt" --std inf
expect_exit 1 "--std" "--std 0.5,0,0.5 is a usage error" -- "$conv" "$deit" -o "$work/m.vitrt" --std 0.5,0,0.5
expect_exit 2 "'head.bias' has dtype int64" "an int64 weight is refused" -- "$conv" "$work/int64.pth" -o "$work/m.vitrt"
expect_exit 2 "'norm.weight' has dtype bool" "a bool weight is refused" -- "$conv" "$work/bool.pth" -o "$work/m.vitrt"
expect_exit 2 "'head.weight' holds NaN at element 3" "a NaN weight is refused" -- "$conv" "$work/nan.pth" -o "$work/m.vitrt"
expect_exit 2 "'patch_embed1.proj.1.running_var' holds an infinity at element 1" "an Inf BatchNorm statistic is refused" -- \
  "$conv" "$work/inf.pth" -o "$work/m.vitrt"
head -5 "$labels" >"$work/five.txt"
expect_exit 3 "five.txt' has 5 labels .* 10 classes" "a labels file with 5 lines for 10 classes is refused" -- \
  "$conv" "$deit" -o "$work/m.vitrt" --labels "$work/five.txt"
{ cat "$labels"; echo extra; } >"$work/eleven.txt"
expect_exit 3 "has 11 labels .* 10 classes" "a labels file with 11 lines for 10 classes is refused" -- \
  "$conv" "$deit" -o "$work/m.vitrt" --labels "$work/eleven.txt"

# 4. The checkpoint's own args: a crop_pct that would overflow the resize, a NaN mean.
expect_exit 2 "crop_pct" "a checkpoint's crop_pct of 1e-30 is refused" -- "$conv" "$work/crop_pct.pth" -o "$work/m.vitrt"
expect_exit 0 "architecture" "... unless --resize overrides it" -- "$conv" "$work/crop_pct.pth" -o "$work/m.vitrt" --resize 36
expect_exit 2 "mean = 'nan" "a checkpoint's NaN mean is refused" -- "$conv" "$work/mean_nan.pth" -o "$work/m.vitrt"
expect_exit 0 "architecture" "... unless --mean overrides it" -- "$conv" "$work/mean_nan.pth" -o "$work/m.vitrt" --mean 0.5
[ -z "$(find "$work" -name '*.tmp' ! -name m.vitrt.tmp)" ] && ok "no temporary left by any failure" ||
  bad "temporaries left: $(find "$work" -name '*.tmp')"
finish
