#!/usr/bin/python3
"""ONNX nn.MultiheadAttention fixtures: tiny torchvision VisionTransformers (image 32, patch 8, 2 layers, hidden
48, MLP 96, 5 classes) exported by torch.onnx.export, with PyTorch's logits in float64 and float32, so the test
can check that the exported attention imports, plans to SoftmaxAttention where it computes what the fused op
computes (the importer's normalize_multihead_attention, then the planner's fuse_attention), stays unfused where
it does not, and computes what PyTorch does. Run by ctest (fixture `onnx_mha_cases`):

    /usr/bin/python3 tools/reference/make_onnx_mha_cases.py --out build/fixtures/onnx_mha_cases

Writes DIR/<case>.onnx (dynamic batch), DIR/<case>.input.npy [2,3,32,32], DIR/<case>.logits64.npy,
DIR/<case>.logits32.npy and DIR/manifest.json ({"cases": {name: {"attentions": blocks, "fused": expected
SoftmaxAttention ops}}}).

Cases (about 250 KB each):
  vit_opset17, vit_opset14: 3 heads of width 16 (scale 1/4, a power of two): both blocks fuse;
  mask: block 0 passes a float attn_mask (added to the scores): it stays unfused, block 1 fuses;
  weights: block 1 returns its attention weights (need_weights=True) and adds the weights on the class token to
           its output, a second reader of the softmax: it stays unfused, block 0 fuses;
  heads4: 4 heads of width 12 (q / sqrt(12) before q @ k^T, not a power of two: the importer keeps the Div on q's
          heads, and the fused op takes it as its scale on q, fl(1/sqrt(12)), a last-bit difference per element
          of q): both blocks fuse.
"""
import argparse
import json
import os
import types
import warnings

import numpy as np
import torch
from torchvision.models.vision_transformer import VisionTransformer


def masked_forward(self, input):
    """torchvision's EncoderBlock.forward with an additive attention mask."""
    x = self.ln_1(input)
    x, _ = self.self_attention(x, x, x, attn_mask=self.mask, need_weights=False)
    x = self.dropout(x) + input
    return x + self.mlp(self.ln_2(x))


def weights_forward(self, input):
    """torchvision's EncoderBlock.forward that also reads the attention weights."""
    x = self.ln_1(input)
    x, w = self.self_attention(x, x, x, need_weights=True)
    x = self.dropout(x) + input + w[:, :, :1]
    return x + self.mlp(self.ln_2(x))


def vit(heads):
    return VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=heads, hidden_dim=48,
                             mlp_dim=96, num_classes=5).eval()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(20261126)
    cases = {}
    for name, heads, opset, fused in [("vit_opset17", 3, 17, 2), ("vit_opset14", 3, 14, 2), ("mask", 3, 17, 1),
                                      ("weights", 3, 17, 1), ("heads4", 4, 17, 2)]:
        model = vit(heads)
        with torch.no_grad():  # torchvision zero-initialises the head: random weights, so every logit differs
            model.heads.head.weight.normal_(0, 0.2)
            model.heads.head.bias.normal_(0, 0.1)
        blocks = model.encoder.layers
        if name == "mask":
            blocks[0].mask = torch.randn(17, 17) * 0.5
            blocks[0].forward = types.MethodType(masked_forward, blocks[0])
        if name == "weights":
            blocks[1].forward = types.MethodType(weights_forward, blocks[1])
        x = torch.randn(2, 3, 32, 32)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, x, os.path.join(args.out, f"{name}.onnx"), opset_version=opset,
                              input_names=["input"], output_names=["logits"],
                              dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}}, do_constant_folding=True)
        with torch.no_grad():
            y32 = model(x).numpy()
            if name == "mask":
                blocks[0].mask = blocks[0].mask.double()
            y64 = model.double()(x.double()).numpy()
        np.save(os.path.join(args.out, f"{name}.input.npy"), x.numpy())
        np.save(os.path.join(args.out, f"{name}.logits32.npy"), y32.astype(np.float32))
        np.save(os.path.join(args.out, f"{name}.logits64.npy"), y64)
        cases[name] = {"attentions": len(blocks), "fused": fused}
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump({"cases": cases}, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
