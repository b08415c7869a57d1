#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Copyright the vitrt authors.
"""Image test fixtures: files in many PNG/JPEG flavours plus what PIL 9.4 (Debian's python3-pil) and
torchvision make of them. Run by ctest (fixture `image_cases`):

    /usr/bin/python3 tools/reference/make_image_cases.py --out build/fixtures/image_cases

Writes into DIR:
  src/*.png, src/*.jpg   test images (synthetic: smooth gradients + noise + edges; plus skimage's photos when the
                         Debian package python3-skimage is installed)
  bad/*                  corrupt files (truncated PNG/JPEG, random bytes, empty file, bad CRC, header only)
  exp/*.npy              expected results: uint8 HWC / HW arrays for decode, convert('L') and resize, float32 CHW
                         for the full pipelines
  manifest.txt           one case per line, tab-separated (paths relative to DIR):
      decode   SRC EXPECTED                                    Image.open(SRC).convert('RGB')
      gray     SRC EXPECTED                                    Image.open(SRC).convert('RGB').convert('L')
      resize   SRC MODE W H FILTER EXPECTED                    Image.open(SRC).convert(MODE).resize((W, H), F)
      pipeline SRC RESIZE CROP_W CROP_H FILTER CHANNELS MEAN STD EXPECTED   (MEAN/STD comma-separated)
      corrupt  FILE                                            must fail to decode
Pipelines use torchvision's Resize(int)/CenterCrop/ToTensor/Normalize when torchvision is importable, otherwise
the same steps written with PIL + numpy float32 in torchvision's order (this script documents both).
Deterministic: a fixed seed, no timestamps.
"""
import argparse
import glob
import io
import os
import struct
import sys
import zlib

import numpy as np
from PIL import Image

try:
    import torchvision.transforms as T  # noqa: F401
    HAVE_TV = True
except Exception:  # torchvision is optional
    HAVE_TV = False

FILTERS = {"bilinear": Image.BILINEAR, "bicubic": Image.BICUBIC, "nearest": Image.NEAREST}
IMAGENET = ((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))


def natural(rng, w, h, channels=3):
    """Smooth gradients + texture noise + hard edges + a few saturated regions, uint8 HxWxC."""
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    out = np.empty((h, w, channels), np.float64)
    for c in range(channels):
        fx, fy, ph = rng.uniform(0.5, 3.0), rng.uniform(0.5, 3.0), rng.uniform(0, 6.28)
        base = 128 + 90 * np.sin(2 * np.pi * fx * x / w + ph) * np.cos(2 * np.pi * fy * y / h)
        base += 40 * (x / max(w - 1, 1) - 0.5) * (c - 1)
        out[..., c] = base
    out += rng.normal(0, 12, out.shape)
    for _ in range(6):  # rectangles and discs with sharp edges
        x0, y0 = rng.integers(0, w), rng.integers(0, h)
        rw, rh = rng.integers(1, max(2, w // 3)), rng.integers(1, max(2, h // 3))
        col = rng.choice([0, 255, rng.integers(0, 256)], size=channels)
        if rng.random() < 0.5:
            out[y0:y0 + rh, x0:x0 + rw] = col
        else:
            mask = (x - x0) ** 2 + (y - y0) ** 2 < (min(rw, rh)) ** 2
            out[mask] = col
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def png_chunk(tag, data):
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)


def write_png_raw(path, arr, bit_depth, color_type, interlace=False):
    """A minimal PNG writer for what PIL cannot save: 16-bit RGB/RGBA/LA, 2-bit gray, Adam7 interlacing.
    arr: HxW or HxWxC of integer samples already in range for bit_depth."""
    arr = np.asarray(arr)
    h, w = arr.shape[:2]
    chans = 1 if arr.ndim == 2 else arr.shape[2]

    def pack_rows(a):
        rows = []
        for r in a.reshape(a.shape[0], -1):
            if bit_depth == 16:
                b = r.astype(">u2").tobytes()
            elif bit_depth == 8:
                b = r.astype(np.uint8).tobytes()
            else:  # 1/2/4-bit, MSB first
                per = 8 // bit_depth
                r = np.concatenate([r, np.zeros((-len(r)) % per, r.dtype)]).reshape(-1, per)
                vals = np.zeros(len(r), np.int64)
                for i in range(per):
                    vals |= r[:, i].astype(np.int64) << (8 - bit_depth * (i + 1))
                b = vals.astype(np.uint8).tobytes()
            rows.append(b"\x00" + b)
        return b"".join(rows)

    a = arr.reshape(h, w, chans)
    if interlace:
        raw = b""
        for x0, y0, dx, dy in ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2),
                               (0, 1, 1, 2)):
            sub = a[y0::dy, x0::dx]
            if sub.shape[0] and sub.shape[1]:
                raw += pack_rows(sub)
    else:
        raw = pack_rows(a)
    ihdr = struct.pack(">IIBBBBB", w, h, bit_depth, color_type, 0, 0, 1 if interlace else 0)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + png_chunk(b"IDAT", zlib.compress(raw, 9))
                + png_chunk(b"IEND", b""))


def make_sources(out, rng):
    """Returns a dict name -> relative path of every decodable test image."""
    src = {}
    d = os.path.join(out, "src")
    os.makedirs(d, exist_ok=True)

    def save(name, im, **kw):
        im.save(os.path.join(d, name), **kw)
        src[name] = "src/" + name

    save("rgb_333x251.png", Image.fromarray(natural(rng, 333, 251)))
    save("rgb_180x320.png", Image.fromarray(natural(rng, 180, 320)))
    save("rgb_17x9.png", Image.fromarray(natural(rng, 17, 9)))
    save("rgb_256x256.png", Image.fromarray(natural(rng, 256, 256)))
    save("rgba_200x150.png", Image.fromarray(np.dstack([natural(rng, 200, 150), natural(rng, 200, 150, 1)]),
                                             "RGBA"))
    save("l_257x129.png", Image.fromarray(natural(rng, 257, 129, 1)[..., 0], "L"))
    save("la_64x80.png", Image.fromarray(natural(rng, 64, 80, 2), "LA"))
    pal = Image.fromarray(natural(rng, 120, 90)).quantize(200)
    save("p_120x90_trns.png", pal, transparency=3)
    pal16 = Image.fromarray(natural(rng, 33, 21)).quantize(16)
    save("p4_33x21.png", pal16, bits=4)
    save("bw_31x17.png", Image.fromarray(natural(rng, 31, 17, 1)[..., 0] > 128))

    def raw(name, arr, depth, ctype, interlace=False):
        write_png_raw(os.path.join(d, name), arr, depth, ctype, interlace)
        src[name] = "src/" + name

    wide = lambda a: a.astype(np.uint16) * 257 + rng.integers(0, 257, a.shape).astype(np.uint16)  # noqa: E731
    raw("rgb16_97x61.png", wide(natural(rng, 97, 61)), 16, 2)
    raw("rgba16_40x30.png", wide(natural(rng, 40, 30, 4)), 16, 6)
    raw("la16_23x45.png", wide(natural(rng, 23, 45, 2)), 16, 4)
    g16 = wide(natural(rng, 50, 40, 1))[..., 0]
    g16[:20] //= 300  # many values below 256, where PIL's clipping leaves them unchanged
    raw("gray16_50x40.png", g16, 16, 0)
    raw("gray2_29x11.png", natural(rng, 29, 11, 1)[..., 0] >> 6, 2, 0)
    raw("rgb_interlaced_45x37.png", natural(rng, 45, 37), 8, 2, interlace=True)

    base = Image.fromarray(natural(rng, 333, 251))
    save("baseline_333x251.jpg", base, quality=90)
    save("progressive_333x251.jpg", base, quality=85, progressive=True)
    save("gray_257x129.jpg", Image.fromarray(natural(rng, 257, 129, 1)[..., 0], "L"), quality=90)
    save("s444_180x320.jpg", Image.fromarray(natural(rng, 180, 320)), quality=95, subsampling=0)
    save("s422_17x9.jpg", Image.fromarray(natural(rng, 17, 9)), quality=75, subsampling=1)
    save("large_1600x1200.jpg", Image.fromarray(natural(rng, 1600, 1200)), quality=92)
    save("cmyk_64x48.jpg", Image.fromarray(natural(rng, 64, 48, 4), "CMYK"), quality=90)
    exif = Image.Exif()
    exif[0x0112] = 6  # orientation: rotate 90 CW to display; must NOT be applied
    save("exif_rot6_60x40.jpg", Image.fromarray(natural(rng, 60, 40)), quality=90, exif=exif.tobytes())

    photos = "/usr/lib/python3/dist-packages/skimage/data"
    for p in sorted(glob.glob(os.path.join(photos, "*.png")) + glob.glob(os.path.join(photos, "*.jpg"))):
        name = "skimage_" + os.path.basename(p)
        if name.split("_", 1)[1] not in ("astronaut.png", "chelsea.png", "coffee.png", "camera.png", "rocket.jpg"):
            continue
        with open(p, "rb") as f, open(os.path.join(d, name), "wb") as g:
            g.write(f.read())
        src[name] = "src/" + name
    return src


def make_corrupt(out, src, rng):
    d = os.path.join(out, "bad")
    os.makedirs(d, exist_ok=True)
    png = open(os.path.join(out, src["rgb_333x251.png"]), "rb").read()
    jpg = open(os.path.join(out, src["baseline_333x251.jpg"]), "rb").read()
    prog = open(os.path.join(out, src["progressive_333x251.jpg"]), "rb").read()
    bad_type = bytearray(png)
    bad_type[40] ^= 0x5A  # the first IDAT's chunk type
    bad_data = bytearray(png)
    bad_data[len(png) // 3] ^= 0x5A  # inside the compressed image data: CRC and zlib errors
    files = {
        "truncated.png": png[: len(png) // 2],
        "truncated_header.png": png[:20],
        "truncated.jpg": jpg[: len(jpg) // 2],
        "truncated_progressive.jpg": prog[: len(prog) // 2],
        "header_only.jpg": jpg[:200],
        "random.png": rng.integers(0, 256, 4096).astype(np.uint8).tobytes(),
        "random_with_jpeg_magic.jpg": b"\xff\xd8\xff" + rng.integers(0, 256, 4096).astype(np.uint8).tobytes(),
        "random_with_png_magic.png": png[:8] + rng.integers(0, 256, 4096).astype(np.uint8).tobytes(),
        "empty.jpg": b"",
        "bad_chunk_type.png": bytes(bad_type),
        "bad_idat_data.png": bytes(bad_data),
    }
    names = []
    for name, data in files.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)
        names.append("bad/" + name)
    for n in names:  # PIL must refuse them too, or the case is meaningless
        try:
            Image.open(os.path.join(out, n)).convert("RGB")
        except Exception:
            continue
        raise SystemExit(f"make_image_cases: PIL decodes corrupt case {n}")
    return names


def tv_resize(im, size, resample):
    """torchvision transforms.Resize(size) with an int on a PIL image."""
    w, h = im.size
    short, long = (w, h) if w <= h else (h, w)
    new_short, new_long = size, int(size * long / short)
    new_w, new_h = (new_short, new_long) if w <= h else (new_long, new_short)
    if (new_w, new_h) == (w, h):
        return im
    return im.resize((new_w, new_h), resample)


def tv_center_crop(im, cw, ch):
    """torchvision transforms.CenterCrop((ch, cw)) on a PIL image (zero padding when the crop is larger)."""
    w, h = im.size
    if cw > w or ch > h:
        pl = (cw - w) // 2 if cw > w else 0
        pt = (ch - h) // 2 if ch > h else 0
        pr = (cw - w + 1) // 2 if cw > w else 0
        pb = (ch - h + 1) // 2 if ch > h else 0
        a = np.asarray(im)
        pad = ((pt, pb), (pl, pr)) + (((0, 0),) if a.ndim == 3 else ())
        im = Image.fromarray(np.pad(a, pad, constant_values=0), im.mode)
        w, h = im.size
        if (w, h) == (cw, ch):
            return im
    top = int(round((h - ch) / 2.0))
    left = int(round((w - cw) / 2.0))
    return im.crop((left, top, left + cw, top + ch))


def pipeline(path, resize, cw, ch, filt, channels, mean, std):
    im = Image.open(path).convert("RGB" if channels == 3 else "L")
    if HAVE_TV:
        import torch
        import torchvision.transforms as T
        modes = {"bilinear": T.InterpolationMode.BILINEAR, "bicubic": T.InterpolationMode.BICUBIC,
                 "nearest": T.InterpolationMode.NEAREST}
        t = T.Compose([T.Resize(resize, interpolation=modes[filt]), T.CenterCrop((ch, cw)), T.ToTensor(),
                       T.Normalize(mean, std)])
        with torch.no_grad():
            return t(im).numpy().astype(np.float32)
    im = tv_center_crop(tv_resize(im, resize, FILTERS[filt]), cw, ch)
    a = np.asarray(im, np.uint8)
    if a.ndim == 2:
        a = a[:, :, None]
    x = a.transpose(2, 0, 1).astype(np.float32) / np.float32(255)  # ToTensor: float32 division by 255
    m = np.asarray(mean, np.float32).reshape(-1, 1, 1)
    s = np.asarray(std, np.float32).reshape(-1, 1, 1)
    return ((x - m) / s).astype(np.float32)  # Normalize: sub_(mean).div_(std)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    out = args.out
    os.makedirs(os.path.join(out, "exp"), exist_ok=True)
    rng = np.random.default_rng(20240611)
    src = make_sources(out, rng)
    bad = make_corrupt(out, src, rng)
    lines = []
    exp_n = [0]

    def expect(arr, tag):
        exp_n[0] += 1
        rel = f"exp/{exp_n[0]:03d}_{tag}.npy"
        np.save(os.path.join(out, rel), np.ascontiguousarray(arr))
        return rel

    for name, rel in src.items():
        im = Image.open(os.path.join(out, rel))
        im.load()
        rgb = im.convert("RGB")
        lines.append(f"decode\t{rel}\t{expect(np.asarray(rgb), 'decode')}")
        lines.append(f"gray\t{rel}\t{expect(np.asarray(rgb.convert('L')), 'gray')}")

    resize_sizes = {
        "rgb_333x251.png": [(224, 168), (100, 75), (17, 13), (333, 100), (120, 251), (500, 400), (1, 1), (334, 252),
                            (298, 224), (224, 298), (7, 300)],
        "rgb_180x320.png": [(224, 398), (126, 224), (180, 500)],
        "rgb_17x9.png": [(333, 251), (8, 5), (34, 9), (17, 30), (16, 8)],
        "l_257x129.png": [(128, 64), (300, 200), (257, 50), (446, 224)],
        "baseline_333x251.jpg": [(298, 224), (256, 193)],
        "rgb_256x256.png": [(224, 224), (248, 248), (299, 299), (255, 257)],
    }
    for name, sizes in resize_sizes.items():
        base = Image.open(os.path.join(out, src[name])).convert("RGB")
        for mode in ("RGB", "L"):
            if mode == "L" and name not in ("l_257x129.png", "rgb_333x251.png", "rgb_17x9.png"):
                continue
            im = base.convert(mode)
            for (w, h) in sizes:
                for fname, f in FILTERS.items():
                    r = np.asarray(im.resize((w, h), f))
                    lines.append(f"resize\t{src[name]}\t{mode}\t{w}\t{h}\t{fname}\t{expect(r, 'resize')}")

    # A sweep of small random images to random sizes: edge cases (1-pixel sides, extreme factors, odd ratios).
    sd = os.path.join(out, "src", "sweep")
    os.makedirs(sd, exist_ok=True)
    for i in range(40):
        w, h = int(rng.integers(1, 48)), int(rng.integers(1, 48))
        rel = f"src/sweep/s{i:02d}_{w}x{h}.png"
        Image.fromarray(natural(rng, w, h)).save(os.path.join(out, rel))
        im = Image.open(os.path.join(out, rel)).convert("RGB")
        for _ in range(3):
            ow, oh = int(rng.integers(1, 100)), int(rng.integers(1, 100))
            if rng.random() < 0.2:
                ow = w
            for fname, f in FILTERS.items():
                r = np.asarray(im.resize((ow, oh), f))
                lines.append(f"resize\t{rel}\tRGB\t{ow}\t{oh}\t{fname}\t{expect(r, 'resize')}")

    pipes = []
    for name in ("rgb_333x251.png", "rgb_180x320.png", "baseline_333x251.jpg", "rgba_200x150.png", "rgb_256x256.png",
                 "gray_257x129.jpg", "progressive_333x251.jpg", "s444_180x320.jpg"):
        for resize in (256, 248):
            for filt in ("bicubic", "bilinear"):
                pipes.append((name, resize, 224, 224, filt, 3, IMAGENET))
    photos = [n for n in src if n.startswith("skimage_")]
    for name in photos:
        pipes.append((name, 256, 224, 224, "bicubic", 3, IMAGENET))
        pipes.append((name, 248, 224, 224, "bicubic", 3, IMAGENET))
    half = ((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))
    pipes += [
        ("rgb_333x251.png", 251, 224, 224, "bicubic", 3, IMAGENET),   # no resize; offsets 54.5 -> 54, 13.5 -> 14
        ("rgb_333x251.png", 225, 224, 224, "bicubic", 3, IMAGENET),   # odd offsets
        ("rgb_333x251.png", 256, 224, 224, "nearest", 3, half),
        ("rgb_333x251.png", 256, 224, 224, "bicubic", 1, ((0.5,), (0.5,))),
        ("l_257x129.png", 248, 224, 224, "bilinear", 1, ((0.449,), (0.226,))),
        ("l_257x129.png", 256, 224, 224, "bicubic", 3, IMAGENET),
        ("rgb_17x9.png", 8, 16, 12, "bicubic", 3, IMAGENET),           # crop larger than the image: zero padding
        ("rgb_17x9.png", 8, 10, 12, "bilinear", 3, IMAGENET),          # padding in height only
        ("rgb_17x9.png", 9, 20, 5, "bicubic", 3, half),                # padding in width only, no resize
        ("rgb_180x320.png", 224, 200, 180, "bicubic", 3, IMAGENET),    # non-square crop
        ("cmyk_64x48.jpg", 40, 32, 32, "bicubic", 3, IMAGENET),
        ("large_1600x1200.jpg", 256, 224, 224, "bicubic", 3, IMAGENET),
        ("large_1600x1200.jpg", 248, 224, 224, "bilinear", 3, IMAGENET),
        ("large_1600x1200.jpg", 256, 224, 224, "nearest", 3, IMAGENET),
        ("rgb16_97x61.png", 64, 56, 56, "bicubic", 3, IMAGENET),
    ]
    for (name, resize, cw, ch, filt, channels, (mean, std)) in pipes:
        t = pipeline(os.path.join(out, src[name]), resize, cw, ch, filt, channels, mean, std)
        assert t.shape == (channels, ch, cw) and t.dtype == np.float32
        ms = ",".join(repr(float(v)) for v in mean)
        ss = ",".join(repr(float(v)) for v in std)
        lines.append(f"pipeline\t{src[name]}\t{resize}\t{cw}\t{ch}\t{filt}\t{channels}\t{ms}\t{ss}\t"
                     f"{expect(t, 'pipeline')}")

    for n in bad:
        lines.append(f"corrupt\t{n}")
    with open(os.path.join(out, "manifest.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"make_image_cases: {len(src)} images, {len(lines)} cases, {len(bad)} corrupt files "
          f"(torchvision {'used' if HAVE_TV else 'not installed: PIL + numpy pipeline'}) in {out}")


if __name__ == "__main__":
    sys.exit(main())
