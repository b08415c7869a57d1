#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Hostile inputs through `vitrt`: .npy tensors and PNG/JPEG images whose headers declare far more than the file
# holds (run under a memory limit, so allocating for the declared size fails the test), inputs that are not
# regular files (a FIFO would block, /dev/zero never ends), directory trees with symlink loops, an extreme aspect
# ratio, and out-of-range flags. Usage: cli_inputs.sh BUILD_DIR [FIXTURE_DIR]
set -u
build=$1
source "$(dirname "$0")/cli_lib.sh"
src=${VITRT_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
py=${VITRT_PYTHON:-/usr/bin/python3}

# Memory cap (virtual, KiB) for the commands that must not allocate what a crafted header declares: 600 MB on top
# of what the shared libraries map (cli_lib.sh); a normal classify of a small model needs far less.
libs_kib=$(shared_libs_kib "$bin/vitrt")
mem_cap=$((600000 + libs_kib))
capped=(bash -c "ulimit -v $mem_cap && exec \"\$@\"" capped)
sanitized && capped=(bash -c 'exec "$@"' capped)  # cli_lib.sh: no address-space caps under ASan

model=$work/deit.vitrt
if ! "$bin/vitrt-convert" "$src/models/fashion_deit/fashion_deit.pth" -o "$model" \
  --labels "$src/models/fashion_deit/labels.txt" >"$work/err" 2>&1; then
  bad "cannot convert the fashion_deit checkpoint: $(head -c 400 "$work/err")"
  finish
  exit 1
fi
sample=$src/samples/fashion/000_ankle_boot.png

"$py" - "$work" <<'PY'
import struct, sys, zlib, io
import numpy as np
from PIL import Image
w = sys.argv[1]
def npy(path, shape, data_bytes, descr='<f4'):
    h = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    h += ' ' * (63 - (10 + len(h)) % 64) + '\n'
    open(path, 'wb').write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h.encode() + b'\0' * data_bytes)
npy(w + '/big.npy', '(1000000, 3, 32, 32)', 12288)
npy(w + '/huge.npy', '(1099511627776,)', 0)
np.save(w + '/ok.npy', np.zeros((1, 3, 32, 32), np.float32))
open(w + '/trailing.npy', 'wb').write(open(w + '/ok.npy', 'rb').read() + b'\0\0\0\0')
def chunk(t, d): return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))
def png(width, height, depth, ctype, idat):
    return (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', width, height, depth, ctype, 0, 0, 0)) +
            chunk(b'IDAT', idat) + chunk(b'IEND', b''))
open(w + '/bomb.png', 'wb').write(png(13000, 13000, 16, 6, zlib.compress(b'')))
# A valid 1x1,000,000 gray PNG (PIL opens it).
open(w + '/tall.png', 'wb').write(png(1, 1000000, 8, 0, zlib.compress(b'\0\x80' * 1000000, 9)))
# A valid 8x8 JPEG whose frame header is patched to 13000x13000.
buf = io.BytesIO()
Image.new('L', (8, 8), 100).save(buf, 'JPEG')
j = bytearray(buf.getvalue())
k = j.index(b'\xff\xc0')
j[k + 5:k + 9] = struct.pack('>HH', 13000, 13000)
open(w + '/bomb.jpg', 'wb').write(bytes(j))
# A progressive JPEG whose first scan is repeated 1001 times (libjpeg only warns about the repeats): each scan
# is a pass over the whole image, so a large image with thousands of scans is a denial of service.
buf = io.BytesIO()
Image.new('RGB', (64, 64), (10, 200, 30)).save(buf, 'JPEG', progressive=True)
j = buf.getvalue()
a = j.index(b'\xff\xda')
k = a + 2 + int.from_bytes(j[a + 2:a + 4], 'big')
while j[j.index(b'\xff', k) + 1] == 0 or 0xd0 <= j[j.index(b'\xff', k) + 1] <= 0xd7:
    k = j.index(b'\xff', k) + 2
k = j.index(b'\xff', k)
open(w + '/scans.jpg', 'wb').write(j[:k] + j[a:k] * 1001 + j[k:])
# A valid 9000x9000 gray PNG of ~80 KB: decoding it needs ~243 MB for the RGB image.
row = b'\0' + b'\x80' * 9000
open(w + '/large.png', 'wb').write(png(9000, 9000, 8, 0, zlib.compress(row * 9000, 9)))
PY

# 1. Declared sizes are checked against the file before anything is allocated.
expect_exit 3 "big.npy.*truncated.*\(1000000, 3, 32, 32\)" "12 KB .npy declaring 1,000,000 images (memory-capped)" -- \
  "${capped[@]}" "$bin/vitrt" run -m "$model" -i "$work/big.npy" -o "$work/o.npy"
expect_exit 3 "huge.npy.*\(1099511627776,\)" "2^40-element .npy is a bad input naming the shape, not bad_alloc" -- \
  "${capped[@]}" "$bin/vitrt" run -m "$model" -i "$work/huge.npy" -o "$work/o.npy"
expect_exit 3 "trailing.npy.*4 bytes follow" ".npy with bytes after its declared data" -- \
  "$bin/vitrt" run -m "$model" -i "$work/trailing.npy" -o "$work/o.npy"
if "$bin/vitrt" run -m "$model" -i "$work/ok.npy" -o "$work/o.npy" 2>"$work/err"; then
  ok "a valid .npy still runs"
else
  bad "a valid .npy: $(head -c 400 "$work/err")"
fi
expect_exit 3 "bomb.png.*13000x13000" "69-byte PNG declaring 13000x13000 RGBA16 (memory-capped)" -- \
  "${capped[@]}" "$bin/vitrt" preprocess -m "$model" "$work/bomb.png" -o "$work/o.npy"
expect_exit 3 "bomb.jpg.*13000x13000" "small JPEG declaring 13000x13000 (memory-capped)" -- \
  "${capped[@]}" "$bin/vitrt" preprocess -m "$model" "$work/bomb.jpg" -o "$work/o.npy"
expect_exit 3 "scans.jpg.*more than 1000 scans" "progressive JPEG with 1002 scans" -- \
  "$bin/vitrt" preprocess -m "$model" "$work/scans.jpg" -o "$work/o.npy"
# An allocation that fails while decoding a valid image is the input's error (3), never "internal error" (4).
if sanitized; then
  echo "skip decoding that runs out of memory (needs an address-space cap, which ASan cannot run under)"
else
  expect_exit 3 "large.png.*cannot allocate" "decoding that runs out of memory is a bad input" -- \
    bash -c "ulimit -v $((200000 + libs_kib)) && exec \"\$@\"" capped "$bin/vitrt" preprocess -m "$model" "$work/large.png" -o "$work/o.npy"
fi

# 2. Inputs that are not regular files are refused without blocking or reading forever.
mkfifo "$work/fifo.png" "$work/fifo.npy"
expect_exit 3 "fifo.png.*FIFO" "a FIFO given as an image" -- "$bin/vitrt" classify -m "$model" "$work/fifo.png"
expect_exit 3 "fifo.npy.*FIFO" "a FIFO given as --input" -- "$bin/vitrt" run -m "$model" -i "$work/fifo.npy" -o "$work/o.npy"
expect_exit 3 "/dev/zero.*character device" "/dev/zero given as an image" -- \
  "${capped[@]}" "$bin/vitrt" classify -m "$model" /dev/zero
expect_exit 3 "/dev/zero.*character device" "/dev/zero given as --input" -- \
  "${capped[@]}" "$bin/vitrt" run -m "$model" -i /dev/zero -o "$work/o.npy"

# 3. Directory walks: symlink loops neither hang nor repeat an image; depth is bounded.
mkdir -p "$work/loop2" "$work/loop1"
cp "$sample" "$work/loop2/a.png"
cp "$sample" "$work/loop1/a.png"
ln -s . "$work/loop2/x"
ln -s . "$work/loop2/y"
ln -s . "$work/loop1/x"
ln -s a.png "$work/loop1/same.png"
expect_exit 0 "not following" "two '-> .' links: no hang (memory-capped)" -- "${capped[@]}" "$bin/vitrt" classify -m "$model" "$work/loop2"
n=$(grep -c '^ *1\. ' "$work/out")
[ "$n" = 1 ] && ok "two '-> .' links: the image is classified once" || bad "two '-> .' links: classified $n times"
expect_exit 0 "" "one '-> .' link and a file symlink" -- "$bin/vitrt" classify -m "$model" "$work/loop1"
n=$(grep -c '^ *1\. ' "$work/out")
[ "$n" = 1 ] && ok "one '-> .' link and a file symlink: the image is classified once" ||
  bad "one '-> .' link and a file symlink: classified $n times"
expect_exit 0 "" "the same file named twice on the command line" -- \
  "$bin/vitrt" classify -m "$model" "$work/loop1/a.png" "$work/loop1/a.png"
n=$(grep -c '^ *1\. ' "$work/out")
[ "$n" = 1 ] && ok "the same file named twice is classified once" || bad "the same file named twice: classified $n times"
deep=$work/deep
for i in $(seq 70); do deep=$deep/d; done
mkdir -p "$deep" && cp "$sample" "$deep/a.png"
expect_exit 3 "levels deep" "a directory tree 70 levels deep" -- "$bin/vitrt" classify -m "$model" "$work/deep"
# eval: a class folder that is a symlink to DIR itself would relabel every image of every class.
mkdir -p "$work/ev/Bag" "$work/ev/Trouser"
cp "$sample" "$work/ev/Bag/a.png"
cp "$sample" "$work/ev/Trouser/b.png"
ln -s . "$work/ev/Sneaker"
expect_exit 0 "not following" "eval with a class folder linked to DIR" -- "$bin/vitrt" eval -m "$model" "$work/ev"
grep -Eq '^images +2 ' "$work/out" && ok "eval counts each image once" || bad "eval: $(head -c 200 "$work/out")"

# 4. Extreme aspect ratio: a clean bad input naming the image and the sizes, not a usage error.
expect_exit 3 "tall.png.*1x1000000" "preprocess of a valid 1x1,000,000 PNG" -- \
  "${capped[@]}" "$bin/vitrt" preprocess -m "$model" "$work/tall.png" -o "$work/o.npy"

# 5. Out-of-range flags are usage errors naming the flag.
expect_exit 1 "--batch" "classify --batch 0" -- "$bin/vitrt" classify -m "$model" --batch 0 "$sample"
expect_exit 1 "--threads" "classify --threads -1" -- "$bin/vitrt" classify -m "$model" --threads -1 "$sample"
expect_exit 1 "--top-k" "classify -k 0" -- "$bin/vitrt" classify -m "$model" -k 0 "$sample"
expect_exit 1 "--batch" "bench --batch 0" -- "$bin/vitrt" bench -m "$model" --batch 0 -r 1
expect_exit 1 "--threads" "bench --threads -1" -- "$bin/vitrt" bench -m "$model" --threads 1,-1 -r 1
expect_exit 1 "--limit" "eval --limit -1" -- "$bin/vitrt" eval -m "$model" --limit -1 "$work/ev"
expect_exit 1 "--batch" "run --batch 0" -- "$bin/vitrt" run -m "$model" --batch 0 -i "$work/ok.npy" -o "$work/o.npy"

finish
