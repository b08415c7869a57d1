#!/usr/bin/python3
"""Checkpoint fixtures for ViTs whose blocks hold another attention than timm's (docs/models.md, "ViT with another
attention"): small DeiT-shaped models (tools/reference/vitrt_reference/deit.py with attn_factory) with each
mechanism the converter's --attn table knows, saved with torch.save, and their float32/float64 logits. Run by ctest
(fixture `vit_attention_cases`):

    /usr/bin/python3 tools/reference/make_vit_attention_cases.py --out build/fixtures/vit_attention_cases

Same case format as make_model_cases.py (tests/models/model_parity_test.cpp checks them), plus
`convert_options` {attn, heads, landmarks, nystrom_init, emit} for what the keys cannot tell, `planned_ops`
{op: count} the session's plan must hold, and `logits_first_f64` (PyTorch on image 0 alone) where the images
of a batch affect each other.
"""
import argparse
import copy
import json
import math
import os
import sys
from collections import OrderedDict
from functools import partial

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vitrt_reference as R  # noqa: E402
from vitrt_reference.attn_linformer import LinformerFairseq, LinformerLRA, LinformerLucidrains  # noqa: E402
from vitrt_reference.attn_external import EAMLPAttention  # noqa: E402
from vitrt_reference.attn_performer import PerformerAttention  # noqa: E402
from vitrt_reference.attn_linear import linear_attention_factory  # noqa: E402
from vitrt_reference.attn_fastformer import fastformer_attention  # noqa: E402
from vitrt_reference.attn_nystrom import NystromBlockAttention  # noqa: E402
from vitrt_reference.attn_efficient import PatchTokenViT, efficient_attention_factory  # noqa: E402
import make_model_cases as M  # noqa: E402

IMG, PATCH, DIM, HEADS, DEPTH, CLASSES = 64, 16, 96, 3, 2, 10
TOKENS = (IMG // PATCH) ** 2 + 1


@torch.no_grad()
def sharpen(model, seed):
    """init_for_tests draws unknown parameters at 0.02 scale and gives only timm's qkv a gain: redraw query/key
    projections (and External Attention's trans_dims and memory keys linear_0: a uniform softmax over the tokens
    would equal one over the slots) with gain 1.5 and compression matrices at 1/sqrt(N) so the attention is far
    from uniform."""
    g = torch.Generator().manual_seed(seed + 7)
    for name, p in model.named_parameters():
        leaf = name.rsplit(".", 2)
        if name.endswith(("to_q.weight", "to_k.weight", "q_proj.weight", "k_proj.weight", "trans_dims.weight",
                          "linear_0.weight", "query_projection.weight", "key_projection.weight",
                          "query_att.weight", "key_att.weight", "W_q.weight", "W_k.weight", "keys.weight",
                          "queries.weight")):
            p.copy_(torch.randn(*p.shape, generator=g, dtype=torch.float64).float() * (1.5 / math.sqrt(p.shape[1])))
        elif name.endswith(".attn.E"):  # the LRA Linformer's E [h, k, L], shared by every layer
            p.copy_(torch.randn(*p.shape, generator=g, dtype=torch.float64).float() * (2.0 / math.sqrt(p.shape[2])))
        elif name.endswith(("proj_k", "proj_v")) or "compress_" in name:
            n = p.shape[0] if name.endswith(("proj_k", "proj_v")) else p.shape[1]
            p.copy_(torch.randn(*p.shape, generator=g, dtype=torch.float64).float() * (2.0 / math.sqrt(n)))
        del leaf


def linformer_lra(k, length):
    """attn_factory for LinformerLRA: one E [h, k, length] made by the first block, shared by all."""
    shared = []

    def make(d, h):
        if not shared:
            shared.append(torch.nn.Parameter(torch.zeros(h, k, length)))
        return LinformerLRA(d, h, shared[0])
    return make


def model_with(attn_factory, seed, vit=R.VisionTransformer, depth=DEPTH):
    m = vit(img_size=IMG, patch_size=PATCH, num_classes=CLASSES, embed_dim=DIM, depth=depth,
                            num_heads=HEADS, attn_factory=attn_factory)
    R.init_for_tests(m, seed)
    sharpen(m, seed)
    return m


CASES = [
    # name, attn (--attn), factory
    ("linformer_lucidrains", "linformer_lucidrains",
     lambda d, h: LinformerLucidrains(d, h, seq_len=TOKENS + 7, k=8)),  # a longer trained length: rows [:N]
    ("linformer_lucidrains_shared", "auto",
     lambda d, h: LinformerLucidrains(d, h, seq_len=TOKENS, k=6, one_kv_head=True, share_kv=True)),
    ("linformer_fairseq", "auto", lambda d, h: LinformerFairseq(d, h, max_seq_len=TOKENS, k_len=8)),
    ("linformer_fairseq_shared", "linformer_fairseq",
     lambda d, h: LinformerFairseq(d, h, max_seq_len=2 * TOKENS, k_len=5, shared_kv_compressed=True)),
    ("external_eamlp", "auto", EAMLPAttention),  # 12 heads of width 32, 64 slots, biases, eps 1e-9
    # Performer: m = int(d ln d) = 110 features of d = 32; the projection is a buffer init_for_tests keeps.
    ("performer", "auto",
     lambda d, h: PerformerAttention(d, h, generator=torch.Generator().manual_seed(17))),
    ("performer_relu", "performer_relu",
     lambda d, h: PerformerAttention(d, h, nb_features=40, generalized_attention=True, qkv_bias=True,
                                     generator=torch.Generator().manual_seed(18))),
    # idiap's Linear Transformer (AttentionLayer + LinearAttention, eps 1e-6): elu+1 features, normalised.
    ("linear_transformer", "auto", linear_attention_factory()),
    # The official Fastformer FastAttention (FastSelfAttention + BertSelfOutput, LayerNorm eps 1e-12).
    ("fastformer", "auto", fastformer_attention),
    # mlpen's LRA Linformer: one E shared by K, V and both blocks, trained for 3 more tokens (E[:, :, :N]).
    ("linformer_lra", "auto", linformer_lra(k=7, length=TOKENS + 3)),
    # The global key max (performer_global_max) couples the images of a batch, so the batch-1-inside-batch-2
    # check of model_parity_test cannot hold for it: its parity is the op tests' (tests/ops).
]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    torch.set_grad_enabled(False)
    os.makedirs(args.out, exist_ok=True)
    W = M.Writer(args.out)
    for i, (name, attn, factory) in enumerate(CASES):
        seed = 301 + i
        x = R.make_images(M.BATCH, IMG, seed=seed)
        m, l32, l64 = M.calibrate(model_with(factory, seed), seed, x, name)
        R.save_in_container(W.path(name, "model.pth"), R.clone_state_dict(m), "raw")
        W.add(name, m, "deit_tiny", seed, x, l32, l64, "model.pth", "raw",
              extra=dict(convert_options=dict(attn=attn, heads=str(HEADS))))

    # Linformer layouts whose compressed keys are heads [B, h, k, d] (mlpen's LRA form, lucidrains' one_kv_head) as
    # --emit primitive writes them: fuse_attention must make each attention one SoftmaxAttention again.
    for j, (name, factory) in enumerate([
            ("linformer_lra_primitive", linformer_lra(k=5, length=TOKENS)),
            ("linformer_one_kv_head_primitive",
             lambda d, h: LinformerLucidrains(d, h, seq_len=TOKENS + 2, k=6, one_kv_head=True))]):
        seed = 321 + j
        x = R.make_images(M.BATCH, IMG, seed=seed)
        mdl, l32, l64 = M.calibrate(model_with(factory, seed), seed, x, name)
        R.save_in_container(W.path(name, "model.pth"), R.clone_state_dict(mdl), "raw")
        W.add(name, mdl, "deit_tiny", seed, x, l32, l64, "model.pth", "raw",
              extra=dict(convert_options=dict(attn="auto", heads=str(HEADS), emit="primitive"),
                         planned_ops={"SoftmaxAttention": DEPTH, "Softmax": 0}))

    # Nyströmformer (the official LRA wrapper, Q and K / d^(1/4)): 17 tokens in 4 or 5 landmarks (the T2T segment
    # rule), fused and as --emit primitive writes it (fuse_nystrom_attention must restore it). Per (b,h) init
    # with the V conv, m from --landmarks; the official "original" global init without it, m from the checkpoint
    # args, checked at batch 1 against PyTorch on that image alone (the global max couples a batch's images).
    for j, (name, emit, init, conv, m) in enumerate([
            ("nystrom", "fused", "per_head", 3, 4), ("nystrom_primitive", "primitive", "per_head", 3, 4),
            ("nystrom_global", "fused", "global", 0, 5), ("nystrom_global_primitive", "primitive", "global", 0, 5)]):
        seed = 331 + j // 2
        factory = partial(NystromBlockAttention, num_landmarks=m, conv_kernel_size=conv,
                          init_option="exact" if init == "per_head" else "original", scales="lra")
        x = R.make_images(M.BATCH, IMG, seed=seed)
        mdl, l32, l64 = M.calibrate(model_with(factory, seed), seed, x, name)
        options = dict(attn="nystrom" if init == "global" else "auto", heads=str(HEADS), emit=emit)
        if init == "per_head":
            options.update(landmarks=m, nystrom_init="per_head")
            R.save_in_container(W.path(name, "model.pth"), R.clone_state_dict(mdl), "raw")
        else:
            torch.save({"model": R.clone_state_dict(mdl), "args": {"num_landmarks": m}}, W.path(name, "model.pth"))
        extra = dict(convert_options=options, planned_ops={"NystromAttention": DEPTH})
        if init == "global":
            first = copy.deepcopy(mdl).double()(torch.from_numpy(x[:1]).double()).numpy()
            np.save(W.path(name, "logits_first_f64.npy"), first.astype(np.float64))
            extra["logits_first_f64"] = f"{name}/logits_first_f64.npy"
        W.add(name, mdl, "deit_tiny", seed, x, l32, l64, "model.pth", "raw" if init == "per_head" else "model",
              extra=extra)

    # One landmark per token (m = N = 17): the official forward's exact branch, softmax(Q·Kᵀ)·V plus the V conv
    # (docs/models.md §7.4); one block, m from --landmarks.
    name, seed = "nystrom_exact", 335
    x = R.make_images(M.BATCH, IMG, seed=seed)
    factory = partial(NystromBlockAttention, num_landmarks=TOKENS, conv_kernel_size=3, scales="lra")
    mdl, l32, l64 = M.calibrate(model_with(factory, seed, depth=1), seed, x, name)
    R.save_in_container(W.path(name, "model.pth"), R.clone_state_dict(mdl), "raw")
    W.add(name, mdl, "deit_tiny", seed, x, l32, l64, "model.pth", "raw",
          extra=dict(convert_options=dict(attn="auto", heads=str(HEADS), landmarks=TOKENS),
                     planned_ops={"SoftmaxAttention": 1}))

    # Efficient Attention on the 4x4 patch grid of a ViT without class token (mean-pooled head, detected by the
    # missing cls_token): 3 heads of 16 key and 32 value channels.
    name, seed = "efficient", 341
    x = R.make_images(M.BATCH, IMG, seed=seed)
    factory = efficient_attention_factory((IMG // PATCH, IMG // PATCH), key_channels=48, value_channels=DIM)
    mdl, l32, l64 = M.calibrate(model_with(factory, seed, PatchTokenViT), seed, x, name)
    R.save_in_container(W.path(name, "model.pth"), R.clone_state_dict(mdl), "raw")
    W.add(name, mdl, "deit_tiny", seed, x, l32, l64, "model.pth", "raw",
          extra=dict(convert_options=dict(attn="auto", heads=str(HEADS)), planned_ops={"KernelizedAttention": DEPTH}))

    # Error cases: a compression trained for fewer tokens than the model has; an attention nobody knows.
    m = model_with(lambda d, h: LinformerLucidrains(d, h, seq_len=TOKENS - 5, k=4), 401)
    R.save_in_container(W.path("linformer_too_short", "model.pth"), R.clone_state_dict(m), "raw")
    W.add_error("linformer_too_short", M.describe(m, "deit_tiny"), "model.pth", "raw",
                "compresses too few tokens: blocks.0.attn.proj_k")
    W.cases[-1]["convert_options"] = dict(heads=str(HEADS))
    sd = R.clone_state_dict(model_with(None, 402))
    sd = OrderedDict((k.replace(".attn.qkv.", ".attn.mystery."), v) for k, v in sd.items())
    R.save_in_container(W.path("unknown_attention", "model.pth"), sd, "raw")
    W.add_error("unknown_attention", M.describe(m, "deit_tiny"), "model.pth", "raw",
                "names the keys it found: blocks.0.attn.mystery.weight")
    W.cases[-1]["convert_options"] = dict(heads=str(HEADS))

    m = model_with(partial(NystromBlockAttention, num_landmarks=4, conv_kernel_size=3), 403)  # auto-detected
    R.save_in_container(W.path("nystrom_no_landmarks", "model.pth"), R.clone_state_dict(m), "raw")
    W.add_error("nystrom_no_landmarks", M.describe(m, "deit_tiny"), "model.pth", "raw",
                "asks for the landmark count: --landmarks")
    W.cases[-1]["convert_options"] = dict(heads=str(HEADS))

    # Nyström options on another attention change nothing, so they are refused, naming the attention found
    # (the checkpoints of the cases above: the LRA wrapper with attn.E, and a Fastformer).
    for name, ckpt, option in [("landmarks_not_nystrom", "linformer_lra", dict(landmarks=4)),
                               ("nystrom_init_not_nystrom", "fastformer", dict(nystrom_init="per_head"))]:
        W.add_error(name, M.describe(m, "deit_tiny"), "model.pth", "raw",
                    "refuses a Nyström option on another attention, naming it: " + ckpt)
        W.cases[-1].update(checkpoint=f"{ckpt}/model.pth", convert_options=dict(heads=str(HEADS), **option))

    manifest = OrderedDict(version=1, generator="tools/reference/make_vit_attention_cases.py", torch=torch.__version__,
                           mean=list(R.IMAGENET_MEAN), std=list(R.IMAGENET_STD), cases=W.cases)
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=0)
    for row in W.rows:
        print("%-30s max|logit| %.3f  f32-vs-f64 %.2e  min gap %.3f  argmax f32 %s f64 %s" % row)


if __name__ == "__main__":
    main()
