"""What CPU the benchmarks ran on and which x86 ISA vitrt picked there (shared by compare.py and onnx_vs_ort.py)."""
import os


def cpu_flags_and_name():
    """(model name, set of /proc/cpuinfo flags) of the first CPU; ("unknown CPU", empty) where unreadable."""
    name, flags = "unknown CPU", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k.strip() == "model name" and name == "unknown CPU":
                    name = v.strip()
                elif k.strip() == "flags" and not flags:
                    flags = set(v.split())
    except OSError:
        pass
    return name, flags


def cpu_and_isa():
    """The CPU's model name and the ISA vitrt's x86 backend picks on it: the rule of
    backends/cpu/x86/cpu_features.cpp (avx512 = F+BW+VL+DQ+CD, avx2 = AVX2+FMA), capped by VITRT_MAX_ISA and
    VITRT_FORCE_REF as backends/cpu/x86/x86_options.cpp reads them."""
    name, flags = cpu_flags_and_name()
    order = ["none", "avx2", "avx512"]
    isa = "none"
    if {"avx2", "fma"} <= flags:
        isa = "avx512" if {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512cd"} <= flags else "avx2"
    cap = {"ref": "none"}.get(os.environ.get("VITRT_MAX_ISA", ""), os.environ.get("VITRT_MAX_ISA", ""))
    if cap in order and order.index(cap) < order.index(isa):
        isa = cap
    if os.environ.get("VITRT_FORCE_REF", "0") not in ("", "0"):
        isa = "none (VITRT_FORCE_REF)"
    return name, isa, os.cpu_count()
