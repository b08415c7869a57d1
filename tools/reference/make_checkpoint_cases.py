#!/usr/bin/python3
"""Checkpoint-reader test fixtures, written with the real torch.save. Run by ctest (fixture `checkpoint_cases`):

    /usr/bin/python3 tools/reference/make_checkpoint_cases.py --out build/fixtures/checkpoint_cases

Writes DIR/<case file> for every case and DIR/manifest.json:
  {"cases": [{"name", "file", "expect": "ok" | "error",
              # ok cases:
              "container", "arch_hint", "args": {k: text}, "skipped": [top-level keys that must be listed],
              "tensors": {name: {"shape": [...], "source_type": "float16", "values": [float32 values, flat; "inf"/"-inf"/"nan" as strings]}},
              # error cases:
              "error_contains": [substrings of the message]}],
   "pickle_fuzz": "timm_data.pkl",    # a raw data.pkl for the C++ unpickler fuzz test
   "pwned": "pwned.txt"}              # must never exist: the forbidden-global cases would create it if executed
Values are exact float32 (float16/bfloat16/float64/int tensors converted the way the C++ reader must).
"""
import argparse
import io
import json
import math
import os
import shutil
import struct
import zipfile
from collections import OrderedDict

import numpy as np
import torch
import torch.nn as nn

CASES = []


def json_float(v):
    """float32 value as a JSON number; inf/-inf/nan as strings (JSON has no literal for them)."""
    v = float(v)
    return v if math.isfinite(v) else repr(v)


def expected_tensors(sd):
    out = OrderedDict()
    for k, t in sd.items():
        k = k[len("module."):] if k.startswith("module.") else k
        out[k] = {"shape": list(t.shape), "source_type": str(t.dtype).replace("torch.", ""),
                  "values": [json_float(v) for v in t.detach().contiguous().float().reshape(-1).tolist()]}
    return out


def ok_case(name, file, sd, container, arch_hint="", args=None, skipped=()):
    CASES.append({"name": name, "file": file, "expect": "ok", "container": container, "arch_hint": arch_hint,
                  "args": args or {}, "skipped": list(skipped), "tensors": expected_tensors(sd)})


def error_case(name, file, *contains):
    CASES.append({"name": name, "file": file, "expect": "error", "error_contains": list(contains)})


def small_state_dict(seed, offset=0.0):
    torch.manual_seed(seed)
    m = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3), nn.LayerNorm(3))
    with torch.no_grad():
        for p in m.parameters():
            p.add_(offset)
        m[1].running_mean.uniform_(-1, 1)
        m[1].running_var.uniform_(0.5, 2)
        m[1].num_batches_tracked.fill_(7)
    return m.state_dict()


def timm_args():
    return argparse.Namespace(img_size=224, crop_pct=0.9, interpolation="bicubic", mean=(0.485, 0.456, 0.406),
                              std=(0.229, 0.224, 0.225), model="soft_tiny", input_size=(3, 224, 224),
                              lr=5e-4, epochs=300, amp=True, resume="", num_classes=None,
                              model_kwargs={"drop": 0.1})


def timm_args_text():
    return {"img_size": "224", "crop_pct": "0.9", "interpolation": "bicubic", "mean": "0.485,0.456,0.406",
            "std": "0.229,0.224,0.225", "model": "soft_tiny", "input_size": "3,224,224", "lr": "0.0005",
            "epochs": "300", "amp": "True", "resume": "", "num_classes": "None"}


class Evil:
    """Pickles as a call of os.system: a reader that executes globals would create the 'pwned' file."""

    def __init__(self, target):
        self.target = target

    def __reduce__(self):
        return (os.system, ("echo executed > '%s'" % self.target,))


class CustomOptimizerState:
    def __init__(self):
        self.step = 3
        self.extra = [1, 2, 3]


def write_safetensors(path, tensors, metadata):
    codes = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16", torch.float64: "F64",
             torch.int64: "I64", torch.int32: "I32", torch.uint8: "U8", torch.bool: "BOOL"}
    header = OrderedDict([("__metadata__", metadata)])
    blobs, offset = [], 0
    for name, t in tensors.items():
        t = t.contiguous()
        if t.dtype == torch.bfloat16:
            data = t.view(torch.int16).numpy().astype("<i2").tobytes()
        else:
            data = t.numpy().astype(t.numpy().dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": codes[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
    return h


def rewrite_zip(src, dst, prefix=None, compression=zipfile.ZIP_STORED, replace=None):
    """Copies a torch zip with another archive prefix / compression / replaced entries (CRCs stay valid)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", compression=compression) as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            name = info.filename
            rel = name.split("/", 1)[1]
            if replace and rel in replace:
                data = replace[rel]
            if prefix is not None:
                name = prefix + "/" + rel
            zout.writestr(name, data)


def entry_data_offset(path, entry_suffix):
    with zipfile.ZipFile(path) as z:
        info = next(i for i in z.infolist() if i.filename.endswith(entry_suffix))
    raw = open(path, "rb").read()
    h = info.header_offset
    name_len, extra_len = struct.unpack("<HH", raw[h + 26:h + 30])
    return h + 30 + name_len + extra_len, info.file_size


def flip(src, dst, offset):
    raw = bytearray(open(src, "rb").read())
    raw[offset] ^= 0x10
    open(dst, "wb").write(bytes(raw))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    out = ap.parse_args().out
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)
    P = lambda f: os.path.join(out, f)  # noqa: E731
    pwned = P("pwned.txt")

    sd = small_state_dict(0)
    sd_ema = small_state_dict(0, offset=1000.0)

    # Containers.
    torch.save(sd, P("raw.pt"))
    ok_case("raw", "raw.pt", sd, "raw")
    torch.save({"model": sd}, P("model.pt"))
    ok_case("model", "model.pt", sd, "model")
    optimizer = torch.optim.SGD([nn.Parameter(torch.ones(3))], lr=0.1, momentum=0.9)
    optimizer.zero_grad()
    optimizer.param_groups[0]["params"][0].sum().backward()
    optimizer.step()
    timm = {"epoch": 5, "arch": "soft_tiny", "state_dict": sd, "optimizer": optimizer.state_dict(), "version": 2,
            "args": timm_args(), "state_dict_ema": sd_ema, "metric": np.float64(81.5)}
    torch.save(timm, P("timm.pt"))
    ok_case("timm_ema", "timm.pt", sd_ema, "state_dict_ema", "soft_tiny", timm_args_text(),
            ["epoch", "state_dict", "optimizer", "version", "metric"])
    module_sd = OrderedDict(("module." + k, v) for k, v in sd.items())
    args = timm_args()
    args.model = "deit_tiny_patch16_224"
    torch.save({"state_dict": module_sd, "args": args, "epoch": 1}, P("timm_module.pt"))
    text = dict(timm_args_text(), model="deit_tiny_patch16_224")
    ok_case("timm_module_prefix", "timm_module.pt", module_sd, "state_dict", "deit_tiny_patch16_224", text, ["epoch"])
    torch.save(module_sd, P("raw_module.pt"), pickle_protocol=4)
    ok_case("raw_module_protocol4", "raw_module.pt", module_sd, "raw")
    torch.save({"model": sd, "args": vars(timm_args())}, P("args_dict.pt"))
    ok_case("args_as_dict", "args_dict.pt", sd, "model", "soft_tiny", timm_args_text())

    # Dtypes and views.
    g = torch.Generator().manual_seed(1)
    dt = OrderedDict()
    dt["f16"] = (torch.randn(5, 3, generator=g) * 10).half()
    dt["f16_special"] = torch.tensor([0.0, -0.0, 6e-8, 1e-5, 65504.0, float("inf"), -float("inf")]).half()
    dt["bf16"] = (torch.randn(4, 2, generator=g) * 100).bfloat16()
    dt["f64"] = torch.randn(3, 3, generator=g, dtype=torch.float64)
    dt["i64_scalar"] = torch.tensor(123456, dtype=torch.int64)
    dt["i32"] = torch.arange(-3, 3, dtype=torch.int32)
    dt["u8"] = torch.arange(250, 256, dtype=torch.uint8)
    dt["bool"] = torch.tensor([True, False, True])
    dt["empty"] = torch.zeros(0, 4)
    torch.save(dt, P("dtypes.pt"))
    ok_case("dtypes", "dtypes.pt", dt, "raw")
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6) * 0.5
    views = OrderedDict()
    views["base"] = base
    views["transposed"] = base.t()
    views["row2"] = base[2]
    views["col3"] = base[:, 3]
    views["strided"] = base[1::2, ::3]
    views["expanded"] = torch.tensor([1.5, -2.5]).reshape(2, 1).expand(2, 3)
    views["param"] = nn.Parameter(base[1:3, 2:5])
    torch.save(views, P("views.pt"))
    ok_case("views", "views.pt", views, "raw")

    # Other archive layouts: another prefix, deflated entries.
    rewrite_zip(P("timm.pt"), P("deflated.pt"), prefix="some.prefix-2", compression=zipfile.ZIP_DEFLATED)
    ok_case("deflated_other_prefix", "deflated.pt", sd_ema, "state_dict_ema", "soft_tiny", timm_args_text(),
            ["optimizer"])

    # safetensors.
    st = OrderedDict()
    st["a.weight"] = torch.randn(3, 4, generator=g)
    st["a.half"] = torch.randn(2, 2, generator=g).half()
    st["a.bf16"] = torch.randn(5, generator=g).bfloat16()
    st["a.f64"] = torch.randn(2, 3, generator=g, dtype=torch.float64)
    st["count"] = torch.tensor(42, dtype=torch.int64)
    st["mask"] = torch.tensor([True, False])
    st["module.b.bias"] = torch.randn(3, generator=g)
    write_safetensors(P("model.safetensors"), st, {"format": "pt", "arch": "deit_tiny"})
    ok_case("safetensors", "model.safetensors", st, "safetensors", "deit_tiny", {"format": "pt", "arch": "deit_tiny"})
    h = write_safetensors(P("bad_offsets.safetensors"), {"w": torch.ones(2, 2)}, {})
    raw = open(P("bad_offsets.safetensors"), "rb").read()
    bad = raw[8:8 + len(h)].replace(b"[0,16]", b"[0,64]")
    open(P("bad_offsets.safetensors"), "wb").write(raw[:8] + bad + raw[8 + len(h):])
    error_case("safetensors_bad_offsets", "bad_offsets.safetensors", "data_offsets")
    raw = open(P("model.safetensors"), "rb").read()
    open(P("truncated.safetensors"), "wb").write(raw[:len(raw) - 10])
    error_case("safetensors_truncated", "truncated.safetensors", "outside")
    open(P("bad_json.safetensors"), "wb").write(struct.pack("<Q", 10) + b'{"a": [1,,')
    error_case("safetensors_bad_json", "bad_json.safetensors", "JSON")

    # Restricted unpickler: forbidden globals on the state_dict path are refused (never run), elsewhere tolerated.
    system = "%s.%s" % (os.system.__module__, os.system.__name__)
    evil_sd = OrderedDict(sd)
    evil_sd["evil"] = Evil(pwned)
    torch.save({"state_dict": evil_sd, "epoch": 1}, P("forbidden.pt"))
    error_case("forbidden_global_in_state_dict", "forbidden.pt", system, "'evil'", "allowlist")
    torch.save(evil_sd, P("forbidden_raw.pt"))
    error_case("forbidden_global_raw", "forbidden_raw.pt", system, "allowlist")
    torch.save({"model": Evil(pwned)}, P("forbidden_container.pt"))
    error_case("forbidden_global_as_container", "forbidden_container.pt", system, "'model'")
    torch.save({"state_dict": sd, "optimizer": CustomOptimizerState(), "hook": Evil(pwned)}, P("skipped_unknown.pt"))
    ok_case("unknown_globals_in_skipped_entries", "skipped_unknown.pt", sd, "state_dict", "", {},
            ["optimizer", "hook"])
    torch.save(nn.Linear(2, 2), P("whole_model.pt"))
    error_case("whole_module", "whole_model.pt", "torch.nn.modules.linear.Linear", "state_dict")
    torch.save({"epoch": 3, "note": "hello"}, P("no_tensors.pt"))
    error_case("no_state_dict", "no_tensors.pt", "'epoch'", "'note'", "no state_dict")

    # Damaged files.
    raw = open(P("timm.pt"), "rb").read()
    open(P("truncated.pt"), "wb").write(raw[:len(raw) // 2])
    error_case("truncated_zip", "truncated.pt", "truncated")
    with zipfile.ZipFile(P("timm.pt")) as z:  # the last storage belongs to state_dict_ema, the selected one
        last_key = max(int(n.rsplit("/", 1)[1]) for n in z.namelist() if "/data/" in n)
    off, size = entry_data_offset(P("timm.pt"), "/data/%d" % last_key)
    flip(P("timm.pt"), P("bitflip_data.pt"), off + size // 2)
    error_case("bitflip_in_storage", "bitflip_data.pt", "damaged")
    off, size = entry_data_offset(P("timm.pt"), "/data.pkl")
    flip(P("timm.pt"), P("bitflip_pkl.pt"), off + size // 2)
    error_case("bitflip_in_pickle", "bitflip_pkl.pt", "damaged")
    with zipfile.ZipFile(P("timm.pt")) as z:
        pkl_name = next(n for n in z.namelist() if n.endswith("/data.pkl"))
        pkl = z.read(pkl_name)
    open(P("timm_data.pkl"), "wb").write(pkl)
    rewrite_zip(P("timm.pt"), P("truncated_pickle.pt"), replace={"data.pkl": pkl[:len(pkl) // 2]})
    error_case("truncated_pickle_valid_crc", "truncated_pickle.pt", "malformed pickle")
    rewrite_zip(P("timm.pt"), P("underflow_pickle.pt"), replace={"data.pkl": b"\x80\x02R."})
    error_case("stack_underflow", "underflow_pickle.pt", "stack underflow")
    rewrite_zip(P("timm.pt"), P("memo_pickle.pt"), replace={"data.pkl": b"\x80\x02h\x07."})
    error_case("bad_memo", "memo_pickle.pt", "memo")
    rewrite_zip(P("timm.pt"), P("huge_len_pickle.pt"), replace={"data.pkl": b"\x80\x02X\xff\xff\xff\x7f.."})
    error_case("huge_length", "huge_len_pickle.pt", "truncated")
    rewrite_zip(P("timm.pt"), P("missing_storage.pt"), replace={"data/%d" % last_key: b""})
    error_case("short_storage", "missing_storage.pt", "bytes")
    torch.save(sd, P("legacy.pt"), _use_new_zipfile_serialization=False)
    error_case("legacy_format", "legacy.pt", "legacy", "torch >= 1.6")
    open(P("not_a_checkpoint.txt"), "w").write("hello, world\n")
    error_case("text_file", "not_a_checkpoint.txt", "not a recognised checkpoint")
    open(P("empty.pt"), "wb").close()
    error_case("empty_file", "empty.pt", "empty")
    np.save(P("array.npy"), np.zeros(3, np.float32))
    error_case("npy_file", "array.npy", "NumPy")
    with zipfile.ZipFile(P("plain.zip"), "w") as z:
        z.writestr("readme.txt", "not a checkpoint")
    error_case("zip_without_pickle", "plain.zip", "data.pkl")
    error_case("missing_file", "does_not_exist.pt", "cannot open")

    assert not os.path.exists(pwned)
    with open(P("manifest.json"), "w") as f:
        json.dump({"cases": CASES, "pickle_fuzz": "timm_data.pkl", "pwned": "pwned.txt"}, f, indent=1)
    print("wrote %d checkpoint cases to %s" % (len(CASES), out))


if __name__ == "__main__":
    main()
